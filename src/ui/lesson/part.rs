//! The lesson's pieces of markup in the lab, each a place written once with the
//! lab and re-rendered when what it shows changes: the handler's code with the current line, the question, the
//! scenario's explanation, the progress.

use super::commands::fix_verdict;
use super::learn::{Ask, Learn};
use super::progress_panel::progress;
use super::question::{predict, Question};
use crate::html::{Html, Markup};
use crate::lesson::codemap;
use crate::ui::state::Lab;
use web_sys::Element;

/// The lesson's pieces of markup on the page.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The handler's code with the current line.
    Code,
    /// The predict-then-reveal question, while it is asked.
    Predict,
    /// The open scenario's explanation.
    About,
    /// The reader's progress.
    Progress,
}

impl Part {
    /// Its class and test id.
    fn names(self) -> (&'static str, &'static str) {
        match self {
            Part::Code => ("pane pane--code", "code-pane"),
            Part::Predict => ("predict-slot", "predict-slot"),
            Part::About => ("about", "about"),
            Part::Progress => ("progress", "progress"),
        }
    }

    /// The part's place, written once with the lab (`app::grid`); [`follow`] fills it.
    pub fn frame(self, h: &mut Html) {
        let (class, testid) = self.names();
        h.el("div", &[("class", class), ("data-testid", testid)], "");
    }
}

/// Keeps a piece of the lesson's markup (in `place`, the lab) drawn, re-rendered
/// when what it shows changes.
pub fn follow(lab: Lab, learn: Learn, part: Part, place: &Element) {
    let ui = lab.ui();
    let id = lab.scenario();
    let sel = format!("[data-testid={}]", part.names().1);
    let Some(el) = place.query_selector(&sel).ok().flatten() else {
        return;
    };
    // Drawn with the panes (`Lab::whole`); the question is never asked before: it is asked
    // once the scenario's text has arrived, and that is fetched at the second stage.
    let markup = move || match part {
        Part::Code => {
            let code = learn.part(id, "code").unwrap_or_default();
            let (cur, t) = lab.run.with(|r| {
                let cur = codemap::current(&r.trace, lab.cursor.get(), &code);
                (cur, r.config.toggles)
            });
            // The listing is the fragment's code, marked: markup the build wrote.
            let listing = codemap::listing(&code, cur, |id| {
                idem_sim::scenario::Toggle::from_id(id).is_some_and(|x| t.has(x))
            });
            let mut h = Html::new();
            h.el("h3", &[], ui.pane_code());
            h.open(
                "ol",
                &[
                    ("class", "code"),
                    ("tabindex", "0"),
                    ("aria-label", ui.pane_code()),
                ],
            );
            h.markup(&Markup::prerendered(listing)).close("ol");
            h.finish()
        }
        Part::Predict => {
            let answered = match learn.ask.get() {
                Ask::Asking => None,
                Ask::Answered(c) => Some(c),
                Ask::Waiting | Ask::Done => return Markup::default(),
            };
            let q = learn.part(id, "q").unwrap_or_default();
            let fix = match (answered, Question::parse(&q)) {
                (Some(mask), Some(q)) if q.fix => Some(fix_verdict(lab, mask, q.correct)),
                _ => None,
            };
            predict(ui, &q, answered, fix)
        }
        Part::About => {
            // Only once the reader has answered, or has seen the run to its end:
            // before that it would give the outcome away.
            // (`watched` is set when the run reaches its end; reading the progress, not
            // the cursor, keeps an answered quiz of the explanation in place while the
            // reader steps on.)
            let open = learn
                .progress
                .with(|p| p.answer_of(id).is_some() || p.has_watched(id))
                || matches!(learn.ask.get(), Ask::Answered(_));
            let mut h = Html::new();
            h.el("h3", &[], ui.about_scenario());
            h.open("div", &[("class", "prose-wrap")]);
            if open {
                h.markup(&Markup::prerendered(
                    learn.part(id, "ex").unwrap_or_default(),
                ));
            } else {
                h.el(
                    "p",
                    &[("class", "muted"), ("data-testid", "about-later")],
                    ui.about_later(),
                );
            }
            h.close("div");
            h.finish()
        }
        Part::Progress => learn
            .progress
            .with(|p| progress(ui, p, lab.lang.get_untracked())),
    };
    crate::ui::staged(lab, move || crate::ui::set_inner(&el, &markup()));
}
