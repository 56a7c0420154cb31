//! A stand-in for send_wrapper 0.6: the same API (`SendWrapper::new`, `valid`,
//! `take`, `Deref`, `DerefMut`, `Clone`, `Debug`, and with `futures` `Future` and
//! `Stream`), written for this page.
//!
//! A `SendWrapper<T>` is `Send` and `Sync` whatever `T` is, and may be used only on
//! the thread that made it. The real crate checks that on every use with
//! `std::thread::current()`, which on the page's module is all the code that names a
//! thread: a `Thread` handle the standard library allocates apart from the program's
//! allocator, so with `src/heap.rs` installed it carried a second allocator (dlmalloc)
//! inlined into `thread::current`, 5 KB of the module. The page's module runs on one
//! thread (wasm32-unknown-unknown without atomics): there the check cannot fail and is
//! left out. Everywhere else (the host's tests) it is made as the real crate makes it.

use std::fmt;
use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};

/// The thread a wrapper was made on, where threads exist.
#[cfg(not(all(target_arch = "wasm32", not(target_feature = "atomics"))))]
type Origin = std::thread::ThreadId;

/// On a module of one thread, nothing to remember.
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
type Origin = ();

#[cfg(not(all(target_arch = "wasm32", not(target_feature = "atomics"))))]
fn here() -> Origin {
    std::thread::current().id()
}

#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
fn here() -> Origin {}

/// A value usable only on the thread that wrapped it, movable across threads.
pub struct SendWrapper<T> {
    data: ManuallyDrop<T>,
    origin: Origin,
}

impl<T> SendWrapper<T> {
    /// Wraps `data` on the current thread.
    pub fn new(data: T) -> SendWrapper<T> {
        SendWrapper {
            data: ManuallyDrop::new(data),
            origin: here(),
        }
    }

    /// Whether the current thread is the one that made the wrapper.
    #[allow(clippy::unit_cmp)]
    pub fn valid(&self) -> bool {
        self.origin == here()
    }

    /// The value. Panics on another thread than the wrapper's.
    pub fn take(self) -> T {
        self.check("take");
        let mut this = ManuallyDrop::new(self);
        // SAFETY: `this` is never dropped, so the value is taken out once.
        unsafe { ManuallyDrop::take(&mut this.data) }
    }

    fn check(&self, what: &str) {
        if !self.valid() {
            panic!("SendWrapper: {what} on a thread other than the one that made it");
        }
    }
}

// SAFETY: every access to the value checks the thread (where there are threads).
unsafe impl<T> Send for SendWrapper<T> {}
// SAFETY: as for `Send`.
unsafe impl<T> Sync for SendWrapper<T> {}

impl<T> Deref for SendWrapper<T> {
    type Target = T;

    fn deref(&self) -> &T {
        self.check("deref");
        &self.data
    }
}

impl<T> DerefMut for SendWrapper<T> {
    fn deref_mut(&mut self) -> &mut T {
        self.check("deref_mut");
        &mut self.data
    }
}

impl<T> Drop for SendWrapper<T> {
    /// Drops the value on its own thread. On another thread a value that needs no
    /// drop is let go; one that does is a panic (unless the thread is panicking
    /// already: then it is leaked, as the real crate does).
    fn drop(&mut self) {
        if !std::mem::needs_drop::<T>() || self.valid() {
            // SAFETY: dropped once, here.
            unsafe { ManuallyDrop::drop(&mut self.data) };
        } else if !std::thread::panicking() {
            panic!("SendWrapper: dropped on a thread other than the one that made it");
        }
    }
}

impl<T: fmt::Debug> fmt::Debug for SendWrapper<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SendWrapper")
            .field("data", self.deref())
            .finish()
    }
}

impl<T: Clone> Clone for SendWrapper<T> {
    fn clone(&self) -> Self {
        SendWrapper::new(self.deref().clone())
    }
}

#[cfg(feature = "futures")]
mod futures {
    use super::SendWrapper;
    use std::future::Future;
    use std::ops::Deref;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    impl<F: Future> Future for SendWrapper<F> {
        type Output = F::Output;

        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
            // SAFETY: the wrapper never moves its value (structural pinning).
            unsafe { self.map_unchecked_mut(|w| &mut *w.data) }.poll(cx)
        }
    }

    impl<S: futures_core::Stream> futures_core::Stream for SendWrapper<S> {
        type Item = S::Item;

        fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
            // SAFETY: as for `Future::poll`.
            unsafe { self.map_unchecked_mut(|w| &mut *w.data) }.poll_next(cx)
        }

        fn size_hint(&self) -> (usize, Option<usize>) {
            self.deref().size_hint()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::SendWrapper;
    use std::rc::Rc;
    use std::sync::mpsc;
    use std::thread;

    #[test]
    fn the_value_is_there_on_its_own_thread() {
        let mut w = SendWrapper::new(vec![1, 2]);
        w.push(3);
        assert!(w.valid());
        assert_eq!(*w, vec![1, 2, 3]);
        assert_eq!(w.clone().take(), vec![1, 2, 3]);
    }

    #[test]
    fn another_thread_may_hold_it_but_not_read_it() {
        let w = SendWrapper::new(Rc::new(7));
        let (tx, rx) = mpsc::channel();
        let t = thread::spawn(move || {
            let valid = w.valid();
            let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| **w)).is_ok();
            // Sent back, to be dropped on its own thread.
            tx.send(w).unwrap();
            (valid, read)
        });
        assert_eq!(t.join().unwrap(), (false, false));
        assert_eq!(*rx.recv().unwrap().take(), 7);
    }
}
