//! The question's state and the reader's progress ([`Learn`]), and what follows
//! the lab: the open scenario's text fetched anew with the scenario or the
//! language ([`Learn::opened`]), and the question asked at the run's decisive
//! step ([`Learn::moved`]). Both are called by the handlers that change what they
//! follow (the listener, the playback timer, the language switch, a fragment's
//! arrival), not by effects: the one effect here writes the progress out to the
//! browser and the LMS, and no effect writes a signal (`no_effect_writes_a_signal`).

use super::fetch::fetch;
use super::focus::{focus_later, lab_into_view};
use super::question::Question;
use crate::lesson::fragment::{self, part_of};
use crate::lesson::ScenarioId;
use crate::progress::{Progress, STORAGE_KEY};
use crate::ui::state::Lab;
use crate::ui::var::Var;
use leptos::prelude::*;

/// Where the open scenario's question stands.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Ask {
    /// The decisive step has not been reached in this run yet.
    Waiting,
    Asking,
    /// Answered with this choice; the reveal is shown.
    Answered(usize),
    /// Answered or skipped: not asked again until another scenario is opened.
    Done,
}

/// Fetched text, the question's state and the reader's progress. `Copy`, provided
/// as context by the app.
#[derive(Clone, Copy)]
pub struct Learn {
    /// The open scenario's fragment, with its id.
    pub scenario: Var<Option<(ScenarioId, String)>>,
    pub ask: Var<Ask>,
    /// The question paused a playing run: Continue plays on.
    pub paused: Var<bool>,
    pub progress: Var<Progress>,
    /// The run was at its end when [`Learn::moved`] last looked. (Not tracked by
    /// anything; a `Var` all the same, where a `StoredValue` cost 176 bytes gzip.)
    at_end: Var<bool>,
    /// The stored progress has been read ([`Learn::load`]; not tracked).
    loaded: Var<bool>,
}

impl Learn {
    /// The question's state and the progress; the stored progress is read by
    /// [`Learn::load`] (the text the lab shows is fetched by [`Learn::opened`]). `to_lab`:
    /// the link points at the lab, so the page scrolls to it once the lab is drawn.
    pub fn new(lab: Lab, to_lab: bool) -> Learn {
        let learn = Learn {
            scenario: Var::new(None),
            ask: Var::new(Ask::Waiting),
            paused: Var::new(false),
            progress: Var::new(Progress::default()),
            at_end: Var::new(false),
            loaded: Var::new(false),
        };
        // The progress goes out to the browser's storage and to the LMS: from the lab's
        // second stage on (`Lab::whole`), not in the task that mounts its core; the stored
        // progress is read by then (`Learn::load`), so it is never written over.
        crate::ui::staged(lab, move || {
            learn.progress.with(|p| {
                let text = p.to_text();
                if let Some(s) = storage() {
                    let _ = s.set_item(STORAGE_KEY, &text);
                }
                crate::lms::publish(p, &text);
            });
        });
        // A lab drawn whole at once has its progress at once.
        if lab.whole.get_untracked() {
            learn.load(lab);
        }
        // `learn.opened(lab, true)`, which fetches the scenario's text, comes with the
        // lab's second stage (`app::app`, `Lab::whole`).
        if to_lab {
            // The prose above the lab is in the page already: its place is fixed.
            request_animation_frame(move || lab_into_view(lab));
        }
        learn
    }

    /// Reads the stored progress, once: where the lab starts out of view, at its second
    /// stage (`app::app`) or before the first event is handled (`listen`), whichever
    /// comes first, not in the task that mounts its core (the browser's storage is
    /// opened at its first use). Nothing writes the progress before: every writer is
    /// an event's handler or comes with the second stage.
    pub fn load(self, lab: Lab) {
        if self.loaded.get_untracked() {
            return;
        }
        self.loaded.set(true);
        let storage = storage();
        // In an LMS, the progress it kept for this learner; `localStorage` is the
        // browser's (another learner's, on a shared computer) and is only written.
        let restored = crate::lms::restored();
        if storage.is_none() && restored.is_none() {
            lab.notices
                .update(|n| n.push(lab.ui().storage_unavailable().to_string()));
        }
        let stored = restored
            .or_else(|| storage?.get_item(STORAGE_KEY).ok().flatten())
            .unwrap_or_default();
        self.progress.set(Progress::parse(&stored));
    }

