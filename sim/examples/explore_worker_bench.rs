//! The explorer's worker, natively: the same requests the Explore panel would
//! send (`idem_sim::wire`), answered by `idem_sim::answer` on this machine. For
//! `make bench` (`scripts/bench.mjs`), which sends the same words to the worker
//! in Chromium and compares. Prints one JSON object per line:
//!
//!     cargo run --release -p idem-sim --example explore_worker_bench
//!
//! `{"name", "words": [the request], "table", "transitions", "ms"}`: `table`, whether
//! the answer ends with the truth table (the page's last message then); `transitions` is
//! what the whole answer took (the reader's search and every truth-table cell),
//! `ms` the best of three runs. Prints figures; asserts nothing about time.

use idem_sim::answer::{answer, Reply, CHUNK};
use idem_sim::scenario;
use idem_sim::wire::Request;
use std::time::Instant;

/// The panel's search from the start of a scenario's default run (one lost
/// message, one crash), with or without its truth table.
fn request(id: &'static str, table: bool) -> Request {
    let s = scenario::by_id(id).expect("scenario");
    Request {
        scenario: s.id,
        seed: 1,
        toggles: s.default_toggles(),
        retry: s.retry,
        commands: Vec::new(),
        step: 0,
        losses: 1,
        crashes: 1,
        jumps: 0,
        table,
        cmp: None,
    }
}

fn main() {
    let mut cases: Vec<(String, Request)> = Vec::new();
    for id in [
        "idempotency-key",
        "concurrent-duplicates",
        "crash-after-charge",
    ] {
        cases.push((format!("search {id}"), request(id, false)));
    }
    for id in ["idempotency-key", "concurrent-duplicates"] {
        cases.push((format!("search and truth table {id}"), request(id, true)));
    }
    for (name, req) in cases {
        let mut best = f64::MAX;
        let mut searched = 0u64;
        for _ in 0..3 {
            let t = Instant::now();
            answer(&req, CHUNK, &mut |r| {
                // Progress counts the reader's search; the cells are counted below.
                if let Reply::Progress { transitions, .. } = r {
                    searched = u64::from(*transitions);
                }
            });
            best = best.min(t.elapsed().as_secs_f64() * 1000.0);
        }
        let transitions = searched + table_transitions(&req);
        let words: Vec<String> = req.encode().iter().map(|w| w.to_string()).collect();
        println!(
            "{{\"name\":\"{name}\",\"words\":[{}],\"table\":{},\"transitions\":{transitions},\"ms\":{best:.1}}}",
            words.join(","),
            req.table
        );
    }
}

/// The transitions of the truth table's cells (the answer reports cells done, not their transitions).
fn table_transitions(req: &Request) -> u64 {
    if !req.table {
        return 0;
    }
    idem_sim::truth::cells(req.scenario.scenario())
        .iter()
        .map(|c| {
            let (_, _, mut search) = c.search(req.scenario.scenario(), req.seed);
            search.run(usize::MAX);
            search.report().states as u64
        })
        .sum()
}
