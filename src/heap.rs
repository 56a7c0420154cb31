//! The module's memory allocator: size classes and free lists, in place of the
//! standard library's dlmalloc (about 8 KB of the module's code for a general-purpose
//! allocator; this one is under 1 KB). The explorer's worker (`worker/`) has it too.
//!
//! A request is rounded up to a power of two (its size or its alignment, at least
//! 16 bytes). Up to 32 KB, blocks of one size come from 64 KB pages, each aligned to
//! its size, and a freed block goes to its size's free list, which the next request
//! of that size takes first. Larger requests take a power of two of whole pages, and a freed run of
//! pages serves the next request for as many pages. Memory is never given back to the
//! browser (WebAssembly cannot shrink it), as with dlmalloc: a page that does the
//! same things again reuses the same blocks, so its heap stays flat.
//!
//! The page is single-threaded (wasm32-unknown-unknown without atomics), so the
//! allocator's state needs no lock. [`Heap`] takes the memory's growth as a function,
//! so the host tests run it over a plain buffer.

/// Bytes of a WebAssembly memory page.
pub const PAGE: usize = 64 * 1024;

/// The smallest block: 16 bytes (a free block holds the next one's address).
const MIN_SHIFT: u32 = 4;

/// Size classes 16 B, 32 B, … 32 KB; larger requests take whole pages.
const CLASSES: usize = 12;

/// The largest block a class gives.
const MAX_SMALL: usize = 1 << (MIN_SHIFT as usize + CLASSES - 1);

/// The allocator's state. Addresses are plain `usize` (0 is none); blocks are written
/// and read only through the pointers the caller's memory gives.
pub struct Heap {
    /// The first free block of each class (its first word holds the next one).
    free: [usize; CLASSES],
    /// Free runs of pages: the first, each holding `[next run, its page count]`.
    runs: usize,
    /// The part of the current small-block page not handed out yet.
    top: usize,
    end: usize,
}

impl Heap {
    pub const fn new() -> Heap {
        Heap {
            free: [0; CLASSES],
            runs: 0,
            top: 0,
            end: 0,
        }
    }

    /// The size a request is given: a power of two of at least 16 bytes.
    fn rounded(size: usize, align: usize) -> usize {
        size.max(align).max(1 << MIN_SHIFT).next_power_of_two()
    }

    fn class(rounded: usize) -> usize {
        (rounded.trailing_zeros() - MIN_SHIFT) as usize
    }

    fn pages(size: usize) -> usize {
        size.div_ceil(PAGE)
    }

    /// A block of at least `size` bytes aligned to `align`, or 0 when the memory cannot
    /// grow. `grow(n)` adds `n` pages and answers the address of the first, or `None`.
    ///
    /// # Safety
    /// Every address this heap handed out and `grow` answered must be valid memory of
    /// the caller, used only through this heap.
    pub unsafe fn alloc(
        &mut self,
        size: usize,
        align: usize,
        grow: impl Fn(usize) -> Option<usize>,
    ) -> usize {
        let s = Heap::rounded(size, align);
        if s > MAX_SMALL {
            // Alignment beyond a page is never asked for by this program; refuse it.
            return if align > PAGE {
                0
            } else {
                self.alloc_pages(Heap::pages(s), grow)
            };
        }
        let c = Heap::class(s);
        let head = self.free[c];
        if head != 0 {
            self.free[c] = *(head as *const usize);
            return head;
        }
        // Pages are aligned to 64 KB, so a block aligned within its page is aligned.
        let mut at = (self.top + s - 1) & !(s - 1);
        if self.top == 0 || at + s > self.end {
            let Some(page) = self.alloc_page(&grow) else {
                return 0;
            };
            self.end = page + PAGE;
            at = page;
        }
        self.top = at + s;
        at
    }

    fn alloc_page(&mut self, grow: &impl Fn(usize) -> Option<usize>) -> Option<usize> {
        // SAFETY: as `alloc`'s.
        match unsafe { self.alloc_pages(1, grow) } {
            0 => None,
            p => Some(p),
        }
    }

