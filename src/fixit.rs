//! "Fix it": the reader switches on some of a scenario's defences, and the core runs
//! the scenario with exactly those to its end (the lab's own run, [`first_break`];
//! [`broken`] on the host): the verdict is what the run shows, never a stored answer. How small the smallest set that holds is comes
//! with the question; [`judge`] finds every smallest set by running every subset (a
//! scenario offers a handful of defences: 2^n runs, 16 for key-scope's four), and the lesson's tests check
//! the question against it.

use idem_sim::scenario::{Scenario, Toggle};
use idem_sim::trace::Happening;
use idem_sim::{Config, Invariant, Run};

/// The first invariant that breaks when `s` runs to its end with exactly the
/// defences in `on` (bugs and variants as by default), and the step it breaks at.
pub fn broken(s: &Scenario, seed: u64, on: &[Toggle]) -> Option<(Invariant, usize)> {
    let toggles = s
        .defences()
        .into_iter()
        .fold(s.default_toggles(), |acc, t| acc.with(t, on.contains(&t)));
    first_break(&Run::new(
        s.clone(),
        Config::defaults(s, seed).with_toggles(toggles),
    ))
}

/// The first invariant that breaks in `run`, and the step it breaks at. The lab
/// judges a fix-it answer by this on its own run, which already has the reader's
/// switches.
pub fn first_break(run: &Run) -> Option<(Invariant, usize)> {
    run.trace.iter().find_map(|r| {
        r.happenings.iter().find_map(|h| match h {
            Happening::Invariant { inv, holds: false } => Some((*inv, r.index)),
            _ => None,
        })
    })
}

/// What the core says about a choice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// The first invariant the choice lets break, and its step; `None`: all hold.
    pub broken: Option<(Invariant, usize)>,
    /// Every smallest set of defences under which all invariants hold.
    pub smallest: Vec<Vec<Toggle>>,
}

impl Verdict {
    /// The choice holds, and no smaller set does.
    pub fn right(&self, choice: &[Toggle]) -> bool {
        self.broken.is_none()
            && self
                .smallest
                .first()
                .is_some_and(|m| m.len() == choice.len())
    }
}

/// Runs the reader's choice, and every subset of the scenario's defences.
pub fn judge(s: &Scenario, seed: u64, choice: &[Toggle]) -> Verdict {
    let all = s.defences();
    let mut smallest: Vec<Vec<Toggle>> = Vec::new();
    for mask in 0..1u32 << all.len() {
        let set: Vec<Toggle> = (0..all.len())
            .filter(|i| mask & (1 << i) != 0)
            .map(|i| all[i])
            .collect();
        if smallest.first().is_some_and(|m| m.len() < set.len()) {
            continue;
        }
        if broken(s, seed, &set).is_none() {
            if smallest.first().is_some_and(|m| m.len() > set.len()) {
                smallest.clear();
            }
            smallest.push(set);
        }
    }
    Verdict {
        broken: broken(s, seed, choice),
        smallest,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use idem_sim::scenario;

    fn by_id(id: &str) -> Scenario {
        scenario::by_id(id).unwrap()
    }

    #[test]
    fn a_choice_is_judged_by_its_run() {
        let s = by_id("crash-after-charge");
        let v = judge(&s, 1, &[]);
        assert_eq!(v.broken.map(|b| b.0), Some(Invariant::AtMostOnceCharge));
        assert!(!v.right(&[]));
        // The key passed to the processor saves the card, not the ledger.
        let ktp = [Toggle::KeyToProcessor];
        assert_eq!(
            broken(&s, 1, &ktp).map(|b| b.0),
            Some(Invariant::LedgerMatchesCharges)
        );
        let both = [Toggle::SameTransaction, Toggle::KeyToProcessor];
        let v = judge(&s, 1, &both);
        assert_eq!(v.broken, None);
        assert!(!v.right(&both), "holds, but one defence is enough");
        assert_eq!(v.smallest, vec![vec![Toggle::SameTransaction]]);
        assert!(v.right(&[Toggle::SameTransaction]));
    }

    #[test]
    fn only_defences_are_offered() {
        let s = by_id("crash-after-charge");
        assert_eq!(
            s.defences(),
            [Toggle::SameTransaction, Toggle::KeyToProcessor]
        );
        assert!(by_id("naive-post").defences().is_empty());
    }
}
