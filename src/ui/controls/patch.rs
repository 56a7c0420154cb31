//! The controls' state kept in step with the lab: the markup is written once
//! ([`super::markup`]), and [`patch`] sets what changes (disabled, pressed,
//! values, labels) on the elements, each reached by its [`Ctl`], whose id the
//! markup wrote (`every_control_the_markup_writes_is_one_the_patch_reaches`).

use super::markup::Ctl;
use crate::narrate::{count, node_name};
use crate::params::speed_text;
use crate::ui::state::Lab;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlInputElement, HtmlSelectElement};

pub(super) use crate::ui::find;

/// The element of control `c`, if the lab shows it.
pub(super) fn el(c: Ctl) -> Option<Element> {
    document().get_element_by_id(&c.id())
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

/// The input element of control `c`.
fn input(c: Ctl) -> Option<HtmlInputElement> {
    el(c).and_then(|e| e.dyn_into().ok())
}

fn disable(c: Ctl, off: bool) {
    if let Some(el) = el(c) {
        if off {
            set(&el, "disabled", "");
        } else {
            let _ = el.remove_attribute("disabled");
        }
    }
}

/// Keeps the controls' state in step with the lab: re-runs whenever what they show changes.
/// From the lab's second stage on (`Lab::whole`): until then the controls are as their
/// markup wrote them, out of view (the lab is not even laid out).
pub fn patch(lab: Lab) {
    let ui = lab.ui();
    crate::ui::staged(lab, move || {
        let (k, n, playing) = (lab.cursor.get(), lab.steps(), lab.playing.get());
        disable(Ctl::Back, k == 0);
        // At the start of a run the reader has not changed, a restart would change nothing.
        let fresh = lab.run.with(|r| r.commands().is_empty());
        disable(Ctl::Restart, k == 0 && fresh && !playing);
        disable(Ctl::Step, k >= n);
        disable(Ctl::End, k >= n);
        if let Some(b) = el(Ctl::Play) {
            let (label, text) = if playing {
                (ui.pause(), format!("❚❚ {}", ui.pause()))
            } else {
                (ui.play(), format!("▶ {}", ui.play()))
            };
            set(&b, "aria-pressed", if playing { "true" } else { "false" });
            set(&b, "aria-label", label);
            set_text(&b, &text);
        }
        if let Some(c) = el(Ctl::Counter) {
            set_text(&c, &format!("{k} / {n}"));
        }
        if let Some(s) = input(Ctl::Scrub) {
            set(&s, "max", &n.to_string());
            s.set_value(&k.to_string());
        }
        if let Some(s) = el(Ctl::Speed).and_then(|e| e.dyn_into::<HtmlSelectElement>().ok()) {
            s.set_value(speed_text(lab.speed.get()));
        }
        let p = lab.parallel_n.get();
        if let Some(b) = el(Ctl::Parallel) {
            set_text(&b, &count(ui.parallel_n_retries(), p as usize, &[]));
        }
        if let Some(i) = input(Ctl::ParallelN) {
            if i.value() != p.to_string() {
                i.set_value(&p.to_string());
            }
        }
        let (nodes, offered, toggles) = lab.run.with(|r| {
            let offered: Vec<_> = r.scenario.toggles.iter().map(|(t, _)| *t).collect();
            (r.scenario.nodes(), offered, r.config.toggles)
        });
        lab.step.with(|st| {
            let w = &st.world;
            let s = &w.scenario;
            for c in Ctl::of(&nodes, &offered) {
                match c {
                    Ctl::Crash(n) => {
                        let Some(b) = el(c) else { continue };
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
                    Ctl::Toggle(t) => {
                        if let Some(i) = input(c) {
                            i.set_checked(toggles.has(t));
                        }
                    }
                    _ => {}
                }
            }
        });
    });
}
