//! Cache hints for the explorer: the one place this crate uses `unsafe`.
//!
//! A large search's frontier is tens of megabytes, so the world it expands
//! next was written thousands of expansions ago and has left the cache:
//! reading it stalled about as long as the work done on it. The frontier is
//! a queue, so the next worlds are known, and a prefetch of them overlaps the
//! wait with the current expansion ([`crate::explore::Search::run`]).
//! Only a hint: nothing the program computes depends on it, and off x86-64 it
//! is nothing at all.

#![allow(unsafe_code)]

/// Hints that the cache line holding `p` will be read soon.
#[inline(always)]
pub(crate) fn line<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 reads and writes nothing the program can observe
    // and cannot fault, whatever the address: any pointer is sound here.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast())
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Hints every cache line of the `size` bytes from `start`.
#[inline(always)]
pub(crate) fn span(start: *const u8, size: usize) {
    // From the line that holds the first byte to the one that holds the last.
    let first = start.wrapping_sub(start as usize % 64);
    let lines = (start as usize % 64 + size).div_ceil(64);
    for i in 0..lines {
        line(first.wrapping_add(64 * i));
    }
}

/// Hints every cache line of `*p`.
#[inline(always)]
pub(crate) fn lines<T>(p: &T) {
    span((p as *const T).cast(), std::mem::size_of::<T>());
}