    /// `n` pages: a free run of exactly `n` pages, else the memory's growth. Runs are
    /// never split nor merged, so a page that does the same work again finds the
    /// same runs free (a first fit that split runs grew the heap on every round).
    unsafe fn alloc_pages(&mut self, n: usize, grow: impl Fn(usize) -> Option<usize>) -> usize {
        let mut link: *mut usize = &mut self.runs;
        while *link != 0 {
            let run = *link as *mut usize;
            if *run.add(1) == n {
                *link = *run;
                return run as usize;
            }
            link = run;
        }
        grow(n).unwrap_or(0)
    }

    /// Gives back a block that `alloc` handed out for the same `size` and `align`.
    ///
    /// # Safety
    /// As `alloc`'s, and `at` was handed out for this size and alignment and not freed since.
    pub unsafe fn free(&mut self, at: usize, size: usize, align: usize) {
        let s = Heap::rounded(size, align);
        if s > MAX_SMALL {
            let run = at as *mut usize;
            *run = self.runs;
            *run.add(1) = Heap::pages(s);
            self.runs = at;
        } else {
            let c = Heap::class(s);
            *(at as *mut usize) = self.free[c];
            self.free[c] = at;
        }
    }

    /// Whether a block handed out for `old` bytes already holds `new` (same alignment).
    pub fn fits(old: usize, new: usize, align: usize) -> bool {
        let (a, b) = (Heap::rounded(old, align), Heap::rounded(new, align));
        a == b || (a > MAX_SMALL && b > MAX_SMALL && Heap::pages(a) == Heap::pages(b))
    }
}

impl Default for Heap {
    fn default() -> Heap {
        Heap::new()
    }
}

#[cfg(target_arch = "wasm32")]
mod global {
    use super::{Heap, PAGE};
    use std::alloc::{GlobalAlloc, Layout};
    use std::cell::UnsafeCell;

    /// The module's allocator (see the module's docs).
    pub struct Classes(UnsafeCell<Heap>);

    // SAFETY: the module runs on one thread (no atomics, no shared memory).
    unsafe impl Sync for Classes {}

    fn grow(pages: usize) -> Option<usize> {
        match core::arch::wasm32::memory_grow(0, pages) {
            usize::MAX => None,
            first => Some(first * PAGE),
        }
    }

    // Never inlined: inlined, each caller of the allocator took a copy (std's
    // `thread::current` grew from 0.3 to 3.8 KB).
    unsafe impl GlobalAlloc for Classes {
        #[inline(never)]
        unsafe fn alloc(&self, l: Layout) -> *mut u8 {
            (*self.0.get()).alloc(l.size(), l.align(), grow) as *mut u8
        }

        #[inline(never)]
        unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
            (*self.0.get()).free(p as usize, l.size(), l.align())
        }

