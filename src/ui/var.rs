//! [`Var`]: the page's one kind of reactive value. The value lives in a plain cell; a
//! Leptos signal of one type (`u32`, its value unused) tells the effects that read it
//! when it changed. Leptos's signal of a type of its own brought its own copy of the
//! signal's machinery, ~450 B gzip per type (the lab's twelve types; issue 28, item 5).

use leptos::prelude::{Notify, RwSignal, Track};
use std::cell::RefCell;

/// A value the page's effects follow: [`Var::with`] and [`Var::get`] read it and track
/// it (the effect runs again when it changes), `_untracked` reads do not; [`Var::set`]
/// and [`Var::update`] write it and notify the effects that tracked it, every time (a
/// Leptos signal too notifies on every write). `Copy`, as a signal: the page's state
/// lives for the page's life (the cell is never freed).
pub struct Var<T: 'static> {
    value: &'static RefCell<T>,
    changed: RwSignal<u32>,
}

impl<T: 'static> Clone for Var<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: 'static> Copy for Var<T> {}

impl<T: 'static> Var<T> {
    pub fn new(value: T) -> Var<T> {
        Var {
            value: Box::leak(Box::new(RefCell::new(value))),
            changed: RwSignal::new(0),
        }
    }

    /// The running effect runs again when the value changes.
    pub fn track(&self) {
        self.changed.track();
    }

    /// `f` of the value, tracked.
    pub fn with<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        self.track();
        self.with_untracked(f)
    }

    /// `f` of the value, not tracked.
    pub fn with_untracked<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        f(&self.value.borrow())
    }

    /// Changes the value in place, then notifies.
    pub fn update(&self, f: impl FnOnce(&mut T)) {
        f(&mut self.value.borrow_mut());
        self.changed.notify();
    }

    /// Replaces the value, then notifies.
    pub fn set(&self, value: T) {
        // The old value is dropped after the cell's borrow ends.
        let old = self.value.replace(value);
        drop(old);
        self.changed.notify();
    }
}

impl<T: Clone + 'static> Var<T> {
    /// The value, tracked.
    pub fn get(&self) -> T {
        self.with(T::clone)
    }

    /// The value, not tracked.
    pub fn get_untracked(&self) -> T {
        self.with_untracked(T::clone)
    }
}
