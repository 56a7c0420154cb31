//! [`Var`]: the page's one kind of reactive value. The value lives in a plain cell; a
//! Leptos `ArcTrigger` (a list of subscribers, no value) tells the effects that read it
//! when it changed. Leptos's signal of a type of its own brought its own copy of the
//! signal's machinery, ~450 B gzip per type (the lab's eleven types), and a signal of one
//! type (`u32`, its value unused) the arena's lookup (issue 28, item 5).

use leptos::prelude::{ArcTrigger, Notify, Track};
use std::cell::RefCell;

/// A value the page's effects follow: [`Var::with`] and [`Var::get`] read it and track
/// it (the effect runs again when it changes), `_untracked` reads do not; [`Var::set`]
/// and [`Var::update`] write it and notify the effects that tracked it, every time (a
/// Leptos signal too notifies on every write). `Copy`, as a signal: the page's state
/// lives for the page's life (the cell is never freed).
pub struct Var<T: 'static> {
    /// The value, and the trigger that says it changed.
    cell: &'static (RefCell<T>, ArcTrigger),
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
            cell: Box::leak(Box::new((RefCell::new(value), ArcTrigger::new()))),
        }
    }

    /// The running effect runs again when the value changes.
    pub fn track(&self) {
        self.cell.1.track();
    }

    /// `f` of the value, tracked.
    pub fn with<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        self.track();
        self.with_untracked(f)
    }

    /// `f` of the value, not tracked.
    pub fn with_untracked<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        f(&self.cell.0.borrow())
    }

    /// Changes the value in place, then notifies.
    pub fn update(&self, f: impl FnOnce(&mut T)) {
        f(&mut self.cell.0.borrow_mut());
        self.cell.1.notify();
    }

    /// Replaces the value, then notifies.
    pub fn set(&self, value: T) {
        // The old value is dropped after the cell's borrow ends.
        let old = self.cell.0.replace(value);
        drop(old);
        self.cell.1.notify();
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
