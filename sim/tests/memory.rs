//! The explorer's memory, exactly (issue 28): the peak heap of every
//! scenario's default search (one lost message and one crash, the defended
//! switches) stays within 100 bytes per unique state. Alone in its binary:
//! the allocator it counts with sees every thread's allocations.
//! `explore_bench` prints the same figures beside the speed.

#[path = "common/counting.rs"]
mod counting;

use idem_sim::explore::{explore, Bound};
use idem_sim::{scenario, Config, World};
use std::sync::Arc;

#[global_allocator]
static ALLOC: counting::Counting = counting::Counting;

/// Peak heap bytes per unique state a default search may take.
const BUDGET: usize = 100;

#[test]
fn every_default_search_takes_at_most_100_bytes_per_unique_state() {
    let mut figures = Vec::new();
    for id in scenario::ids() {
        let s = scenario::by_id(id).expect("a scenario");
        let config = Config::defaults(&s, 1).with_toggles(s.defended());
        let start = World::new(Arc::new(s), config);
        let (peak, report) = counting::peak_of(|| explore(&start, &Bound::default()));
        figures.push((id, peak, report.unique));
    }
    for (id, peak, unique) in &figures {
        eprintln!(
            "{id:<32} {peak:>9} bytes, {unique:>7} states, {:>5.1} per state",
            *peak as f64 / *unique as f64
        );
    }
    let over: Vec<_> = figures
        .iter()
        .filter(|(_, peak, unique)| *peak > BUDGET * unique)
        .collect();
    assert!(
        over.is_empty(),
        "over {BUDGET} bytes per unique state: {over:?}"
    );
}
