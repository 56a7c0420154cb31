//! The state panes, narration, outcome and sequence diagram on the page.
//! Each is one reactive piece of markup rendered by [`crate::render`] from
//! the simulation's world and trace.

use super::act::Action;
use super::state::Lab;
use crate::html::Markup;
use crate::render;
use leptos::prelude::*;

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

/// One state pane, re-rendered when the step changes.
#[component]
pub fn StatePane(
    /// Which pane to draw.
    pane: Pane,
) -> impl IntoView {
    let lab = super::context::<Lab>();
    let ui = lab.ui();
    let (class, testid) = match pane {
        Pane::Redis => ("pane pane--redis", "pane-redis"),
        Pane::Postgres => ("pane pane--postgres", "pane-postgres"),
        Pane::Processor => ("pane pane--processor", "pane-processor"),
        Pane::Broker => ("pane pane--broker", "pane-broker"),
        Pane::Client => ("pane pane--client", "pane-client"),
        Pane::Outcome => ("pane pane--outcome", "outcome"),
        Pane::Narration => ("pane pane--narration", "narration"),
    };
    let markup = move || {
        // Only the narration is the lab's core (`Lab::whole`).
        if pane != Pane::Narration && !lab.whole.get() {
            return Markup::default();
        }
        lab.world.with(|w| {
            lab.record.with(|rec| match pane {
                Pane::Redis => render::redis(ui, w, rec.as_ref()),
                Pane::Postgres => render::postgres(ui, w, rec.as_ref()),
                Pane::Processor => render::processor(ui, w),
                Pane::Broker => render::broker(ui, w),
                Pane::Client => render::client(ui, w),
                Pane::Outcome => render::outcome(ui, w),
                Pane::Narration => render::narration(ui, rec.as_ref(), w),
            })
        })
    };
    if pane == Pane::Narration {
        let clock = move || lab.world.with(|w| crate::narrate::duration(ui, w.now));
        return view! {
            <section class=class data-testid=testid>
                <h3>
                    {ui.pane_narration()}
                    <span class="muted clock" data-testid="clock">
                        {clock}
                    </span>
                </h3>
                <div aria-live="polite" aria-atomic="true" inner_html=super::markup(markup)></div>
            </section>
        }
        .into_any();
    }
    view! { <section class=class data-testid=testid inner_html=super::markup(markup)></section> }
        .into_any()
}

/// The sequence diagram; clicking an arrow jumps to the step that sent it.
#[component]
pub fn Sequence() -> impl IntoView {
    let lab = super::context::<Lab>();
    let future = lab.future;
    // A new diagram (another scenario, another language) starts without the future,
    // as its switch in the playback bar does (both are built with the lab's grid).
    future.set(false);
    let ui = lab.ui();
    let markup = move || {
        let k = lab.cursor.get();
        if !lab.whole.get() {
            return Markup::default();
        }
        lab.run.with(|r| {
            render::sequence(
                ui,
                &r.trace,
                &r.scenario.nodes(),
                k,
                crate::seqdiag::lane_width(lab.tall.get(), r.scenario.nodes().len()),
                future.get(),
                Some(lab.mark.get()).filter(|k| *k > 0),
            )
        })
    };
    // Keep the current step in view (the scroll position is the DOM's, not state). A new
    // diagram is at its top already: setting that again would force a layout of the whole
    // page while it loads (about as long as the lab's mounting).
    // (Again once the diagram is drawn, if the page started without it: `Lab::whole`.)
    Effect::new(move |old: Option<i32>| {
        let y = (render::sequence_y(lab.cursor.get()) - 120.0).max(0.0) as i32;
        if !lab.whole.get() {
            return -1;
        }
        if let (Ok(all), true) = (
            document().query_selector_all(".sequence"),
            old.is_some_and(|o| o >= 0) || y > 0,
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
        y
    });
    // One Tab stop: the arrows are reached with the arrow keys ([`on_event`]).
    view! {
        <section class="pane pane--sequence" data-testid="pane-sequence">
            <h3>{ui.pane_sequence()}</h3>
            <p class="hint muted">{ui.sequence_hint()}</p>
            <div class="sequence" tabindex="0" role="region" aria-label=ui.pane_sequence() inner_html=super::markup(markup)></div>
            <p class="hint muted" data-testid="seq-legend">{ui.seq_legend()}</p>
            <div class="contents" inner_html=super::fixed(super::controls::future_switch(ui))></div>
        </section>
    }
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
