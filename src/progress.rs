//! The reader's progress: scenarios watched to the end, questions answered, and
//! whether the lab pauses to ask. Kept in `localStorage` as one short line of text;
//! this module only turns it into data and back (tested on the host).
//!
//! Format: `w=<id>,<id>;a=<id>:<1|0>,…;p=<1|0>` (`1` = answered right / predict on).
//! Anything unreadable is ignored, so a broken or foreign value starts afresh.

use idem_sim::ScenarioId;

/// The `localStorage` key.
pub const STORAGE_KEY: &str = "idempotency-lab:progress";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Scenarios watched to the end, in the catalogue's order.
    pub watched: Vec<ScenarioId>,
    /// Scenarios whose question was answered, with whether the answer was right.
    pub answered: Vec<(ScenarioId, bool)>,
    /// Pause at the decisive moment to ask the scenario's question.
    pub predict: bool,
}

impl Default for Progress {
    fn default() -> Progress {
        Progress {
            watched: Vec::new(),
            answered: Vec::new(),
            predict: true,
        }
    }
}

impl Progress {
    pub fn parse(s: &str) -> Progress {
        let mut p = Progress::default();
        for field in s.split(';') {
            let Some((k, v)) = field.split_once('=') else {
                continue;
            };
            let items = v.split(',').filter(|i| !i.is_empty());
            match k {
                "w" => items
                    .filter_map(ScenarioId::parse)
                    .for_each(|id| p.watch(id)),
                "a" => {
                    for item in items {
                        if let Some((id, right)) = item.split_once(':') {
                            if let Some(id) = ScenarioId::parse(id) {
                                p.answer(id, right == "1");
                            }
                        }
                    }
                }
                "p" => p.predict = v != "0",
                _ => {}
            }
        }
        p
    }

    pub fn to_text(&self) -> String {
        let answered: Vec<String> = self
            .answered
            .iter()
            .map(|(id, right)| format!("{id}:{}", u8::from(*right)))
            .collect();
        let watched: Vec<&str> = self.watched.iter().map(|id| id.as_str()).collect();
        format!(
            "w={};a={};p={}",
            watched.join(","),
            answered.join(","),
            u8::from(self.predict)
        )
    }

    pub fn watch(&mut self, id: ScenarioId) {
        if let Err(at) = self.watched.binary_search(&id) {
            self.watched.insert(at, id);
        }
    }

    /// Records an answer; the first answer to a question is the one kept.
    pub fn answer(&mut self, id: ScenarioId, right: bool) {
        if self.answer_of(id).is_none() {
            self.answered.push((id, right));
        }
    }

    pub fn answer_of(&self, id: ScenarioId) -> Option<bool> {
        self.answered
            .iter()
            .find(|(a, _)| *a == id)
            .map(|(_, r)| *r)
    }

    pub fn has_watched(&self, id: ScenarioId) -> bool {
        self.watched.contains(&id)
    }

    /// Questions answered right (the first answer to each is the one kept).
    pub fn right(&self) -> usize {
        self.answered.iter().filter(|(_, r)| *r).count()
    }

    /// Every scenario watched to the end and every question answered (one per
    /// scenario), whether right or not: the lesson is done.
    pub fn complete(&self) -> bool {
        self.watched.len() == ScenarioId::COUNT && self.answered.len() == ScenarioId::COUNT
    }

    /// Progress cleared; the predict setting is kept.
    pub fn cleared(&self) -> Progress {
        Progress {
            predict: self.predict,
            ..Progress::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ScenarioId::{NaivePost, TtlExpiry};

    #[test]
    fn round_trips() {
        let mut p = Progress::default();
        p.watch(TtlExpiry);
        p.watch(NaivePost);
        p.watch(NaivePost);
        p.answer(NaivePost, true);
        p.answer(NaivePost, false);
        p.answer(TtlExpiry, false);
        p.predict = false;
        assert_eq!(p.watched, [NaivePost, TtlExpiry]);
        assert_eq!(p.answer_of(NaivePost), Some(true));
        let text = p.to_text();
        assert_eq!(
            text,
            "w=naive-post,ttl-expiry;a=naive-post:1,ttl-expiry:0;p=0"
        );
        assert_eq!(Progress::parse(&text), p);
    }

    #[test]
    fn garbage_starts_afresh() {
        for s in ["", "{}", "w=nope,;a=naive-post;p", "a=zzz:1;;==;w"] {
            assert_eq!(Progress::parse(s), Progress::default(), "{s}");
        }
        let p = Progress::parse("w=naive-post,bogus;a=bogus:1,ttl-expiry:1");
        assert_eq!(p.watched, [NaivePost]);
        assert_eq!(p.answered, [(TtlExpiry, true)]);
    }

    #[test]
    fn complete_once_every_scenario_is_watched_and_every_question_answered() {
        let mut p = Progress::default();
        for (i, id) in ScenarioId::ALL.into_iter().enumerate() {
            p.watch(id);
            assert!(!p.complete(), "{id}: watched, not yet answered");
            p.answer(id, i % 3 != 0);
        }
        assert!(p.complete());
        let wrong = ScenarioId::COUNT.div_ceil(3);
        assert_eq!(
            p.right(),
            ScenarioId::COUNT - wrong,
            "{wrong} answers wrong"
        );
        assert!(!p.cleared().complete());
        assert_eq!(p.cleared().right(), 0);
    }

    #[test]
    fn clearing_keeps_the_predict_setting() {
        let mut p = Progress::parse("w=naive-post;a=naive-post:1;p=0");
        p = p.cleared();
        assert_eq!(
            p,
            Progress {
                predict: false,
                ..Progress::default()
            }
        );
    }
}