    /// Opens scenario `id` in the lab at `step`, its question waiting and its text fetched.
    pub fn open(self, lab: Lab, id: ScenarioId, step: usize) {
        let new = lab.scenario() != id;
        lab.open(id, step);
        self.opened(lab, new);
    }

    /// The lab shows a scenario anew (another one if `new`, or in another language, or
    /// the same one opened again): its question waits to be asked again (in that
    /// language), a question that paused the run of another scenario is forgotten, and
    /// its text is fetched; [`Learn::moved`] once it is in.
    pub fn opened(self, lab: Lab, new: bool) {
        self.ask.set(Ask::Waiting);
        if new {
            self.paused.set(false);
        }
        self.scenario.set(None);
        let (lang, id) = (lab.lang.get_untracked(), lab.scenario());
        let url = fragment::scenario_path(lang, id);
        let current = move || (lab.lang.get_untracked(), lab.scenario()) == (lang, id);
        fetch(lab, self.scenario, url, id, current, move || {
            untrack(|| self.at_step(lab, true))
        });
    }

    /// The run may have moved, or changed, or its text arrived: a run watched to its end
    /// counts, and at the decisive step (a fix-it question: at the end) the question is
    /// asked, once per opened scenario. Called by whatever moves the lab (the listener,
    /// the playback timer) and when the scenario's text arrives.
    pub fn moved(self, lab: Lab) {
        untrack(|| self.at_step(lab, false));
    }

    /// [`Learn::moved`]; `arrived`: the scenario's text has just arrived.
    fn at_step(self, lab: Lab, arrived: bool) {
        let (k, n) = (lab.cursor.get(), lab.steps());
        let id = lab.scenario();
        // A run watched to its end counts, whatever the path there: once per arrival
        // there, so progress cleared at the end stays cleared.
        let end = n > 0 && k >= n;
        let came = end && (arrived || !self.at_end.get());
        self.at_end.set(end);
        if came && !self.progress.with(|p| p.has_watched(id)) {
            self.progress.update(|p| p.watch(id));
        }
        if self.ask.get() != Ask::Waiting || !self.progress.with(|p| p.predict) {
            return;
        }
        let q = self.part(id, "q");
        let fix = q.as_deref().and_then(Question::parse).map(|q| q.fix);
        let at = match fix {
            Some(true) => Some(n),
            Some(false) => lab.run.with(|r| r.decisive_step()),
            None => None,
        };
        if at != Some(k) {
            return;
        }
        self.ask.set(Ask::Asking);
        // A fix-it question is answered with the defences: their section opens.
        if fix == Some(true) {
            let id = crate::ui::controls::Sec::Defences.id();
            if let Some(d) = document().get_element_by_id(&id) {
                let _ = d.set_attribute("open", "");
            }
        }
        // A run that was playing pauses, and the reader lands on the first answer;
        // one stepped by hand shows the question and leaves the keys to the reader.
        if lab.playing.get() {
            self.paused.set(true);
            lab.playing.set(false);
            focus_later("[data-testid=predict] input");
        }
    }

    /// A part of the open scenario's fragment, if it has arrived.
    pub(super) fn part(&self, id: ScenarioId, name: &str) -> Option<String> {
        self.scenario.with(|s| match s {
            Some((sid, text)) if *sid == id => part_of(text, name).map(str::to_string),
            _ => None,
        })
    }
}

/// The browser's `localStorage`, if it has one for the page.
fn storage() -> Option<web_sys::Storage> {
    window().local_storage().ok().flatten()
}
