//! The system allocator, counting the bytes in use and their peak: the
//! explorer's memory, measured exactly (`tests/memory.rs`,
//! `examples/explore_bench.rs`). A binary that includes this module counts
//! every allocation of every thread.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

pub struct Counting;

static IN_USE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call goes to the system allocator as it came; the counters
// only add and subtract the sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = System.alloc(l);
        if !p.is_null() {
            let now = IN_USE.fetch_add(l.size(), Relaxed) + l.size();
            PEAK.fetch_max(now, Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l);
        IN_USE.fetch_sub(l.size(), Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = System.realloc(p, l, new);
        if !q.is_null() {
            let now = IN_USE.fetch_add(new, Relaxed) + new - l.size();
            IN_USE.fetch_sub(l.size(), Relaxed);
            PEAK.fetch_max(now, Relaxed);
        }
        q
    }
}

/// The peak heap `f` took beyond what was in use when it started, and its result.
pub fn peak_of<R>(f: impl FnOnce() -> R) -> (usize, R) {
    let before = IN_USE.load(Relaxed);
    PEAK.store(before, Relaxed);
    let r = f();
    (PEAK.load(Relaxed) - before, r)
}
