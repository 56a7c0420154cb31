//! What the reader does with the lesson: answer the question (a fix-it is judged by
//! the core's run of the reader's defences), go on, clear the progress, switch
//! predicting, open a scenario link, edit the ADR calculator. The page's one
//! delegated listener ([`crate::ui::listen`]) calls these.

use super::focus::{focus_later, keep_focus};
use super::learn::{Ask, Learn};
use super::question::Question;
use crate::fixit;
use crate::html::Markup;
use crate::lesson::calc::{self, Inputs, INPUT_NAMES, OUTPUT_NAMES};
use crate::lesson::{Lang, ScenarioId};
use crate::narrate::fill;
use crate::progress::{Progress, STORAGE_KEY};
use crate::ui::act::Act;
use crate::ui::state::Lab;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlInputElement};

/// Continue: the question is gone, and a run it paused plays on.
pub fn go_on(lab: Lab, learn: Learn) {
    learn.ask.set(Ask::Done);
    if learn.paused.get_untracked() {
        learn.paused.set(false);
        lab.playing.set(true);
    }
    // The question is gone; the reader goes on from Play.
    focus_later(Act::Play.selector());
}

/// Clears the progress (the predict setting stays).
pub fn clear(lab: Lab, learn: Learn) {
    learn.progress.update(|p| *p = p.cleared());
    let done = lab.ui().progress_cleared().to_string();
    lab.notices.update(|n| n.push(done));
    keep_focus(Act::Clear.selector());
}

/// The predict switch: pause at the decisive step and ask, or not.
pub fn set_predict(learn: Learn, on: bool) {
    learn.progress.update(|p| p.predict = on);
    keep_focus(Act::Predict.selector());
}

/// Another tab saved its progress: take it, so this tab does not write over it.
pub fn storage(learn: Learn, e: &web_sys::Event) {
    if let Some(s) = e
        .dyn_ref::<web_sys::StorageEvent>()
        .filter(|s| s.key().as_deref() == Some(STORAGE_KEY))
    {
        let p = Progress::parse(&s.new_value().unwrap_or_default());
        if learn.progress.with_untracked(|old| *old != p) {
            learn.progress.set(p);
        }
    }
}

/// A scenario link ([`Action::Open`]): opens scenario `id` in the lab, at its
/// decisive step (or at its start), and brings the lab into view.
pub fn open_link(lab: Lab, learn: Learn, id: ScenarioId, at_start: bool) {
    learn.open(lab, id, 0);
    if !at_start {
        let d = lab.run.with_untracked(|r| r.decisive_step()).unwrap_or(0);
        lab.go(d);
    }
    if let Some(el) = document().get_element_by_id("lab") {
        el.scroll_into_view();
    }
    // The link may be gone with the old lab; the reader goes on from the new one.
    focus_later("#lab-title");
}

/// Records the reader's answer to the open question and reveals the right one.
pub fn check(lab: Lab, learn: Learn, form: &Element) {
    let id = lab.scenario();
    let text = learn.part(id, "q").unwrap_or_default();
    if let Some(q) = Question::parse(&text).filter(|q| q.fix) {
        return check_fix(lab, learn, q.correct);
    }
    let Some(choice) = form
        .query_selector("input[name=predict]:checked")
        .ok()
        .flatten()
        .and_then(|e| e.get_attribute("value"))
        .and_then(|v| v.parse::<usize>().ok())
    else {
        // Nothing chosen: say so beside the button, and go back to the answers.
        if let Ok(Some(hint)) = form.query_selector("[data-testid=predict-hint]") {
            hint.set_text_content(Some(lab.ui().pick_an_answer()));
        }
        focus_later("[data-testid=predict] input");
        return;
    };
    let Some(q) = Question::parse(&text) else {
        return;
    };
    let right = choice == q.correct;
    learn.progress.update(|p| p.answer(id, right));
    learn.ask.set(Ask::Answered(choice));
    // The verdict goes to a live region that was there, empty, before the answer,
    // so screen readers announce it; focus moves on to Continue.
    if let Some(live) = document().get_element_by_id("announce") {
        let ui = lab.ui();
        let verdict = if right { ui.correct() } else { ui.not_quite() };
        let said = Markup::text(verdict) + &Markup::text(". ");
        crate::ui::set_inner(&live, &(said + &Markup::prerendered(q.explain.to_string())));
    }
    focus_later(Act::Continue.selector());
}

/// Judges a fix-it answer: the defences the reader has switched on in the lab, whose
/// run the lab already shows (see [`crate::fixit`]).
fn check_fix(lab: Lab, learn: Learn, smallest: usize) {
    let id = lab.scenario();
    let on = lab.toggles();
    let mask = lab.run.with_untracked(|r| {
        let defs = r.scenario.defences();
        (0..defs.len())
            .filter(|i| on.has(defs[*i]))
            .fold(0, |m, i| m | 1 << i)
    });
    let right = fix_verdict(lab, mask, smallest).0;
    learn.progress.update(|p| p.answer(id, right));
    learn.ask.set(Ask::Answered(mask));
    if let Some(live) = document().get_element_by_id("announce") {
        let ui = lab.ui();
        live.set_text_content(Some(if right { ui.correct() } else { ui.not_quite() }));
    }
    focus_later(Act::Continue.selector());
}

/// Judges the defences in `mask` (a bit per defence the scenario offers, on in the
/// lab, whose run the core has computed with them): right if every invariant holds
/// to the end and no more defences are on than the smallest set that holds
/// (`smallest`, which a test finds by running every set). Also says what the run showed.
pub(super) fn fix_verdict(lab: Lab, mask: usize, smallest: usize) -> (bool, String) {
    let ui = lab.ui();
    let chosen = mask.count_ones() as usize;
    // The lab's run has the reader's switches: it is the run of their choice.
    let broken = lab.run.with_untracked(fixit::first_break);
    let ran = match broken {
        Some((inv, step)) => fill(
            ui.fix_breaks(),
            &[crate::narrate::invariant_name(ui, inv), &step.to_string()],
        ),
        None if chosen > smallest => fill(ui.fix_fewer(), &[&smallest.to_string()]),
        None => ui.fix_holds().to_string(),
    };
    (broken.is_none() && chosen <= smallest, ran)
}

/// Recomputes the ADR calculator after an edit of one of its inputs.
pub fn recalc(lang: Lang, form: &Element) {
    let find = |sel: String| form.query_selector(&sel).ok().flatten();
    let mut values = [f64::NAN; 5];
    for (v, name) in values.iter_mut().zip(INPUT_NAMES) {
        if let Some(input) =
            find(format!("input[name={name}]")).and_then(|e| e.dyn_into::<HtmlInputElement>().ok())
        {
            *v = input.value_as_number();
        }
    }
    let results = calc::outputs(Inputs::from_values(values), lang);
    for (name, text) in OUTPUT_NAMES.iter().zip(results) {
        if let Some(out) = find(format!("output[name={name}]")) {
            out.set_text_content(Some(&text));
        }
    }
}
