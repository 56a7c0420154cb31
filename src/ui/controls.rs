//! The reader's controls: the scenario picker, the language switch, playback,
//! faults and switches. Each control sends the lab a command; none decides
//! anything itself.
//!
//! For the size budget the controls are plain markup ([`picker`], [`playback`],
//! [`faults`], [`switches`], [`lang_switch`]; pure, tested on the host), written
//! once per page or scenario, never re-rendered (so focus stays where the reader
//! put it). [`patch`] then keeps their state (disabled, pressed, values, labels)
//! in step with the lab; the page's one delegated listener ([`super::listen`])
//! calls the functions here for a control's [`Act`].

use super::act::{Act, Action};
use super::state::Lab;
use crate::html::{Html, Markup};
use crate::lesson::{name, toggle_label, Lang, Ui};
use crate::narrate::{count, fill, node_name};
use crate::params::{echo, retry_number, speed_factor, speed_text, SPEEDS};
use idem_sim::scenario::{Group, Retry, Scenario, ScenarioId, Toggle, ToggleKind};
use idem_sim::{Command, NodeId};
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlInputElement, HtmlSelectElement};

/// The lab's head for scenario `id`: its title, the picker and its one-line summary.
/// Written anew with the scenario (the picker keeps the focus: see [`on_event`]).
pub fn lab_head(ui: &Ui, lang: Lang, id: ScenarioId) -> Markup {
    let name = name(lang, id);
    let mut h = Html::new();
    h.open("div", &[("class", "lab__head")]);
    h.el(
        "h2",
        &[
            ("id", "lab-title"),
            ("data-testid", "scenario-title"),
            ("tabindex", "-1"),
        ],
        name.title,
    );
    h.markup(&picker(ui, lang, id));
    // Sharing the state is no fault: it sits with the scenario, not under Faults.
    button(&mut h, Act::Copy, "btn-copy-link", "", ui.copy_link);
    h.close("div");
    h.el("p", &[("class", "summary-line")], name.summary);
    // Where the verdict of a question is announced to screen readers (see ui::lesson).
    h.el(
        "p",
        &[
            ("id", "announce"),
            ("class", "sr-only"),
            ("aria-live", "polite"),
        ],
        "",
    );
    h.finish()
}

/// The picker: the four scenarios, then the pitfalls; `current` is selected.
pub fn picker(ui: &Ui, lang: Lang, current: ScenarioId) -> Markup {
    let mut h = Html::new();
    h.open("label", &[("class", "picker")]);
    h.el("span", &[("class", "picker__label")], ui.scenario_picker);
    h.open(
        "select",
        &[
            ("data-testid", "scenario-picker"),
            ("data-act", Act::Scenario.name()),
        ],
    );
    let groups = [
        (ui.scenario_picker_seed_group, Group::Seed),
        (ui.scenario_picker_pitfalls_group, Group::Pitfall),
    ];
    for (label, group) in groups {
        h.open("optgroup", &[("label", label)]);
        for id in ScenarioId::of(group) {
            let selected = if id == current { "selected" } else { "" };
            h.el(
                "option",
                &[("value", id.as_str()), (selected, "")],
                name(lang, id).title,
            );
        }
        h.close("optgroup");
    }
    h.close("select").close("label");
    h.finish()
}

/// A button: `(act, testid, label, text)`; an empty label means the text names it.
fn button(h: &mut Html, act: Act, testid: &str, label: &str, text: &str) {
    h.el(
        "button",
        &[
            ("type", "button"),
            ("data-act", act.name()),
            ("data-testid", testid),
            if label.is_empty() {
                ("", "")
            } else {
                ("aria-label", label)
            },
            if label.is_empty() {
                ("", "")
            } else {
                ("title", label)
            },
        ],
        text,
    );
}

