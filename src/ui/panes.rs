//! The state panes, narration, outcome and sequence diagram on the page.
//! Each is a place written once with the lab, filled by an effect with markup
//! rendered by [`crate::render`] from the simulation's world and trace.

use super::act::Action;
use super::state::Lab;
use crate::html::Html;
use crate::lesson::Ui;
use crate::render;
use leptos::prelude::*;
use web_sys::Element;

/// Which pane.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    Redis,
    Postgres,
    Processor,
    Broker,
    Client,
    Outcome,
    Narration,
}

impl Pane {
    /// Its class and test id.
    fn names(self) -> (&'static str, &'static str) {
        match self {
            Pane::Redis => ("pane pane--redis", "pane-redis"),
            Pane::Postgres => ("pane pane--postgres", "pane-postgres"),
            Pane::Processor => ("pane pane--processor", "pane-processor"),
            Pane::Broker => ("pane pane--broker", "pane-broker"),
            Pane::Client => ("pane pane--client", "pane-client"),
            Pane::Outcome => ("pane pane--outcome", "outcome"),
            Pane::Narration => ("pane pane--narration", "narration"),
        }
    }

    /// The pane's place, written once with the lab (`app::grid`); [`follow`] fills it.
    pub fn frame(self, h: &mut Html, ui: &Ui) {
        let (class, testid) = self.names();
        h.open("section", &[("class", class), ("data-testid", testid)]);
        if self == Pane::Narration {
            h.open("h3", &[]).text(ui.pane_narration());
            h.el(
                "span",
                &[("class", "muted clock"), ("data-testid", "clock")],
                "",
            );
            h.close("h3");
            h.el(
                "div",
                &[("aria-live", "polite"), ("aria-atomic", "true")],
                "",
            );
        }
        h.close("section");
    }
}

/// Keeps the state panes of `panes` (in `place`, the lab) drawn at the step shown:
/// one effect for all of them, which all follow the step.
pub fn follow(lab: Lab, place: &Element, panes: Vec<Pane>) {
    let ui = lab.ui();
    let found: Vec<(Pane, Element)> = panes
        .into_iter()
        .filter_map(|p| {
            let sel = format!("[data-testid={}]", p.names().1);
            let el = place.query_selector(&sel).ok().flatten()?;
            Some((p, el))
        })
        .collect();
    // From the lab's second stage on (`Lab::whole`).
    super::staged(lab, move || {
        lab.step.with(|s| {
            let (w, rec) = (&s.world, &s.record);
            for (pane, el) in &found {
                let m = match pane {
                    Pane::Redis => render::redis(ui, w, rec.as_ref()),
                    Pane::Postgres => render::postgres(ui, w, rec.as_ref()),
                    Pane::Processor => render::processor(ui, w),
                    Pane::Broker => render::broker(ui, w),
                    Pane::Client => render::client(ui, w),
                    Pane::Outcome => render::outcome(ui, w),
                    Pane::Narration => {
                        let clock = el.query_selector(".clock").ok().flatten();
                        if let Some(c) = clock {
                            c.set_text_content(Some(&crate::narrate::duration(ui, w.now)));
                        }
                        let words = el.query_selector("[aria-live]").ok().flatten();
                        if let Some(d) = words {
                            super::set_inner(&d, &render::narration(ui, rec.as_ref(), w));
                        }
                        continue;
                    }
                };
                super::set_inner(el, &m);
            }
        })
    });
}

/// The sequence diagram's pane, written once with the lab (`app::grid`); [`sequence`]
/// draws the diagram.
pub fn sequence_frame(h: &mut Html, ui: &Ui) {
    h.open(
        "section",
        &[
            ("class", "pane pane--sequence"),
            ("data-testid", "pane-sequence"),
        ],
    );
    h.el("h3", &[], ui.pane_sequence());
    h.el("p", &[("class", "hint muted")], ui.sequence_hint());
    // One Tab stop: the arrows are reached with the arrow keys ([`arrow_key`]).
    h.el(
        "div",
        &[
            ("class", "sequence"),
            ("tabindex", "0"),
            ("role", "region"),
            ("aria-label", ui.pane_sequence()),
        ],
        "",
    );
    h.el(
        "p",
        &[("class", "hint muted"), ("data-testid", "seq-legend")],
        ui.seq_legend(),
    );
    h.open("div", &[("class", "contents")]);
    h.markup(&super::controls::future_switch(ui)).close("div");
    h.close("section");
}

