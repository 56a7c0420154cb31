//! Every scenario explored from its start with the default bound; prints each
//! broken invariant with its shortest path (asserts nothing):
//!
//!     cargo run --release -p idem-sim --example explore_violations \
//!         [defended|undefended|default] [window-ms losses crashes clock-jumps]
//!
//! Defended by default: with every defence on, each path is a hole in a defence
//! (or in the model). The optional numbers replace the default bound's.

use idem_sim::explore::{describe, explore, Bound};
use idem_sim::{scenario, Config, World};
use std::sync::Arc;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let which = args.first().map_or("defended", String::as_str);
    let num = |i: usize| args.get(i).map(|a| a.parse::<u32>().expect("a number"));
    let d = Bound::default();
    let bound = Bound {
        window: num(1).map_or(d.window, |w| idem_sim::Millis(u64::from(w))),
        max_losses: num(2).unwrap_or(d.max_losses),
        max_crashes: num(3).unwrap_or(d.max_crashes),
        max_clock_jumps: num(4).unwrap_or(d.max_clock_jumps),
        ..d
    };
    println!("toggles: {which}; bound: {bound:?}");
    for s in scenario::all() {
        let toggles = match which {
            "defended" => s.defended(),
            "undefended" => s.undefended(),
            "default" => s.default_toggles(),
            other => panic!("defended, undefended or default, not {other}"),
        };
        let id = s.id;
        let start = World::new(
            Arc::new(s.clone()),
            Config {
                toggles,
                seed: 1,
                random: Default::default(),
            },
        );
        let t = Instant::now();
        let r = explore(&start, &bound);
        println!(
            "\n== {id}: {} states, {} ends, {} outcomes, {:.2} s{}",
            r.unique,
            r.ends,
            r.outcomes.len(),
            t.elapsed().as_secs_f64(),
            if r.truncated { " (truncated)" } else { "" }
        );
        if r.violations.is_empty() {
            println!("   no violation");
        }
        for (inv, path) in &r.violations {
            println!("-- {inv:?}: {} choices", path.len());
            for line in describe(&start, path) {
                println!("   {line}");
            }
        }
    }
}
