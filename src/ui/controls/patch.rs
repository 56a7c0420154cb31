//! The controls' state kept in step with the lab: the markup is written once
//! ([`super::markup`]), and [`patch`] sets what changes (disabled, pressed,
//! values, labels) on the elements, found by their `data-act`.

use crate::narrate::{count, node_name};
use crate::params::speed_text;
use crate::ui::act::{Act, Action};
use crate::ui::state::Lab;
use idem_sim::scenario::Toggle;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlInputElement, HtmlSelectElement};

pub(super) fn find(sel: &str) -> Option<Element> {
    document().query_selector(sel).ok().flatten()
}

pub(super) fn set(el: &Element, attr: &str, value: &str) {
    if el.get_attribute(attr).as_deref() != Some(value) {
        let _ = el.set_attribute(attr, value);
    }
}

fn set_text(el: &Element, text: &str) {
    if el.text_content().as_deref() != Some(text) {
        el.set_text_content(Some(text));
    }
}

fn disable(sel: &str, off: bool) {
    if let Some(el) = find(sel) {
        if off {
            set(&el, "disabled", "");
        } else {
            let _ = el.remove_attribute("disabled");
        }
    }
}

/// Keeps the controls' state in step with the lab: re-runs whenever what they show changes.
pub fn patch(lab: Lab) {
    let ui = lab.ui();
    Effect::new(move |_| {
        let (k, n, playing) = (lab.cursor.get(), lab.steps(), lab.playing.get());
        disable(Act::Back.selector(), k == 0);
        // At the start of a run the reader has not changed, a restart would change nothing.
        let fresh = lab.run.with(|r| r.commands().is_empty());
        disable(Act::Restart.selector(), k == 0 && fresh && !playing);
        disable(Act::Step.selector(), k >= n);
        disable(Act::End.selector(), k >= n);
        if let Some(b) = find(Act::Play.selector()) {
            let (label, text) = if playing {
                (ui.pause(), format!("❚❚ {}", ui.pause()))
            } else {
                (ui.play(), format!("▶ {}", ui.play()))
            };
            set(&b, "aria-pressed", if playing { "true" } else { "false" });
            set(&b, "aria-label", label);
            set_text(&b, &text);
        }
        if let Some(c) = find("[data-testid=step-counter]") {
            set_text(&c, &format!("{k} / {n}"));
        }
        if let Some(s) =
            find(Act::Scrub.selector()).and_then(|e| e.dyn_into::<HtmlInputElement>().ok())
        {
            set(&s, "max", &n.to_string());
            s.set_value(&k.to_string());
        }
        let select = |sel: &str, v: &str| {
            if let Some(s) = find(sel).and_then(|e| e.dyn_into::<HtmlSelectElement>().ok()) {
                s.set_value(v);
            }
        };
        select(Act::Speed.selector(), speed_text(lab.speed.get()));
        let p = lab.parallel_n.get();
        if let Some(b) = find(Act::Parallel.selector()) {
            set_text(&b, &count(ui.parallel_n_retries(), p as usize, &[]));
        }
        if let Some(i) =
            find(Act::ParallelN.selector()).and_then(|e| e.dyn_into::<HtmlInputElement>().ok())
        {
            if i.value() != p.to_string() {
                i.set_value(&p.to_string());
            }
        }
        let toggles = lab.toggles.get();
        let nodes = lab.run.with(|r| r.scenario.nodes());
        lab.world.with(|w| {
            let s = &w.scenario;
            for n in nodes.into_iter().filter(|n| n.can_crash()) {
                let Some(b) = find(&Action::Crash(n).selector()) else {
                    continue;
                };
                let up = w.is_up(n);
                let (verb, testid) = if up {
                    (ui.crash(), "crash")
                } else {
                    (ui.restart_node(), "restart")
                };
                set(&b, "data-testid", &format!("btn-{testid}-{}", n.slug()));
                set(&b, "class", if up { "danger" } else { "" });
                set_text(&b, &format!("{verb}: {}", node_name(ui, s, n)));
            }
        });
        for t in Toggle::ALL {
            if let Some(c) = find(&Action::Toggle(t).selector())
                .and_then(|e| e.dyn_into::<HtmlInputElement>().ok())
            {
                c.set_checked(toggles.has(t));
            }
        }
    });
}