/// The sequence diagram (in `place`, the lab); clicking an arrow jumps to the step that sent it.
pub fn sequence(lab: Lab, place: &Element) {
    let future = lab.future;
    // A new diagram (another scenario, another language) starts without the future,
    // as its switch in the playback bar does (both are written with the lab's grid).
    future.set(false);
    let ui = lab.ui();
    let Some(el) = place.query_selector(".sequence").ok().flatten() else {
        return;
    };
    super::staged(lab, move || {
        let k = lab.cursor.get();
        let m = lab.run.with(|r| {
            render::sequence(
                ui,
                &r.trace,
                &r.scenario.nodes(),
                k,
                crate::seqdiag::lane_width(lab.tall.get(), r.scenario.nodes().len()),
                future.get(),
                Some(lab.mark.get()).filter(|k| *k > 0),
            )
        });
        super::set_inner(&el, &m);
    });
    // Keep the current step in view (the scroll position is the DOM's, not state). A new
    // diagram is at its top already: setting that again would force a layout of the whole
    // page while it loads (about as long as the lab's mounting).
    // (Again once the diagram is drawn, if the page started without it: `Lab::whole`.)
    let old = std::cell::Cell::new(None::<i32>);
    super::effect(move || {
        let y = (render::sequence_y(lab.cursor.get()) - 120.0).max(0.0) as i32;
        // The last run's `y`, -1 while the diagram was not drawn (a `Cell`, not a signal).
        let whole = lab.whole.get();
        let before = old.replace(Some(if whole { y } else { -1 }));
        if !whole {
            return;
        }
        if let (Ok(all), true) = (
            document().query_selector_all(".sequence"),
            before.is_some_and(|o| o >= 0) || y > 0,
        ) {
            use wasm_bindgen::JsCast;
            // The run compared side by side has one too (`explore::compared`).
            for i in 0..all.length() {
                if let Some(el) = all
                    .item(i)
                    .and_then(|n| n.dyn_into::<web_sys::Element>().ok())
                {
                    el.set_scroll_top(y);
                }
            }
        }
    });
}

/// A click on an arrow or a mark of the sequence diagram, or Enter or Space on a
/// focused arrow ([`Action::Jump`], from the page's one listener), goes to step `k`;
/// a keyboard reader (`by_key`) stays on the arrow of that step.
pub fn jump(lab: Lab, k: usize, by_key: bool) {
    lab.playing.set(false);
    lab.go(k);
    // The diagram is drawn anew: keep a keyboard reader on the arrow of that step.
    if by_key {
        request_animation_frame(move || {
            use wasm_bindgen::JsCast;
            let sel = format!(".sequence {}[role=button]", Action::Jump(k).selector());
            // An SVG element: `focus` is the same method on it (no `SvgElement` binding needed).
            if let Some(el) = document().query_selector(&sel).ok().flatten() {
                let _ = el.unchecked_ref::<web_sys::HtmlElement>().focus();
            }
        });
    }
}

/// The arrow keys in a sequence diagram move the focus from arrow to arrow (the
/// diagram is one Tab stop); `false` for another key or outside a diagram.
pub fn arrow_key(e: &web_sys::Event, key: &str) -> bool {
    match key {
        "ArrowDown" | "ArrowRight" => move_focus(e, 1),
        "ArrowUp" | "ArrowLeft" => move_focus(e, -1),
        _ => false,
    }
}

/// An arrow key in a sequence diagram: the focus goes to the next (`by` 1) or the
/// previous (-1) arrow; from the diagram itself, to the arrow of the current step
/// (or the first). `false` outside a diagram.
fn move_focus(e: &web_sys::Event, by: i32) -> bool {
    use wasm_bindgen::JsCast;
    let Some(region) = super::closest(e, ".sequence") else {
        return false;
    };
    let Ok(list) = region.query_selector_all("[role=button]") else {
        return false;
    };
    let arrows: Vec<web_sys::Element> = (0..list.length())
        .filter_map(|i| list.item(i)?.dyn_into().ok())
        .collect();
    if arrows.is_empty() {
        return false;
    }
    let at = super::closest(e, ".sequence [role=button]")
        .and_then(|a| arrows.iter().position(|x| *x == a));
    let next = match at {
        Some(i) => (i as i32 + by).clamp(0, arrows.len() as i32 - 1) as usize,
        None => arrows
            .iter()
            .position(|a| a.class_list().contains("cur"))
            .unwrap_or(0),
    };
    e.prevent_default();
    let _ = arrows[next].unchecked_ref::<web_sys::HtmlElement>().focus();
    true
}
