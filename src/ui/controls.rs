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

use super::act::Act;
use super::state::Lab;
use crate::html::Html;
use crate::lesson::{name, toggle_label, Lang, Ui};
use crate::narrate::{fill, node_name};
use crate::params::{echo, retry_number, speed_factor, speed_text, SPEEDS};
use idem_sim::scenario::{Group, Retry, ScenarioId, Toggle, ToggleKind};
use idem_sim::{Command, NodeId};
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlInputElement, HtmlSelectElement};

/// The lab's head for scenario `id`: its title, the picker and its one-line summary.
/// Written anew with the scenario (the picker keeps the focus: see [`on_event`]).
pub fn lab_head(ui: &Ui, lang: Lang, id: ScenarioId) -> String {
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
    let mut out = h.finish();
    out.push_str(&picker(ui, lang, id));
    let mut h = Html::new();
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
    out.push_str(&h.finish());
    out
}

/// The picker: the four scenarios, then the pitfalls; `current` is selected.
pub fn picker(ui: &Ui, lang: Lang, current: ScenarioId) -> String {
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
pub fn playback(ui: &Ui) -> String {
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
    // The sequence diagram shows only what has happened, unless the reader asks: the
    // switch shares the keyboard hint's line, so the controls below do not move.
    h.open("p", &[("class", "hint muted")])
        .text(ui.keyboard_hint)
        .text(" · ");
    h.open("label", &[]);
    h.open(
        "input",
        &[
            ("type", "checkbox"),
            ("data-act", Act::Future.name()),
            ("data-testid", "show-future"),
        ],
    );
    h.text(ui.show_future).close("label").close("p");
    h.finish()
}

/// Faults the reader can inject: a lost ack, parallel retries, crashes, the clock;
/// and the link to copy. `nodes` are the scenario's nodes.
pub fn faults(ui: &Ui, nodes: &[NodeId]) -> String {
    let mut h = Html::new();
    h.open("fieldset", &[("class", "faults")]);
    h.el("legend", &[], ui.faults);
    if nodes.contains(&NodeId::Client) {
        button(&mut h, Act::Ack, "btn-drop-ack", "", ui.lose_next_ack);
        h.open("span", &[("class", "group")]).open("label", &[]);
        h.el("span", &[("class", "sr-only")], ui.parallel_count);
        h.open(
            "input",
            &[
                ("type", "number"),
                ("min", "2"),
                ("max", "10"),
                ("value", "3"),
                ("data-testid", "parallel-n"),
                ("data-act", Act::ParallelN.name()),
                ("aria-label", ui.parallel_count),
            ],
        );
        h.close("label");
        button(&mut h, Act::Parallel, "btn-parallel-retries", "", "");
        h.close("span");
    }
    for n in nodes.iter().filter(|n| n.can_crash()) {
        let slug = n.slug();
        h.el(
            "button",
            &[
                ("type", "button"),
                ("data-act", Act::Crash.name()),
                ("data-node", &slug),
            ],
            "",
        );
    }
    button(&mut h, Act::H1, "btn-advance-1h", "", ui.advance_1h);
    button(&mut h, Act::H25, "btn-advance-25h", "", ui.advance_25h);
    h.close("fieldset");
    h.finish()
}

/// The scenario's switches: defences, then the bugs and variants of its story.
pub fn switches(ui: &Ui, offered: &[Toggle], scenario: ScenarioId) -> String {
    let mut h = Html::new();
    let groups = [
        (ui.defences, "defences", &[ToggleKind::Defence][..]),
        (
            ui.bugs_variants,
            "variants",
            &[ToggleKind::Bug, ToggleKind::Variant][..],
        ),
    ];
    for (legend, testid, kinds) in groups {
        let ts: Vec<Toggle> = offered
            .iter()
            .copied()
            .filter(|t| kinds.contains(&t.kind()))
            .collect();
        if ts.is_empty() {
            continue;
        }
        h.open(
            "fieldset",
            &[("class", "switches"), ("data-testid", testid)],
        );
        h.el("legend", &[], legend);
        for t in ts {
            let testid = format!("toggle-{}", t.id());
            h.open("label", &[("class", "switch")]);
            h.open(
                "input",
                &[
                    ("type", "checkbox"),
                    ("data-testid", &testid),
                    ("data-act", Act::Toggle.name()),
                    ("data-toggle", t.id()),
                ],
            );
            h.el("span", &[], toggle_label(ui, t, Some(scenario)))
                .close("label");
        }
        h.close("fieldset");
    }
    h.finish()
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
pub fn policy(ui: &Ui, n: [u64; 5]) -> String {
    let mut h = Html::new();
    h.open(
        "fieldset",
        &[("class", "policy"), ("data-testid", "retry-form")],
    );
    h.el("legend", &[], ui.retry_policy);
    for (i, label) in retry_labels(ui).into_iter().enumerate() {
        h.open("label", &[]).el("span", &[], label);
        h.open(
            "input",
            &[
                ("type", "number"),
                ("data-act", Act::Retry.name()),
                ("data-retry", &"01234"[i..=i]),
                ("value", &n[i].to_string()),
            ],
        );
        h.close("label");
    }
    h.close("fieldset");
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
pub fn Controls(html: String) -> impl IntoView {
    view! { <div class="contents" inner_html=html></div> }
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
            set_text(&b, &fill(ui.parallel_n_retries, &[&p.to_string()]));
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
                let Some(b) = find(&format!(
                    "{}[data-node={}]",
                    Act::Crash.selector(),
                    n.slug()
                )) else {
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
            if let Some(c) = find(&format!("[data-toggle={}]", t.id()))
                .and_then(|e| e.dyn_into::<HtmlInputElement>().ok())
            {
                c.set_checked(toggles.has(t));
            }
        }
    });
}

/// Crashes the button's node, or restarts it if it is down.
pub fn crash(lab: Lab, el: &Element) {
    let node = el
        .get_attribute("data-node")
        .and_then(|s| NodeId::from_slug(&s));
    if let Some(n) = node {
        let up = lab.world.with_untracked(|w| w.is_up(n));
        lab.command(if up {
            Command::Crash(n)
        } else {
            Command::Restart(n)
        });
    }
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

/// The first screen's button: the lab into view, playing.
pub fn try_lab(lab: Lab) {
    if let Some(l) = document().get_element_by_id("lab") {
        l.scroll_into_view();
    }
    if !lab.playing.get_untracked() {
        lab.toggle_play();
    }
    super::lesson::focus_later(Act::Play.selector());
}

/// A switch of the scenario flipped.
pub fn toggle(lab: Lab, el: &Element) {
    let t = el
        .get_attribute("data-toggle")
        .and_then(|v| Toggle::from_id(&v));
    let on = el
        .dyn_ref::<HtmlInputElement>()
        .is_some_and(|i| i.checked());
    if let Some(t) = t {
        lab.set_toggle(t, on);
        show_policy(lab);
    }
}

/// A number of the policy changed (the field left, Enter, an arrow key): the run
/// replays under it, with the preset that set that number off; a number out of
/// range is brought into it, and said so.
pub fn retry(lab: Lab, el: &Element) {
    let Some(i) = el
        .get_attribute("data-retry")
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|i| *i < 5)
    else {
        return;
    };
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
        f.set_outer_html(&policy(lab.ui(), n));
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
    /// The link Copy link could not copy, offered in a field.
    static SHARE: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Notes that the reader acted at `place`.
pub fn near(place: Near) {
    NEAR.with(|n| n.set(place));
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
        Near::Switches => (".switches", true),
        Near::Policy => (".policy", false),
        Near::Text => (".lab__text", false),
    };
    let Some(at) = find(sel).or_else(|| find(".lab__head")) else {
        return;
    };
    // A control's group is its `Controls` wrapper (see [`Controls`]).
    let at = if group {
        at.parent_element().unwrap_or(at)
    } else {
        at
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

    #[test]
    fn markup_names_every_control() {
        let ui = ui(Lang::En);
        let p = playback(ui);
        for act in ["back", "play", "step", "end", "restart", "speed", "scrub"] {
            assert!(p.contains(&format!("data-act=\"{act}\"")), "{act}");
        }
        let f = faults(ui, &[NodeId::Client, NodeId::Api(0), NodeId::Redis]);
        assert!(
            f.contains("data-act=\"ack\"") && f.contains("data-node=\"api-a\""),
            "{f}"
        );
        assert!(!faults(ui, &[NodeId::Api(0)]).contains("btn-drop-ack"));
        let s = switches(
            ui,
            &[Toggle::Fingerprint, Toggle::NewKeyPerRetry],
            ScenarioId::IdempotencyKey,
        );
        assert!(s.contains("data-testid=\"defences\"") && s.contains("data-testid=\"variants\""));
        assert!(
            picker(ui, Lang::En, ScenarioId::TtlExpiry).contains("<option value=\"naive-post\">")
        );
        assert!(picker(ui, Lang::En, ScenarioId::TtlExpiry)
            .contains("<option value=\"ttl-expiry\" selected=\"\">"));
        let head = lab_head(ui, Lang::En, ScenarioId::NaivePost);
        assert!(
            head.starts_with("<div class=\"lab__head\"><h2 id=\"lab-title\""),
            "{head}"
        );
    }
}
