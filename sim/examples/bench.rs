//! Benchmark of the simulation core (prints figures, asserts nothing about time):
//!
//!     cargo run --release -p idem-sim --example bench
//!
//! - events per second over long runs (about 10,000 steps, the MAX_STEPS cap);
//! - the cost of restoring an arbitrary step (`Run::state_at`): median, p99 and
//!   max over many random steps, in microseconds;
//! - the cost of a command at an arbitrary step (`Run::apply_at`: restore, apply,
//!   discard the old future, compute the new one).
//!
//! Two long runs:
//! - A: idempotency-key, then `ParallelRetries(10)` applied at the end over and
//!   over (a reader hammering the "parallel retries" button) until ~10,000 steps;
//! - B: idempotency-key with 80 operations of 10 parallel copies each, run by
//!   `Run::new` up to MAX_STEPS: a world that keeps growing (keys, rows, charges).

use idem_sim::rng::Rng;
use idem_sim::run::{CHECKPOINT_EVERY, MAX_STEPS};
use idem_sim::scenario::{self, Op, OpSpec, Scenario};
use idem_sim::trace::Cause;
use idem_sim::{Command, Config, Run, World};
use std::hint::black_box;
use std::time::{Duration, Instant};

fn config(s: &Scenario) -> Config {
    Config {
        toggles: s.default_toggles(),
        seed: 1,
        random: Default::default(),
    }
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// Median, 99th percentile and max of `samples`, in µs.
fn summary(mut samples: Vec<Duration>) -> String {
    samples.sort();
    let n = samples.len();
    format!(
        "median {:>8.1} µs   p99 {:>8.1} µs   max {:>8.1} µs   ({n} samples)",
        micros(samples[n / 2]),
        micros(samples[(n * 99 / 100).min(n - 1)]),
        micros(samples[n - 1]),
    )
}

/// Replays `run`'s trace on a fresh world: pure stepping, no checkpoints.
fn replay(run: &Run) -> World {
    let mut w = World::new(run.scenario.clone(), run.config);
    for rec in &run.trace {
        match &rec.cause {
            Cause::Event => {
                black_box(w.step());
            }
            Cause::Command(c) => {
                w.fire_stale();
                black_box(w.apply(c).expect("it applied once"));
            }
        }
    }
    w
}

fn long_run_a() -> (Run, Duration) {
    let s = scenario::by_id("idempotency-key").expect("scenario");
    let t = Instant::now();
    let mut run = Run::new(s.clone(), config(&s));
    while run.len() < MAX_STEPS - 200 {
        run.apply_at(run.len(), Command::ParallelRetries(10))
            .expect("parallel retries apply");
    }
    (run, t.elapsed())
}

fn long_run_b() -> (Run, Duration) {
    let base = scenario::by_id("idempotency-key").expect("scenario");
    let op = Op {
        copies: 10,
        ..Op::new(OpSpec::Charge(100))
    };
    let s = Scenario {
        ops: vec![op; 80].leak(),
        ..base
    };
    let t = Instant::now();
    let run = Run::new(s.clone(), config(&s));
    (run, t.elapsed())
}

fn report(name: &str, run: &Run, built: Duration, how: &str) {
    let end = run.end();
    println!("\n== {name}: {} steps ({how})", run.len());
    println!(
        "   end: virtual time {}, {} client lanes, {} charges, {} Redis keys, {} ledger rows, {} checkpoints",
        end.now,
        end.client.ops.iter().map(|o| o.lanes.len()).sum::<usize>(),
        end.processor.charges.len(),
        end.redis.keys.len(),
        end.db.table("payments").map_or(0, |t| t.committed_count()),
        run.len() / CHECKPOINT_EVERY + 1,
    );
    println!(
        "   built in {:.2} ms: {:.0} steps/s (stepping, checkpointing, tracing)",
        built.as_secs_f64() * 1e3,
        run.len() as f64 / built.as_secs_f64()
    );

    // Pure stepping: replay the trace on a fresh world, a few times, best of.
    let mut best = Duration::MAX;
    for _ in 0..5 {
        let t = Instant::now();
        let w = replay(run);
        best = best.min(t.elapsed());
        assert!(w == *end, "the replay ends where the run does");
    }
    println!(
        "   replay of the whole trace: {:.2} ms, {:.0} events/s",
        best.as_secs_f64() * 1e3,
        run.len() as f64 / best.as_secs_f64()
    );

    // Restoring an arbitrary step.
    let mut rng = Rng::new(42);
    let n = run.len();
    let mut samples = Vec::new();
    for _ in 0..5_000 {
        let k = rng.below(n as u64 + 1) as usize;
        let t = Instant::now();
        let w = run.state_at(k);
        samples.push(t.elapsed());
        black_box(w);
    }
    println!("   state_at(random k):       {}", summary(samples));
    // The worst case by construction: one step before a checkpoint (31 steps of replay).
    let mut samples = Vec::new();
    for _ in 0..2_000 {
        let j = rng.below((n / CHECKPOINT_EVERY) as u64) as usize;
        let k = j * CHECKPOINT_EVERY + CHECKPOINT_EVERY - 1;
        let t = Instant::now();
        let w = run.state_at(k);
        samples.push(t.elapsed());
        black_box(w);
    }
    println!("   state_at(checkpoint − 1): {}", summary(samples));

    // A command at an arbitrary step: restore, apply, drop the old future, compute the new one.
    let mut samples = Vec::new();
    let mut new_len = 0;
    for _ in 0..200 {
        let k = rng.below(n as u64 + 1) as usize;
        let mut branch = run.clone();
        let t = Instant::now();
        let r = branch.apply_at(k, Command::ParallelRetries(2));
        samples.push(t.elapsed());
        r.expect("parallel retries apply");
        new_len += branch.len() - k;
    }
    println!(
        "   apply_at(random k, ParallelRetries(2)): {}; new futures of {} steps on average",
        summary(samples),
        new_len / 200
    );
    let mut samples = Vec::new();
    for _ in 0..200 {
        let k = n - rng.below(50) as usize;
        let mut branch = run.clone();
        let t = Instant::now();
        let r = branch.apply_at(k, Command::AdvanceClock(idem_sim::Millis::SECOND));
        samples.push(t.elapsed());
        r.expect("the clock moves");
    }
    println!(
        "   apply_at(near the end, AdvanceClock(1 s)): {}",
        summary(samples)
    );
    let t = Instant::now();
    let copies = 20;
    for _ in 0..copies {
        black_box(run.clone());
    }
    println!(
        "   Run::clone: {:.1} µs",
        micros(t.elapsed()) / f64::from(copies)
    );
}

fn main() {
    if cfg!(debug_assertions) {
        println!("(debug build: run with --release for meaningful figures)");
    }
    let (a, built_a) = long_run_a();
    report(
        "A: idempotency-key + ParallelRetries(10) at the end, repeated",
        &a,
        built_a,
        "Run::new, then apply_at(len) until ~10,000",
    );
    let (b, built_b) = long_run_b();
    report(
        "B: idempotency-key, 80 operations × 10 parallel copies",
        &b,
        built_b,
        "one Run::new, capped at MAX_STEPS",
    );
}
