//! Benchmark of the explorer (prints figures, asserts nothing about time):
//!
//!     cargo run --release -p idem-sim --example explore_bench
//!
//! For a few scenarios under their defended toggles and the default bound:
//! transitions taken, unique states, quiet ends, elapsed time (best of three
//! runs), and the rates. Native, single thread.
//!
//! Optional arguments, for profiling: a race window in ms that overrides the
//! default bound's, then scenario ids to run instead of the default three.

use idem_sim::explore::{explore, Bound};
use idem_sim::{scenario, Config, World};
use std::sync::Arc;
use std::time::Instant;

/// Each exploration runs this many times; the best time counts.
const REPEAT: usize = 3;

const SCENARIOS: [&str; 3] = [
    "idempotency-key",
    "concurrent-duplicates",
    "crash-after-charge",
];

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
        _ => SCENARIOS.to_vec(),
    };
    println!("bound: {bound:?}");
    println!(
        "{:<24} {:>11} {:>10} {:>7} {:>6} {:>10} {:>13} {:>13}",
        "scenario",
        "transitions",
        "unique",
        "ends",
        "depth",
        "elapsed",
        "transitions/s",
        "unique/s"
    );
    let (mut all_t, mut all_u, mut all_s) = (0, 0, 0.0);
    for id in ids {
        let s = scenario::by_id(id).expect("scenario");
        let config = Config {
            toggles: s.defended(),
            seed: 1,
            random: Default::default(),
        };
        let start = World::new(Arc::new(s), config);
        // Best of a few runs: the machine may be busy with something else.
        let mut secs = f64::MAX;
        let mut report = None;
        for _ in 0..REPEAT {
            let t = Instant::now();
            let r = explore(&start, &bound);
            secs = secs.min(t.elapsed().as_secs_f64());
            report = Some(r);
        }
        let r = report.expect("explored");
        println!(
            "{:<24} {:>11} {:>10} {:>7} {:>6} {:>8.3} s {:>13.0} {:>13.0}{}",
            id,
            r.states,
            r.unique,
            r.ends,
            r.depth,
            secs,
            r.states as f64 / secs,
            r.unique as f64 / secs,
            if r.truncated { "  (truncated)" } else { "" }
        );
        all_t += r.states;
        all_u += r.unique;
        all_s += secs;
    }
    println!(
        "{:<24} {:>11} {:>10} {:>7} {:>6} {:>8.3} s {:>13.0} {:>13.0}",
        "all",
        all_t,
        all_u,
        "",
        "",
        all_s,
        all_t as f64 / all_s,
        all_u as f64 / all_s
    );
}