/// Play, pause, step, back, to the end, restart, the counter, the speed and the timeline.
pub fn playback(ui: &Ui) -> Markup {
    let mut h = Html::new();
    h.open(
        "div",
        &[
            ("class", "playback"),
            ("role", "toolbar"),
            ("aria-label", ui.lab_title),
        ],
    );
    button(&mut h, Act::Back, "btn-back", ui.back, "◀");
    h.el(
        "button",
        &[
            ("type", "button"),
            ("class", "primary"),
            ("data-act", Act::Play.name()),
            ("data-testid", "btn-play"),
            ("aria-pressed", "false"),
            ("aria-label", ui.play),
        ],
        &format!("▶ {}", ui.play),
    );
    button(
        &mut h,
        Act::Step,
        "btn-step",
        ui.step,
        &format!("{} ▶", ui.step),
    );
    button(&mut h, Act::End, "btn-end", ui.to_end, "⇥");
    button(&mut h, Act::Restart, "btn-restart", ui.restart, "↺");
    h.el(
        "span",
        &[
            ("class", "counter"),
            ("data-testid", "step-counter"),
            ("aria-live", "off"),
        ],
        "",
    );
    h.open("label", &[("class", "speed")]);
    h.el("span", &[], ui.speed);
    h.open(
        "select",
        &[("data-testid", "speed"), ("data-act", Act::Speed.name())],
    );
    for (text, _) in SPEEDS {
        h.el("option", &[("value", text)], &format!("{text}×"));
    }
    h.close("select").close("label").close("div");
    h.open(
        "input",
        &[
            ("class", "scrubber"),
            ("type", "range"),
            ("data-testid", "scrubber"),
            ("data-act", Act::Scrub.name()),
            ("min", "0"),
            ("aria-label", ui.timeline),
        ],
    );
    h.el("p", &[("class", "hint muted")], ui.keyboard_hint);
    h.finish()
}

/// The sequence diagram's switch: it shows only what has happened, unless the reader asks.
pub fn future_switch(ui: &Ui) -> Markup {
    let mut h = Html::new();
    h.open("label", &[("class", "switch")]);
    h.open(
        "input",
        &[
            ("type", "checkbox"),
            ("data-act", Act::Future.name()),
            ("data-testid", "show-future"),
        ],
    );
    h.el("span", &[], ui.show_future).close("label");
    h.finish()
}

/// A fault the reader can inject.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Fault {
    Ack,
    Parallel,
    Crash(NodeId),
    H1,
    H25,
}

/// Every fault offered with the scenario's `nodes`, in the order they are drawn.
pub fn offered_faults(nodes: &[NodeId]) -> Vec<Fault> {
    let mut v = Vec::new();
    if nodes.contains(&NodeId::Client) {
        v.extend([Fault::Ack, Fault::Parallel]);
    }
    v.extend(
        nodes
            .iter()
            .filter(|n| n.can_crash())
            .map(|n| Fault::Crash(*n)),
    );
    v.extend([Fault::H1, Fault::H25]);
    v
}

/// The fault scenario `s` is about, offered in its first screen (the others wait
/// in "What else could happen?"): the crash it scripts, the clock it moves, the
/// duplicates its several API instances race, else the lost acknowledgement.
pub fn lead_fault(s: &Scenario) -> Fault {
    let clock = s
        .script
        .iter()
        .any(|x| matches!(x.command, Command::AdvanceClock(_)));
    let client = s.nodes().contains(&NodeId::Client);
    match s.crashes.first() {
        Some(c) => Fault::Crash(c.node),
        None if clock => Fault::H25,
        None if client && s.apis > 1 => Fault::Parallel,
        None if client => Fault::Ack,
        None => offered_faults(&s.nodes())[0],
    }
}

/// The buttons of `faults` (a lost ack, parallel retries, crashes, the clock) in a
/// fieldset of the lab's faults.
pub fn faults(ui: &Ui, faults: &[Fault]) -> Markup {
    let mut h = Html::new();
    h.open("fieldset", &[("class", "faults")]);
    h.el("legend", &[], ui.faults);
    for f in faults {
        match f {
            Fault::Ack => button(&mut h, Act::Ack, "btn-drop-ack", "", ui.lose_next_ack),
            // Its count is the client's: "Change the client" ([`policy`]).
            Fault::Parallel => button(&mut h, Act::Parallel, "btn-parallel-retries", "", ""),
            Fault::Crash(n) => {
                h.open("button", &[("type", "button")]);
                Action::Crash(*n).put(&mut h);
                h.close("button");
            }
            Fault::H1 => button(&mut h, Act::H1, "btn-advance-1h", "", ui.advance_1h),
            Fault::H25 => button(&mut h, Act::H25, "btn-advance-25h", "", ui.advance_25h),
        }
    }
    h.close("fieldset");
    h.finish()
}

/// A section of controls the reader opens: `summary` names it, `body` is its markup.
/// `sec` names it for the page (`data-sec`: the question of a fix-it opens "defences").
pub fn section(sec: &str, summary: &str, body: &Markup) -> Markup {
    if body.is_empty() {
        return Markup::default();
    }
    let mut h = Html::new();
    h.open("details", &[("class", "more"), ("data-sec", sec)]);
    h.el(
        "summary",
        &[("data-testid", &format!("sec-{sec}"))],
        summary,
    );
    h.open("div", &[("class", "more__body")]);
    h.markup(body).close("div").close("details");
    h.finish()
}

