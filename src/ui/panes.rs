//! The state panes, narration, outcome and sequence diagram on the page.
//! Each is one reactive piece of markup rendered by [`crate::render`] from
//! the simulation's world and trace.

use super::state::Lab;
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
    let lab = expect_context::<Lab>();
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
                    {ui.pane_narration}
                    <span class="muted clock" data-testid="clock">
                        {clock}
                    </span>
                </h3>
                <div aria-live="polite" aria-atomic="true" inner_html=markup></div>
            </section>
        }
        .into_any();
    }
    view! { <section class=class data-testid=testid inner_html=markup></section> }.into_any()
}

/// The sequence diagram; clicking an arrow jumps to the step that sent it.
#[component]
pub fn Sequence() -> impl IntoView {
    let lab = expect_context::<Lab>();
    let ui = lab.ui();
    let markup = move || {
        let k = lab.cursor.get();
        lab.run.with(|r| {
            render::sequence(
                ui,
                &r.trace,
                &r.scenario.nodes(),
                k,
                if lab.tall.get() { 60.0 } else { 70.0 },
            )
        })
    };
    // Keep the current step in view (the scroll position is the DOM's, not state).
    Effect::new(move |_| {
        let k = lab.cursor.get();
        if let Some(el) = document().query_selector(".sequence").ok().flatten() {
            el.set_scroll_top((render::sequence_y(k) - 120.0).max(0.0) as i32);
        }
    });
    view! {
        <section class="pane pane--sequence" data-testid="pane-sequence">
            <h3>{ui.pane_sequence}</h3>
            <div class="sequence" tabindex="0" role="region" aria-label=ui.pane_sequence inner_html=markup></div>
        </section>
    }
}

/// A click on an arrow of the sequence diagram jumps to the step that sent it.
/// Called by the page's one delegated listener; `false` if the click was elsewhere.
pub fn on_event(lab: Lab, e: &web_sys::Event) -> bool {
    if e.type_() != "click" {
        return false;
    }
    let step = super::closest(e, ".sequence [data-step]")
        .and_then(|el| el.get_attribute("data-step"))
        .and_then(|s| s.parse::<usize>().ok());
    let Some(k) = step else { return false };
    lab.playing.set(false);
    lab.go(k);
    true
}
