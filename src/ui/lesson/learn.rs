//! The question's state and the reader's progress ([`Learn`]), and what follows
//! the lab: the open scenario's text fetched anew with the scenario or the
//! language, and the question asked at the run's decisive step.

use super::fetch::fetch;
use super::focus::{focus_later, lab_into_view};
use super::question::Question;
use crate::lesson::fragment::{self, part_of};
use crate::lesson::ScenarioId;
use crate::progress::{Progress, STORAGE_KEY};
use crate::ui::state::Lab;
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
    pub scenario: RwSignal<Option<(ScenarioId, String)>>,
    pub ask: RwSignal<Ask>,
    /// The question paused a playing run: Continue plays on.
    pub paused: RwSignal<bool>,
    pub progress: RwSignal<Progress>,
}

impl Learn {
    /// Reads the stored progress and starts fetching the text the lab shows. `to_lab`: the link points at the
    /// lab, so the page scrolls to it once the lab is drawn.
    pub fn new(lab: Lab, to_lab: bool) -> Learn {
        let storage = window().local_storage().ok().flatten();
        // In an LMS, the progress it kept for this learner; `localStorage` is the
        // browser's (another learner's, on a shared computer) and is only written.
        let restored = crate::lms::restored();
        if storage.is_none() && restored.is_none() {
            lab.notices
                .update(|n| n.push(lab.ui().storage_unavailable().to_string()));
        }
        let stored = restored
            .or_else(|| storage.as_ref()?.get_item(STORAGE_KEY).ok().flatten())
            .unwrap_or_default();
        let learn = Learn {
            scenario: RwSignal::new(None),
            ask: RwSignal::new(Ask::Waiting),
            paused: RwSignal::new(false),
            progress: RwSignal::new(Progress::parse(&stored)),
        };
        Effect::new(move |_| {
            learn.progress.with(|p| {
                let text = p.to_text();
                if let Some(s) = &storage {
                    let _ = s.set_item(STORAGE_KEY, &text);
                }
                crate::lms::publish(p, &text);
            });
        });
        Effect::new(move |last: Option<ScenarioId>| {
            lab.opened.track();
            let (lang, id) = (lab.lang.get(), lab.scenario.get());
            // A new language asks the open question again (in that language); a new
            // scenario also forgets that a question had paused the run.
            learn.ask.set(Ask::Waiting);
            if last != Some(id) {
                learn.paused.set(false);
            }
            learn.scenario.set(None);
            let url = fragment::scenario_path(lang, id);
            let current =
                move || (lab.lang.get_untracked(), lab.scenario.get_untracked()) == (lang, id);
            fetch(lab, learn.scenario, url, id, current);
            id
        });
        Effect::new(move |_| {
            let (k, n) = (lab.cursor.get(), lab.steps());
            let id = lab.scenario.get_untracked();
            // A run watched to its end counts, whatever the path there.
            if n > 0 && k >= n && !learn.progress.with_untracked(|p| p.has_watched(id)) {
                learn.progress.update(|p| p.watch(id));
            }
            // At the decisive step (a fix-it question: at the end), pause and ask
            // (once per opened scenario).
            let q = learn.part(id, "q");
            let fix = q.as_deref().and_then(Question::parse).map(|q| q.fix);
            let at = match fix {
                Some(true) => Some(n),
                Some(false) => lab.run.with(|r| r.decisive_step()),
                None => None,
            };
            if at == Some(k)
                && learn.ask.get_untracked() == Ask::Waiting
                && learn.progress.with(|p| p.predict)
            {
                learn.ask.set(Ask::Asking);
                // A fix-it question is answered with the defences: their section opens.
                if fix == Some(true) {
                    if let Ok(Some(d)) = document().query_selector("details[data-sec=defences]") {
                        let _ = d.set_attribute("open", "");
                    }
                }
                // A run that was playing pauses, and the reader lands on the first answer;
                // one stepped by hand shows the question and leaves the keys to the reader.
                if lab.playing.get_untracked() {
                    learn.paused.set(true);
                    lab.playing.set(false);
                    focus_later("[data-testid=predict] input");
                }
            }
        });
        if to_lab {
            // The prose above the lab is in the page already: its place is fixed.
            request_animation_frame(move || lab_into_view(lab));
        }
        learn
    }

    /// A part of the open scenario's fragment, if it has arrived.
    pub(super) fn part(&self, id: ScenarioId, name: &str) -> Option<String> {
        self.scenario.with(|s| match s {
            Some((sid, text)) if *sid == id => part_of(text, name).map(str::to_string),
            _ => None,
        })
    }
}