/// The scenario's switches of `kinds` (its defences, or the bugs and variants of its
/// story), under `legend`; `testid` names the fieldset. Empty if none is offered.
pub fn switches(
    ui: &Ui,
    offered: &[Toggle],
    scenario: ScenarioId,
    (legend, testid, kinds): (&str, &str, &[ToggleKind]),
) -> Markup {
    let mut h = Html::new();
    let ts: Vec<Toggle> = offered
        .iter()
        .copied()
        .filter(|t| kinds.contains(&t.kind()))
        .collect();
    if ts.is_empty() {
        return Markup::default();
    }
    h.open(
        "fieldset",
        &[("class", "switches"), ("data-testid", testid)],
    );
    h.el("legend", &[], legend);
    for t in ts {
        let testid = format!("toggle-{}", t.id());
        h.open("label", &[("class", "switch")]);
        h.open("input", &[("type", "checkbox"), ("data-testid", &testid)]);
        Action::Toggle(t).put(&mut h);
        h.el("span", &[], toggle_label(ui, t, Some(scenario)))
            .close("label");
    }
    h.close("fieldset");
    h.finish()
}

/// The defences' group of [`switches`].
pub fn defence_group(ui: &Ui) -> (&str, &'static str, &'static [ToggleKind]) {
    (ui.defences, "defences", &[ToggleKind::Defence])
}

/// The bugs' and variants' group of [`switches`].
pub fn variant_group(ui: &Ui) -> (&str, &'static str, &'static [ToggleKind]) {
    (
        ui.bugs_variants,
        "variants",
        &[ToggleKind::Bug, ToggleKind::Variant],
    )
}

/// The labels of the policy's numbers, in [`Retry::numbers`]' order.
fn retry_labels(ui: &Ui) -> [&str; 5] {
    [
        ui.retry_timeout,
        ui.retry_attempts,
        ui.retry_backoff,
        ui.retry_jitter,
        ui.retry_deadline,
    ]
}

/// The client's retry policy as the five numbers the reader changes (`n`, the
/// run's: [`Retry::numbers`]), under the switches (which hold its presets; the
/// client pane shows the policy and its schedule): written once per scenario;
/// [`show_policy`] keeps their values.
pub fn policy(ui: &Ui, n: [u64; 5]) -> Markup {
    let mut h = Html::new();
    h.open(
        "fieldset",
        &[("class", "policy"), ("data-testid", "retry-form")],
    );
    h.el("legend", &[], ui.retry_policy);
    for (i, label) in retry_labels(ui).into_iter().enumerate() {
        h.open("label", &[]).el("span", &[], label);
        h.open("input", &[("type", "number"), ("value", &n[i].to_string())]);
        Action::Retry(i).put(&mut h);
        h.close("label");
    }
    // How many retries the parallel fault fires at once is the client's too: it waits
    // here while the fault's button is in the first screen (issue 26).
    h.open("label", &[]).el("span", &[], ui.parallel_count);
    h.open(
        "input",
        &[
            ("type", "number"),
            ("min", "2"),
            ("max", "10"),
            ("value", "3"),
            ("data-testid", "parallel-n"),
            ("data-act", Act::ParallelN.name()),
        ],
    );
    h.close("label").close("fieldset");
    h.finish()
}

/// The notice for number `i` of a policy out of range (a link's or a field's).
pub fn retry_range(ui: &Ui, i: usize, typed: &str, used: u64) -> String {
    let (lo, hi) = Retry::BOUNDS[i];
    fill(
        ui.retry_range,
        &[
            retry_labels(ui)[i],
            &lo.to_string(),
            &hi.to_string(),
            &echo(typed),
            &used.to_string(),
        ],
    )
}

/// Static markup, written once; its state is kept by [`patch`].
#[component]
pub fn Controls(
    /// The controls' markup.
    html: Markup,
) -> impl IntoView {
    view! { <div class="contents" inner_html=super::fixed(html)></div> }
}

fn find(sel: &str) -> Option<Element> {
    document().query_selector(sel).ok().flatten()
}

