//! The reader's progress as markup: counts, the predict switch, the checklist.
//! Pure, tested on the host.

use crate::html::{Html, Markup};
use crate::lesson::{names, Lang, ScenarioId, Ui};
use crate::narrate::fill;
use crate::progress::Progress;
use crate::ui::act::{Act, Action};

/// The progress panel: counts, the predict switch, the checklist (each scenario
/// with a mark for "watched" and one for its answer, ✓ right, ✗ wrong), and the
/// button that clears it.
pub fn progress(ui: &Ui, p: &Progress, lang: Lang) -> Markup {
    let total = ScenarioId::COUNT.to_string();
    let count = |n: usize| fill(ui.progress_count(), &[&n.to_string(), &total]);
    let mut h = Html::new();
    h.el("h3", &[], ui.progress_title());
    h.el(
        "p",
        &[("data-testid", "progress-summary")],
        &format!(
            "{}: {} · {}: {}",
            ui.progress_watched(),
            count(p.watched.len()),
            ui.progress_answered(),
            count(p.answered.len())
        ),
    );
    h.open("label", &[("class", "switch")]);
    h.open(
        "input",
        &[
            ("type", "checkbox"),
            ("data-act", Act::Predict.name()),
            ("data-testid", "predict-toggle"),
            (if p.predict { "checked" } else { "" }, ""),
        ],
    );
    h.el("span", &[], ui.predict_toggle()).close("label");
    h.open("ul", &[("class", "checklist")]);
    for n in names(lang) {
        let watched = p.has_watched(n.id);
        let (mark, answer) = match p.answer_of(n.id) {
            Some(true) => ("✓", "tick on"),
            Some(false) => ("✗", "tick off"),
            None => ("○", "tick"),
        };
        h.open("li", &[]);
        h.el(
            "span",
            &[
                ("class", if watched { "tick on" } else { "tick" }),
                ("title", ui.progress_watched()),
            ],
            if watched { "✓" } else { "○" },
        );
        h.el(
            "span",
            &[("class", answer), ("title", ui.progress_answered())],
            mark,
        );
        let href = format!("?lang={}&scenario={}", lang.code(), n.id);
        h.open(
            "a",
            &[
                ("href", &href),
                ("data-testid", &format!("progress-{}", n.id)),
            ],
        );
        Action::Open {
            scenario: n.id,
            at_start: true,
        }
        .put(&mut h);
        h.text(n.title).close("a");
        h.close("li");
    }
    h.close("ul");
    h.el(
        "button",
        &[
            ("type", "button"),
            ("data-act", Act::Clear.name()),
            ("data-testid", "clear-progress"),
        ],
        ui.clear_progress(),
    );
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lesson::ui;

    #[test]
    fn the_progress_panel_counts_and_marks() {
        let mut p = Progress::default();
        p.watch(ScenarioId::NaivePost);
        p.answer(ScenarioId::NaivePost, false);
        let html = progress(ui(Lang::En), &p, Lang::En);
        let n = ScenarioId::COUNT;
        assert!(html.contains(&format!(
            "Watched to the end: 1 of {n} · Question answered: 1 of {n}"
        )));
        assert!(html.contains("class=\"tick off\""));
        assert!(html.contains("data-act=\"predict\" data-testid=\"predict-toggle\" checked"));
        p.predict = false;
        assert!(!progress(ui(Lang::En), &p, Lang::En).contains("checked"));
    }
}
