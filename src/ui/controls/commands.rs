//! What each control does: the page's one delegated listener
//! ([`crate::ui::listen`]) calls these for a control's `Act`; each sends the lab a
//! command, none decides anything itself.

use super::markup::{policy, retry_range, Ctl};
use super::patch::el;
use crate::narrate::fill;
use crate::params::{echo, retry_number, speed_factor};
use crate::ui::act::Act;
use crate::ui::lesson::Learn;
use crate::ui::state::Lab;
use idem_sim::scenario::{Retry, ScenarioId, Toggle};
use idem_sim::{Command, NodeId};
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlInputElement, HtmlSelectElement};

/// Crashes node `n`, or restarts it if it is down.
pub fn crash(lab: Lab, n: NodeId) {
    let up = lab.step.with_untracked(|s| s.world.is_up(n));
    lab.command(if up {
        Command::Crash(n)
    } else {
        Command::Restart(n)
    });
}

/// The value of a control: an input's or a select's.
fn value(el: &Element) -> String {
    el.dyn_ref::<HtmlInputElement>()
        .map(|i| i.value())
        .or_else(|| el.dyn_ref::<HtmlSelectElement>().map(|s| s.value()))
        .unwrap_or_default()
}

/// The picker chose a scenario.
pub fn pick_scenario(lab: Lab, learn: Learn, el: &Element) {
    if let Some(id) = ScenarioId::parse(&value(el)) {
        let focused = document().active_element().is_some_and(|a| a == *el);
        learn.open(lab, id, 0);
        // The picker is written anew with the lab: keep a reader who used it on it.
        if focused {
            crate::ui::lesson::keep_focus(Act::Scenario.selector());
        }
    }
}

pub fn speed(lab: Lab, el: &Element) {
    if let Some(s) = speed_factor(&value(el)) {
        lab.speed.set(s);
    }
}

/// The button's label follows the field as the reader types a valid count.
pub fn parallel_typed(lab: Lab, el: &Element) {
    match value(el).parse::<u32>() {
        Ok(n) if Command::PARALLEL.contains(&n) => lab.parallel_n.set(n),
        _ => {}
    }
}

/// On leaving the field, a count out of range is brought into it, and said so.
pub fn parallel_left(lab: Lab, el: &Element) {
    let typed = value(el);
    let n = typed
        .parse::<u32>()
        .unwrap_or(3)
        .clamp(*Command::PARALLEL.start(), *Command::PARALLEL.end());
    lab.parallel_n.set(n);
    if let Some(i) = el.dyn_ref::<HtmlInputElement>() {
        i.set_value(&n.to_string());
    }
    if typed != n.to_string() {
        let ui = lab.ui();
        let msg = fill(ui.parallel_range(), &[&echo(&typed), &n.to_string()]);
        lab.notices.update(|v| v.push(msg));
    }
}

/// The first screen's button: the lab into view ([`crate::ui::lesson::lab_into_view`]), playing.
pub fn try_lab(lab: Lab) {
    crate::ui::lesson::lab_into_view(lab);
    if !lab.playing.get_untracked() {
        lab.toggle_play();
    }
    crate::ui::lesson::focus_later(Act::Play.selector());
}

/// Switch `t` of the scenario flipped (`on`).
pub fn toggle(lab: Lab, t: Toggle, on: bool) {
    lab.set_toggle(t, on);
    show_policy(lab);
}

/// A number of the policy changed (the field left, Enter, an arrow key): the run
/// replays under it, with the preset that set that number off; a number out of
/// range is brought into it, and said so.
pub fn retry(lab: Lab, i: usize, el: &Element) {
    let (r, toggles) = lab
        .run
        .with_untracked(|r| (r.scenario.retry, r.config.toggles));
    let typed = value(el);
    let (r, ok) = retry_number(r, i, &typed);
    let toggles = Retry::preset(i).map_or(toggles, |t| toggles.with(t, false));
    // Only this number can change (its preset is off): the field shows what runs.
    let n = r.under(toggles).numbers()[i];
    if !ok {
        let msg = retry_range(lab.ui(), i, &typed, n);
        lab.notices.update(|v| v.push(msg));
    }
    el.unchecked_ref::<HtmlInputElement>()
        .set_value(&n.to_string());
    lab.rerun(r, toggles);
}

/// The policy's fields written anew with the run's policy (under its presets),
/// after a preset or another run (none of the fields has the focus then).
pub fn show_policy(lab: Lab) {
    let n = lab
        .run
        .with_untracked(|r| r.scenario.retry_policy(r.config.toggles).numbers());
    if let Some(f) = el(Ctl::Policy) {
        crate::ui::set_outer(&f, &policy(lab.ui(), n));
    }
}

/// The timeline moved.
pub fn scrub(lab: Lab, el: &Element) {
    if let Ok(k) = value(el).parse::<usize>() {
        lab.playing.set(false);
        lab.go(k);
    }
}
