//! The reconciliation job (issue 23, "What to build" 4): a process of its own
//! that runs nightly, lists the card processor's charges, matches them to the
//! ledger's rows by key and books what the ledger lacks (or refunds it, where
//! the app was told the operation failed: `node::reconciler`'s own tests).
//! Each test failed on the core before the job (there was no such node: the
//! status read alone reconciled).

use idem_sim::net::NodeId;
use idem_sim::scenario::{self, Phase};
use idem_sim::timing::RECONCILE_EVERY;
use idem_sim::trace::Happening;
use idem_sim::world::Belief;
use idem_sim::{Command, Config, Millis, Run};

const DAY: Command = Command::AdvanceClock(Millis::hours(25));

fn defended(id: &str, seed: u64) -> Run {
    let s = scenario::by_id(id).unwrap();
    let t = s.defended();
    Run::new(s.clone(), Config::defaults(&s, seed).with_toggles(t))
}

/// The step after which `label` is on its way from `from` to `to`.
fn sent(run: &Run, from: NodeId, to: NodeId, label: &str) -> usize {
    run.find(|h| {
        matches!(h, Happening::Sent { from: f, to: t, label: l, .. }
            if *f == from && *t == to && l.starts_with(label))
    })
    .unwrap_or_else(|| panic!("no {label} {from}->{to}:\n{}", run.text()))
}

/// The job entered `phase` somewhere in the run.
fn job_entered(run: &Run, phase: Phase) -> bool {
    run.find(
        |h| matches!(h, Happening::Phase { node: NodeId::Reconciler, phase: p, .. } if *p == phase),
    )
    .is_some()
}

fn all_hold_at_the_end(r: &Run, what: &str) {
    let end = r.end();
    let broken: Vec<_> = end.invariants.iter().filter(|(_, h)| !**h).collect();
    assert!(broken.is_empty(), "{what}: {broken:?}\n{}", r.text());
}

/// A day passes while the charge is on its way to the processor: the handler's
/// deadline answers 503 and the app, past its own, stops retrying. The job's
/// nightly run is due: it lists the processor's charges, finds this one with
/// no ledger row under its key and books it, before the app asks by the key,
/// which then finds the row. One charge, one row, the app told.
#[test]
fn idempotency_key_a_day_after_the_charge_the_reconciliation_job_books_it() {
    let mut r = defended("idempotency-key", 0);
    assert!(r.scenario.nodes().contains(&NodeId::Reconciler));
    let k = sent(&r, NodeId::Api(0), NodeId::Processor, "charge");
    r.apply_at(k, DAY).unwrap();
    let end = r.end();
    assert!(job_entered(&r, Phase::ListCharges), "{}", r.text());
    assert!(job_entered(&r, Phase::MatchLedger), "{}", r.text());
    // It reads the answer stored under the key (none: no one was told it failed).
    assert!(job_entered(&r, Phase::Lookup), "{}", r.text());
    assert!(!job_entered(&r, Phase::Charge), "{}", r.text());
    assert!(job_entered(&r, Phase::InsertPayment), "{}", r.text());
    assert!(job_entered(&r, Phase::Commit), "{}", r.text());
    assert_eq!(end.processor.charges.len(), 1);
    assert_eq!(end.db.table("payments").unwrap().committed_count(), 1);
    assert!(matches!(end.client.ops[0].belief, Belief::Succeeded(_)));
    all_hold_at_the_end(&r, "a day after the charge");
}

/// With the receipt through the outbox, the job books the receipt with the
/// row, in one transaction, and the relay sends it.
#[test]
fn receipt_email_a_day_after_the_charge_the_job_books_the_row_and_the_receipt() {
    let mut r = defended("receipt-email", 0);
    let k = sent(&r, NodeId::Api(0), NodeId::Processor, "charge");
    r.apply_at(k, DAY).unwrap();
    let end = r.end();
    assert!(job_entered(&r, Phase::Outbox), "{}", r.text());
    assert_eq!(end.db.table("payments").unwrap().committed_count(), 1);
    assert_eq!(end.mail.sent.len(), 1, "{}", r.text());
    all_hold_at_the_end(&r, "a day after the charge, with the outbox");
}

/// The job's timer does not keep a run going: a run without faults ends
/// quiet in seconds, with the job's next run still ahead, never run.
#[test]
fn the_job_does_not_keep_a_quiet_run_going() {
    let r = defended("idempotency-key", 0);
    let end = r.end();
    assert!(end.is_quiet());
    assert!(end.now < RECONCILE_EVERY);
    assert!(!job_entered(&r, Phase::ListCharges));
    assert_eq!(end.pending().count(), 1, "the job's next run");
}

/// Where the scenario's system has no key at the processor, there is no job.
#[test]
fn the_naive_handler_has_no_job() {
    let s = scenario::by_id("naive-post").unwrap();
    assert!(!s.nodes().contains(&NodeId::Reconciler));
    let r = Run::new(s.clone(), Config::defaults(&s, 0));
    assert_eq!(r.end().pending().count(), 0);
}

/// The job is drawn (a node of the topology and a lane of the sequence
/// diagram) in exactly the scenarios whose defended design runs it.
#[test]
fn the_job_is_drawn_where_the_defended_design_runs_it() {
    let drawn: Vec<&str> = scenario::all()
        .iter()
        .filter(|s| s.nodes().contains(&NodeId::Reconciler))
        .map(|s| s.id.as_str())
        .collect();
    let runs = [
        "idempotency-key",
        "concurrent-duplicates",
        "crash-after-charge",
        "transaction-is-not-idempotency",
        "receipt-email",
        "key-scope",
    ];
    assert_eq!(drawn, runs);
}
