//! The predict-then-reveal question as markup: a fragment's `q` part parsed, and
//! the form that asks it and reveals the answer. Pure, tested on the host.

use crate::html::{Html, Markup};
use crate::lesson::fragment;
use crate::lesson::Ui;
use crate::ui::act::{Act, Action};

/// A question of a fragment's `q` part.
pub(super) struct Question<'a> {
    pub(super) prompt: &'a str,
    /// A fix-it question: no answers (the reader flips the lab's switches), and
    /// `correct` is the size of the smallest set of defences that holds.
    pub(super) fix: bool,
    pub(super) correct: usize,
    pub(super) explain: &'a str,
    pub(super) answers: Vec<&'a str>,
}

impl Question<'_> {
    pub(super) fn parse(q: &str) -> Option<Question<'_>> {
        let mut lines = q.lines();
        let prompt = lines.next()?;
        let second = lines.next()?;
        let size = second.strip_prefix(fragment::FIX);
        Some(Question {
            prompt,
            fix: size.is_some(),
            correct: size.unwrap_or(second).parse().ok()?,
            explain: lines.next()?,
            answers: lines.collect(),
        })
    }
}

/// The question as a form: radio answers (keyboard-native), Check and Continue;
/// after an answer (`answered`), the answers marked right and wrong and the
/// explanation. A fix-it question has no answers of its own: the reader flips the
/// lab's switches, and `fix` is what the core's run of them showed (right, in words).
/// The fragment's text is markup already (escaped at build time).
pub fn predict(ui: &Ui, q: &str, answered: Option<usize>, fix: Option<(bool, String)>) -> Markup {
    let Some(q) = Question::parse(q) else {
        return Markup::default();
    };
    // The fragment's text is markup already (escaped when the build wrote it).
    let prerendered = |s: &str| Markup::prerendered(s.to_string());
    let mut h = Html::new();
    h.open("form", &[("class", "predict"), ("data-testid", "predict")]);
    Action::Do(Act::Check).put(&mut h);
    h.open("fieldset", &[]);
    h.el(
        "legend",
        &[],
        if q.fix {
            ui.fix_title()
        } else {
            ui.predict_title()
        },
    );
    h.open("p", &[("class", "predict__prompt")]);
    h.markup(&prerendered(q.prompt)).close("p");
    for (i, a) in q.answers.iter().enumerate() {
        let class = match answered {
            Some(_) if i == q.correct => "answer right",
            Some(c) if c == i => "answer wrong",
            _ => "answer",
        };
        let value = i.to_string();
        h.open("label", &[("class", class)]);
        h.open(
            "input",
            &[
                ("type", "radio"),
                ("name", "predict"),
                ("value", &value),
                (if answered == Some(i) { "checked" } else { "" }, ""),
                (if answered.is_some() { "disabled" } else { "" }, ""),
            ],
        );
        h.open("span", &[]).markup(&prerendered(a)).close("span");
        h.close("label");
    }
    h.close("fieldset");
    // The verdict first, where the eyes are after Check; Continue under it.
    if let Some(c) = answered {
        let right = fix.as_ref().map_or(c == q.correct, |(right, _)| *right);
        h.open(
            "p",
            &[("class", "verdict"), ("data-testid", "predict-verdict")],
        );
        h.open("strong", &[])
            .text(if right { ui.correct() } else { ui.not_quite() })
            .raw(".")
            .close("strong");
        if let Some((_, ran)) = &fix {
            h.raw(" ").el("span", &[("data-testid", "fix-run")], ran);
            h.close("p").open("p", &[]);
        } else {
            h.raw(" ");
        }
        h.markup(&prerendered(q.explain)).close("p");
    }
    h.open("div", &[("class", "predict__actions")]);
    if answered.is_none() {
        h.el(
            "button",
            &[
                ("type", "submit"),
                ("class", "primary"),
                ("data-testid", "predict-check"),
            ],
            ui.check_answer(),
        );
    }
    h.open("button", &[("type", "button")]);
    Action::Do(Act::Continue).put(&mut h);
    h.attr("data-testid", "predict-continue");
    h.text(ui.continue_run()).close("button").close("div");
    if answered.is_none() {
        h.el(
            "p",
            &[
                ("class", "predict__hint"),
                ("data-testid", "predict-hint"),
                ("role", "status"),
            ],
            "",
        );
    }
    h.close("form");
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lesson::fragment::part_of;
    use crate::lesson::{ui, Lang, ScenarioId};

    #[test]
    fn the_question_reveals_after_an_answer() {
        let text = fragment::render_scenario(Lang::En, ScenarioId::NaivePost);
        let q = part_of(&text, "q").unwrap();
        let ui = ui(Lang::En);
        let asking = predict(ui, q, None, None);
        assert_eq!(asking.matches("type=\"radio\"").count(), 4);
        assert!(asking.contains("predict-check") && !asking.contains("predict-verdict"));
        let wrong = predict(ui, q, Some(0), None);
        assert!(wrong.contains("<strong>Not quite.</strong>"));
        assert!(wrong.contains("answer wrong") && wrong.contains("answer right"));
        assert!(!wrong.contains("predict-check"));
        assert!(
            wrong.find("predict-verdict") < wrong.find("predict-continue"),
            "the verdict comes before Continue: {wrong}"
        );
        assert!(predict(ui, q, Some(1), None).contains("<strong>Correct.</strong>"));
        assert_eq!(predict(ui, "garbage", None, None), "");
    }

    /// The labels around the question were written into its markup unescaped
    /// (while `fragment.rs` escaped the same labels on the host).
    #[test]
    fn the_questions_labels_are_escaped() {
        let text = fragment::render_scenario(Lang::En, ScenarioId::NaivePost);
        let q = part_of(&text, "q").unwrap();
        let fields: Vec<&'static str> = ui(Lang::En)
            .entries()
            .into_iter()
            .map(|(k, v)| match k {
                "predict_title" => "Q&A <b>",
                "not_quite" => "<i>no</i>",
                _ => v,
            })
            .collect();
        let ui = crate::lesson::Ui::from_fields(&fields).unwrap();
        assert!(predict(&ui, q, None, None).contains("<legend>Q&amp;A &lt;b&gt;</legend>"));
        assert!(predict(&ui, q, Some(0), None).contains("&lt;i&gt;no&lt;/i&gt;."));
    }
}
