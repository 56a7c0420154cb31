//! Benchmark of the explorer (prints figures, asserts nothing about time):
//!
//!     cargo run --release -p idem-sim --example explore_bench
//!
//! Every scenario under its defended toggles and the default bound (one lost
//! message and one crash): transitions taken, unique states, quiet ends,
//! the time the search thread spent on a CPU (best of three runs; on Linux,
//! so a machine shared with other work slows the wall clock but hardly this
//! figure; elsewhere the wall time) and the wall time, the rate per
//! CPU second, and the peak heap the search took per unique state, each beside
//! its target, and the widest frontier (the most states waiting at once:
//! their worlds are most of that heap). Native, single thread. The load average is printed before and
//! after: a busy machine still costs some speed (caches are shared). So is a
//! machine reference (`reference`): the speed of a fixed workload, which moves
//! when the machine's own speed does.
//!
//! Optional arguments, for profiling: a race window in ms that overrides the
//! default bound's, then scenario ids to run instead of every scenario.

use idem_sim::explore::{Bound, Search};
use idem_sim::{scenario, Config, World};
use std::sync::Arc;
use std::time::Instant;

/// Each exploration runs this many times; the best time counts.
const REPEAT: usize = 3;
/// The targets of issue 28.
const TARGET_RATE: f64 = 1_000_000.0;
const TARGET_BYTES: f64 = 100.0;

#[path = "../tests/common/counting.rs"]
mod counting;

#[global_allocator]
static ALLOC: counting::Counting = counting::Counting;

fn main() {
    if cfg!(debug_assertions) {
        println!("(debug build: run with --release for meaningful figures)");
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut bound = Bound::default();
    if let Some(w) = args.first() {
        bound.window = idem_sim::Millis(w.parse().expect("a window in ms"));
    }
    let ids: Vec<&str> = match args.get(1..) {
        Some(more) if !more.is_empty() => more.iter().map(String::as_str).collect(),
        _ => scenario::ids().collect(),
    };
    println!("bound: {bound:?}");
    println!("load average before: {}", load());
    println!("machine reference before: {}", reference());
    println!(
        "targets: at least {TARGET_RATE:.0} transitions/s in every scenario, \
         at most {TARGET_BYTES:.0} bytes of peak heap per unique state"
    );
    println!(
        "{:<32} {:>11} {:>8} {:>6} {:>6} {:>9} {:>9} {:>13} {:>11} {:>7}",
        "scenario",
        "transitions",
        "unique",
        "ends",
        "depth",
        "cpu",
        "wall",
        "transitions/s",
        "bytes/state",
        "widest"
    );
    let (mut all_t, mut all_u, mut all_s, mut all_w) = (0, 0, 0.0, 0.0);
    let (mut slowest, mut heaviest) = (f64::MAX, 0.0f64);
    for id in ids {
        let s = scenario::by_id(id).unwrap_or_else(|| panic!("no scenario {id}"));
        let config = Config::defaults(&s, 1).with_toggles(s.defended());
        let start = World::new(Arc::new(s), config);
        // Best of a few runs: the machine may be busy with something else.
        let (mut secs, mut wall) = (f64::MAX, f64::MAX);
        let mut report = None;
        let (mut peak, mut widest) = (0, 0);
        for _ in 0..REPEAT {
            let (t, cpu) = (Instant::now(), cpu_secs());
            let (p, (r, w)) = counting::peak_of(|| {
                let mut search = Search::new(&start, bound);
                search.run(usize::MAX);
                let widest = search.widest();
                (search.into_report(), widest)
            });
            wall = wall.min(t.elapsed().as_secs_f64());
            secs = secs.min(cpu_secs().map_or(wall, |c| c - cpu.unwrap_or(0.0)));
            (peak, widest) = (p, w);
            report = Some(r);
        }
        let r = report.expect("explored");
        let rate = r.states as f64 / secs;
        let bytes = peak as f64 / r.unique as f64;
        slowest = slowest.min(rate);
        heaviest = heaviest.max(bytes);
        println!(
            "{:<32} {:>11} {:>8} {:>6} {:>6} {:>7.3} s {:>7.3} s {:>13.0} {:>11.0} {:>7}{}",
            id,
            r.states,
            r.unique,
            r.ends,
            r.depth,
            secs,
            wall,
            rate,
            bytes,
            widest,
            if r.truncated { "  (truncated)" } else { "" }
        );
        all_t += r.states;
        all_u += r.unique;
        all_s += secs;
        all_w += wall;
    }
    println!(
        "{:<32} {:>11} {:>8} {:>6} {:>6} {:>7.3} s {:>7.3} s {:>13.0}",
        "all",
        all_t,
        all_u,
        "",
        "",
        all_s,
        all_w,
        all_t as f64 / all_s
    );
    println!("machine reference after: {}", reference());
    println!(
        "load average after: {}\nslowest scenario {slowest:.0} transitions/s (target {TARGET_RATE:.0}: {}); \
         heaviest {heaviest:.0} bytes/state (target {TARGET_BYTES:.0}: {})",
        load(),
        if slowest >= TARGET_RATE {
            "met"
        } else {
            "NOT met"
        },
        if heaviest <= TARGET_BYTES {
            "met"
        } else {
            "NOT met"
        },
    );
}

/// The machine's speed right now: nanoseconds per step of a fixed workload
/// that shares none of the explorer's code (a random walk over 8 MB, each
/// step a multiply and a load that misses the caches as a search's worlds
/// do), best of three, on the search's CPU clock. This machine's CPU has run
/// the same binary from twice to four times as fast from one hour (or
/// minute) to the next at the same load average: compare transitions/s only
/// between runs whose references agree, or alternate two builds in one run.
fn reference() -> String {
    const WORDS: usize = 1 << 20;
    const STEPS: usize = 1 << 22;
    let mut table: Vec<u64> = (0..WORDS as u64)
        .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .collect();
    let mut best = f64::MAX;
    let mut sink = 0u64;
    for _ in 0..3 {
        let (t, cpu) = (Instant::now(), cpu_secs());
        let mut x = 1u64;
        for _ in 0..STEPS {
            let i = (x >> 40) as usize % WORDS;
            x = (x ^ table[i]).wrapping_mul(0xff51_afd7_ed55_8ccd);
            table[i] = x;
        }
        sink ^= x;
        let wall = t.elapsed().as_secs_f64();
        best = best.min(cpu_secs().map_or(wall, |c| c - cpu.unwrap_or(0.0)));
    }
    std::hint::black_box(sink);
    format!("{:.1} ns per step", best * 1e9 / STEPS as f64)
}

/// The time this thread has spent on a CPU, in seconds (64-bit Linux only:
/// the C library's `clock_gettime`, which std links anyway).
#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
fn cpu_secs() -> Option<f64> {
    #[repr(C)]
    struct Timespec {
        sec: i64,
        nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, t: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut t = Timespec { sec: 0, nsec: 0 };
    // SAFETY: `t` is a valid, writable timespec of the platform's layout.
    let ok = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut t) } == 0;
    ok.then(|| t.sec as f64 + t.nsec as f64 / 1e9)
}

#[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
fn cpu_secs() -> Option<f64> {
    None
}

/// The machine's load average over 1, 5 and 15 minutes (Linux only).
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| {
            let v: Vec<&str> = s.split_whitespace().take(3).collect();
            (v.len() == 3).then(|| v.join(" "))
        })
        .unwrap_or_else(|| "unknown".to_string())
}
