//! Prints the trace of a scenario: `cargo run -p idem-sim --example trace -- naive-post [seed] [toggle=on|off …]`.

use idem_sim::scenario::{self, Toggle};
use idem_sim::{Config, Run};

fn main() {
    let mut args = std::env::args().skip(1);
    let id = args.next().unwrap_or_else(|| "naive-post".into());
    let Some(s) = scenario::by_id(&id) else {
        eprintln!(
            "unknown scenario {id}; known: {}",
            scenario::ids().collect::<Vec<_>>().join(", ")
        );
        std::process::exit(2);
    };
    let mut seed = 1;
    let mut toggles = s.default_toggles();
    for a in args {
        if let Some((t, v)) = a.split_once('=') {
            let Some(t) = Toggle::from_id(t) else {
                eprintln!("unknown toggle {t}");
                std::process::exit(2);
            };
            toggles = toggles.with(t, v == "on");
        } else if let Ok(n) = a.parse() {
            seed = n;
        }
    }
    let run = Run::new(
        s,
        Config {
            toggles,
            seed,
            random: Default::default(),
        },
    );
    print!("{}", run.text());
    let end = run.end();
    println!(
        "charges={} total=${} payments={} invariants={:?}",
        end.processor.charges.len(),
        end.processor.total(),
        end.db.table("payments").map_or(0, |t| t.committed_count()),
        end.invariants
    );
    for o in &end.client.ops {
        println!("op {:?}: {:?}", o.spec, o.belief);
    }
}
