//! Two sets of defences side by side (`Run::diverges`): the same scenario, seed
//! and reader's commands under two configurations, the first step where the
//! runs differ, and their outcomes.

use idem_sim::scenario::{self, Toggle, Toggles};
use idem_sim::{Command, Config, Run};

const SEED: u64 = 1;

fn run(id: &str, on: &[Toggle]) -> Run {
    let s = scenario::by_id(id).expect("scenario");
    let toggles = on
        .iter()
        .fold(s.default_toggles(), |acc, t| acc.with(*t, true));
    Run::new(s.clone(), Config::defaults(&s, SEED).with_toggles(toggles))
}

/// `diverges` is symmetric, and the steps before it are the same in both runs.
fn check(a: &Run, b: &Run) -> Option<usize> {
    let k = a.diverges(b);
    assert_eq!(k, b.diverges(a), "symmetric");
    let same = k.map_or(a.len(), |k| k - 1);
    assert_eq!(a.trace[..same], b.trace[..same], "equal before step {k:?}");
    if let Some(k) = k {
        assert_ne!(a.trace.get(k - 1), b.trace.get(k - 1), "step {k} differs");
    }
    k
}

#[test]
fn a_run_and_itself_never_diverge() {
    let a = run("crash-after-charge", &[]);
    assert_eq!(check(&a, &a.clone()), None);
    // The same defences again: the same run.
    let b = a.with_toggles(a.config.toggles).0;
    assert_eq!(check(&a, &b), None);
}

#[test]
fn redis_after_commit_and_key_in_the_transaction_with_the_processor_key_diverge_and_end_apart() {
    // The example: the scenario's key in Redis after the commit, against the
    // key in the ledger's transaction plus the key passed to the card processor.
    let a = run("crash-after-charge", &[]);
    let b = a.with_defences(Toggles::of(&[
        Toggle::SameTransaction,
        Toggle::KeyToProcessor,
    ]));
    let k = check(&a, &b).expect("they differ");
    assert!(k > 1 && k <= a.len().min(b.len()), "step {k}");
    assert_eq!(a.end().processor.charges.len(), 2, "{}", a.text());
    assert_eq!(b.end().processor.charges.len(), 1, "{}", b.text());
    assert!(!a.end().all_hold() && b.end().all_hold());
}

#[test]
fn a_command_makes_the_run_diverge_at_the_step_it_becomes() {
    // The reader's command at step k is step k + 1 of the branch.
    let a = run("idempotency-key", &[]);
    let mut b = a.clone();
    b.apply_at(2, Command::ParallelRetries(2)).expect("applies");
    assert_eq!(check(&a, &b), Some(3));
    // A run that only goes on longer diverges at its first extra step.
    let mut c = a.clone();
    let end = c.len();
    c.apply_at(end, Command::AdvanceClock(idem_sim::Millis::HOUR))
        .expect("applies");
    assert_eq!(check(&a, &c), Some(end + 1));
}

#[test]
fn the_other_side_keeps_the_story_and_the_commands() {
    // The crash moved before the commit (a variant, not a defence) stays on the other
    // side, and so do the reader's commands.
    let mut a = run("crash-after-charge", &[Toggle::CrashBeforeCommit]);
    a.apply_at(1, Command::LoseNextResponse).expect("applies");
    let b = a.with_defences(Toggles::of(&[Toggle::KeyToProcessor]));
    assert_eq!(
        b.config.toggles,
        Toggles::of(&[Toggle::CrashBeforeCommit, Toggle::KeyToProcessor])
    );
    assert_eq!(b.commands(), a.commands());
    assert_eq!(check(&a, &a.with_defences(a.config.toggles)), None);
}

#[test]
fn the_worker_compares_two_sets_of_defences() {
    use idem_sim::answer::{answer, Reply};
    use idem_sim::wire::Request;
    let s = scenario::by_id("crash-after-charge").expect("scenario");
    let both = Toggles::of(&[Toggle::SameTransaction, Toggle::KeyToProcessor]);
    // A comparison asks for no search (whatever the bounds and the table say).
    let req = Request {
        cmp: Some(both),
        table: true,
        losses: 1,
        crashes: 1,
        jumps: 1,
        step: 0,
        commands: Vec::new(),
        toggles: s.default_toggles(),
        retry: s.retry,
        seed: SEED,
        scenario: s.id,
    };
    let mut replies = Vec::new();
    answer(&req, 1_000, &mut |r| replies.push(r.clone()));
    // One answer, no search: where the runs part and how each ends.
    let [Reply::Compared {
        defences,
        step,
        mine,
        other,
    }] = replies.as_slice()
    else {
        panic!("{replies:?}")
    };
    let a = run("crash-after-charge", &[]);
    assert_eq!(*defences, both);
    assert_eq!(*step, a.diverges(&a.with_defences(both)));
    assert!(step.is_some());
    assert_eq!((mine.charges(), other.charges()), (2, 1));
    assert!(!mine.broken.is_empty() && other.broken.is_empty());
}