fn set(el: &Element, attr: &str, value: &str) {
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
                (ui.pause, format!("❚❚ {}", ui.pause))
            } else {
                (ui.play, format!("▶ {}", ui.play))
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
            set_text(&b, &count(ui.parallel_n_retries, p as usize, &[]));
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
                    (ui.crash, "crash")
                } else {
                    (ui.restart_node, "restart")
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

/// Crashes node `n`, or restarts it if it is down.
pub fn crash(lab: Lab, n: NodeId) {
    let up = lab.world.with_untracked(|w| w.is_up(n));
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
pub fn pick_scenario(lab: Lab, el: &Element) {
    if let Some(id) = ScenarioId::parse(&value(el)) {
        let focused = document().active_element().is_some_and(|a| a == *el);
        lab.open(id, 0);
        // The picker is written anew with the lab: keep a reader who used it on it.
        if focused {
            super::lesson::focus_later(Act::Scenario.selector());
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
        let msg = fill(ui.parallel_range, &[&echo(&typed), &n.to_string()]);
        lab.notices.update(|v| v.push(msg));
    }
}

/// The first screen's button: the lab into view ([`super::lesson::lab_into_view`]), playing.
pub fn try_lab(lab: Lab) {
    super::lesson::lab_into_view(lab);
    if !lab.playing.get_untracked() {
        lab.toggle_play();
    }
    super::lesson::focus_later(Act::Play.selector());
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
    if let Some(f) = find(".policy") {
        super::set_outer(&f, &policy(lab.ui(), n));
    }
}

/// The timeline moved.
pub fn scrub(lab: Lab, el: &Element) {
    if let Ok(k) = value(el).parse::<usize>() {
        lab.playing.set(false);
        lab.go(k);
    }
}

/// Copies the page's address (kept in step with the state) to the clipboard. Where
/// the page may not (inside a frame, or when the browser refuses), the notice offers
/// the link in a selected field to copy by hand.
pub fn copy_link(lab: Lab) {
    use wasm_bindgen::closure::Closure;
    let ui = lab.ui();
    let href = window().location().href().unwrap_or_default();
    let framed =
        window().top().ok().flatten().is_none_or(|t| {
            wasm_bindgen::JsValue::from(t) != wasm_bindgen::JsValue::from(window())
        });
    let offer = move |link: String| {
        SHARE.with(|s| *s.borrow_mut() = Some(link));
        lab.notices.update(|n| n.push(ui.copy_failed.to_string()));
        request_animation_frame(|| {
            if let Some(i) =
                find("[data-testid=share-link]").and_then(|e| e.dyn_into::<HtmlInputElement>().ok())
            {
                let _ = i.focus();
                i.select();
            }
        });
    };
    if framed {
        return offer(href);
    }
    let ok = Closure::<dyn FnMut(wasm_bindgen::JsValue)>::new(move |_| {
        lab.notices.update(|n| n.push(ui.link_copied.to_string()))
    });
    let failed = Closure::<dyn FnMut(wasm_bindgen::JsValue)>::new({
        let href = href.clone();
        move |_| offer(href.clone())
    });
    let _ = window()
        .navigator()
        .clipboard()
        .write_text(&href)
        .then2(&ok, &failed);
    // Each runs at most once, after this function returns; the page keeps them.
    ok.forget();
    failed.forget();
}

/// Where the reader last acted: the notices appear there, not at the top of the page.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Near {
    /// Above the lesson: what the link or the page itself reports.
    Top,
    /// The lab's head: the picker, Copy link.
    Head,
    /// Under playback (and the topology's messages).
    Play,
    Faults,
    Switches,
    /// Under the policy's fields (below the switches).
    Policy,
    /// Under the lab: the question, the progress.
    Text,
}

thread_local! {
    static NEAR: std::cell::Cell<Near> = const { std::cell::Cell::new(Near::Top) };
    /// The control the reader last used.
    static CONTROL: std::cell::RefCell<Option<Element>> = const { std::cell::RefCell::new(None) };
    /// The link Copy link could not copy, offered in a field.
    static SHARE: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Notes that the reader acted at `place`.
pub fn near(place: Near) {
    NEAR.with(|n| n.set(place));
}

/// Notes the control the reader used: the notices go after its own group (a fault
/// of the first screen, or one in "What else could happen?").
pub fn near_control(el: &Element) {
    CONTROL.with(|c| *c.borrow_mut() = Some(el.clone()));
}

/// Moves the notices (`#notices`) beside the control the reader last used: after
/// its group of controls, or above the lesson for what the page itself reports.
pub fn place_notices(el: &Element) {
    let near = NEAR.with(|n| n.get());
    let (sel, group) = match near {
        // After the header's place, not inside it: a language switch writes it anew.
        Near::Top => ("#page-header", false),
        Near::Head => (".lab__head", true),
        Near::Play => (".playback", true),
        Near::Faults => (".faults", true),
        Near::Switches => (".switches", false),
        Near::Policy => (".policy", false),
        Near::Text => (".lab__text", false),
    };
    // A group of which there are several: the one of the control used.
    let own = CONTROL.with(|c| {
        let el = c.borrow();
        el.as_ref()?.closest(sel).ok()?
    });
    let Some(at) = own.or_else(|| find(sel)).or_else(|| find(".lab__head")) else {
        return;
    };
    // A control's group is its `Controls` wrapper (see [`Controls`]); inside a section
    // the reader opened, the group itself.
    let at = match at.parent_element() {
        Some(p) if group && p.class_list().contains("contents") => p,
        _ => at,
    };
    if at.next_element_sibling().as_ref() != Some(el) {
        let _ = at.insert_adjacent_element("afterend", el);
    }
    // On a phone the lab is reordered (style/main.css): under playback it follows playback.
    set(
        el,
        "data-near",
        if near == Near::Play { "play" } else { "" },
    );
    // Once laid out (its text in, the sections near it drawn at their own heights), a
    // notice beside a control that lies past an edge of the screen is brought into view.
    if near != Near::Top {
        let el = el.clone();
        request_animation_frame(move || {
            let r = el.get_bounding_client_rect();
            let h = window()
                .inner_height()
                .ok()
                .and_then(|h| h.as_f64())
                .unwrap_or(f64::MAX);
            if r.height() > 0.0 && (r.top() < 0.0 || r.bottom() > h) {
                el.scroll_into_view_with_bool(r.top() < 0.0);
            }
        });
    }
}

/// The link to offer in a field, if copying it failed; `clear` forgets it.
pub fn share_link(clear: bool) -> Option<String> {
    SHARE.with(|s| {
        if clear {
            s.borrow_mut().take()
        } else {
            s.borrow().clone()
        }
    })
}

/// Shows a step count like "Step 3 of 9" for screen readers.
pub fn step_of(ui: &Ui, k: usize, n: usize) -> String {
    fill(ui.step_of, &[&k.to_string(), &n.to_string()])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lesson::ui;

    /// Each scenario opens with the one fault it is about, and it is one the lab offers.
    #[test]
    fn each_scenario_leads_with_the_fault_it_is_about() {
        let lead = |id: &str| lead_fault(&idem_sim::scenario::by_id(id).unwrap());
        assert_eq!(lead("naive-post"), Fault::Ack);
        assert_eq!(lead("concurrent-duplicates"), Fault::Parallel);
        assert_eq!(lead("ttl-expiry"), Fault::H25);
        for s in idem_sim::scenario::all() {
            assert!(
                offered_faults(&s.nodes()).contains(&lead_fault(s)),
                "{}",
                s.id
            );
        }
    }

    #[test]
    fn markup_names_every_control() {
        let ui = ui(Lang::En);
        let p = playback(ui);
        for act in ["back", "play", "step", "end", "restart", "speed", "scrub"] {
            assert!(p.contains(&format!("data-act=\"{act}\"")), "{act}");
        }
        let f = faults(
            ui,
            &offered_faults(&[NodeId::Client, NodeId::Api(0), NodeId::Redis]),
        );
        assert!(
            f.contains("data-act=\"ack\"") && f.contains("data-node=\"api-a\""),
            "{f}"
        );
        assert!(!faults(ui, &offered_faults(&[NodeId::Api(0)])).contains("btn-drop-ack"));
        let offered = [Toggle::Fingerprint, Toggle::NewKeyPerRetry];
        let id = ScenarioId::IdempotencyKey;
        let d = switches(ui, &offered, id, defence_group(ui));
        let v = switches(ui, &offered, id, variant_group(ui));
        assert!(d.contains("data-testid=\"defences\"") && v.contains("data-testid=\"variants\""));
        assert!(!d.contains("new-key-per-retry") && !v.contains("fingerprint"));
        assert_eq!(
            switches(ui, &[Toggle::Fingerprint], id, variant_group(ui)),
            ""
        );
        let sec = section("defences", "Try a defence", &d);
        assert!(
            sec.starts_with("<details class=\"more\" data-sec=\"defences\""),
            "{sec}"
        );
        assert_eq!(
            section("client", "Change the client", &Markup::default()),
            ""
        );
        assert!(
            picker(ui, Lang::En, ScenarioId::TtlExpiry).contains("<option value=\"naive-post\">")
        );
        assert!(picker(ui, Lang::En, ScenarioId::TtlExpiry)
            .contains("<option value=\"ttl-expiry\" selected=\"\">"));
        let head = lab_head(ui, Lang::En, ScenarioId::NaivePost);
        assert!(!p.contains("show-future") && future_switch(ui).contains("show-future"));
        assert!(
            head.starts_with("<div class=\"lab__head\"><h2 id=\"lab-title\""),
            "{head}"
        );
    }
}