        #[inline(never)]
        unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
            if Heap::fits(l.size(), new, l.align()) {
                return p;
            }
            let q = self.alloc(Layout::from_size_align_unchecked(new, l.align()));
            if !q.is_null() {
                core::ptr::copy_nonoverlapping(p, q, l.size().min(new));
                self.dealloc(p, l);
            }
            q
        }
    }

    #[global_allocator]
    static ALLOC: Classes = Classes(UnsafeCell::new(Heap::new()));
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A memory of `pages` pages that grows page by page, as WebAssembly's does.
    struct Memory {
        buf: Vec<u8>,
        used: Cell<usize>,
    }

    impl Memory {
        fn new(pages: usize) -> Memory {
            // One page more, so the first page can start 64 KB-aligned.
            Memory {
                buf: vec![0; (pages + 1) * PAGE],
                used: Cell::new(0),
            }
        }

        fn base(&self) -> usize {
            (self.buf.as_ptr() as usize).next_multiple_of(PAGE)
        }

        fn grow(&self) -> impl Fn(usize) -> Option<usize> + '_ {
            move |n| {
                let first = self.used.get();
                (self.base() + (first + n) * PAGE <= self.buf.as_ptr() as usize + self.buf.len())
                    .then(|| {
                        self.used.set(first + n);
                        self.base() + first * PAGE
                    })
            }
        }
    }

    #[test]
    fn blocks_are_aligned_and_never_overlap() {
        let mem = Memory::new(64);
        let mut heap = Heap::new();
        let mut blocks: Vec<(usize, usize)> = Vec::new();
        for (i, size) in [
            1, 7, 16, 17, 100, 1000, 4096, 32768, 32769, 70_000, 3, 200_000,
        ]
        .into_iter()
        .enumerate()
        {
            let align = [1, 4, 8, 16, 64][i % 5];
            let at = unsafe { heap.alloc(size, align, mem.grow()) };
            assert_ne!(at, 0, "{size} bytes");
            assert_eq!(at % align, 0, "{size} bytes aligned to {align}");
            for &(b, n) in &blocks {
                assert!(
                    at + size <= b || b + n <= at,
                    "{size} bytes at {at} overlap {b}+{n}"
                );
            }
            blocks.push((at, size));
        }
    }

    #[test]
    fn a_freed_block_serves_the_next_request_of_its_size() {
        let mem = Memory::new(8);
        let mut heap = Heap::new();
        let a = unsafe { heap.alloc(24, 8, mem.grow()) };
        let b = unsafe { heap.alloc(24, 8, mem.grow()) };
        unsafe { heap.free(a, 24, 8) };
        assert_eq!(unsafe { heap.alloc(30, 8, mem.grow()) }, a);
        assert_ne!(unsafe { heap.alloc(30, 8, mem.grow()) }, b);
        // Pages: a freed run serves the next request for as many pages, not another.
        let big = unsafe { heap.alloc(3 * PAGE, 8, mem.grow()) };
        unsafe { heap.free(big, 3 * PAGE, 8) };
        assert_ne!(unsafe { heap.alloc(PAGE + 1, 8, mem.grow()) }, big);
        assert_eq!(unsafe { heap.alloc(2 * PAGE + 1, 8, mem.grow()) }, big);
    }

    #[test]
    fn the_same_work_again_takes_no_more_memory() {
        let mem = Memory::new(512);
        let mut heap = Heap::new();
        let work = |heap: &mut Heap| {
            let mut live = Vec::new();
            for i in 0..1000usize {
                // Mostly small blocks, every 40th one to three pages.
                let size = match i % 40 {
                    0 => PAGE * (1 + i % 3) - 8,
                    _ => 1 + (i * 7919) % 3000,
                };
                let at = unsafe { heap.alloc(size, 8, mem.grow()) };
                assert_ne!(at, 0, "{size} bytes");
                live.push((at, size));
                if i % 3 == 0 {
                    let (at, n) = live.swap_remove(i % live.len());
                    unsafe { heap.free(at, n, 8) };
                }
            }
            for (at, n) in live {
                unsafe { heap.free(at, n, 8) };
            }
        };
        work(&mut heap);
        let after_one = mem.used.get();
        for _ in 0..5 {
            work(&mut heap);
        }
        assert_eq!(
            mem.used.get(),
            after_one,
            "pages after one round and after six"
        );
    }

    #[test]
    fn memory_that_cannot_grow_answers_no_block() {
        let mem = Memory::new(1);
        let mut heap = Heap::new();
        assert_ne!(unsafe { heap.alloc(PAGE, 8, mem.grow()) }, 0);
        assert_eq!(unsafe { heap.alloc(16, 8, mem.grow()) }, 0);
        assert_eq!(unsafe { heap.alloc(2 * PAGE, 8, mem.grow()) }, 0);
    }

    #[test]
    fn a_block_grows_in_place_while_its_size_class_holds_it() {
        assert!(Heap::fits(17, 32, 8));
        assert!(!Heap::fits(32, 33, 8));
        assert!(Heap::fits(40_000, 65_536, 8));
        assert!(!Heap::fits(65_536, 65_537, 8));
    }
}
