//! The Explore panel: every way the run can end from the reader's step, and
//! the scenario's truth table, searched off the main thread by the explorer's
//! Web Worker (`worker/`, fetched the first time the reader presses Explore).
//!
//! The page's module carries as little of it as it can: the panel's frame
//! ([`panel`], written once per scenario), the request ([`idem_sim::wire`]),
//! and putting in place the markup the worker writes — each message is an
//! element's id, a newline and its markup (`worker/src/view.rs`). A link of
//! an outcome or a truth-table cell (`data-act="xshow"`) is an ordinary link
//! of the page (`cmd=`, as Copy link writes it), opened in place as a branch
//! of the lab, with the step where it leaves the reader's run (or, from the
//! truth table, where its fault strikes) marked on the sequence diagram
//! (`data-mark`, `Lab::mark`). Cancel terminates the worker; the lab never
//! waits for it.
//!
//! Two sets of defences side by side: the reader's run, with the lab's
//! switches, and the same run under the defences picked in the panel
//! (`Lab::cmp`, `Run::with_defences`) step with the lab's one cursor; the page
//! draws the other with the lab's own renderers ([`compared`]), and a second
//! worker, kept in step by [`follow`], answers where the runs first differ
//! (framed on both diagrams, `Lab::mark`) and how each ends, in a sentence
//! that is also announced.

use super::act::Act;
use super::find;
use super::state::Lab;
use crate::html::{Html, Markup};
use crate::layout::Layout;
use crate::lesson::Ui;
use crate::narrate::fill;
use crate::params::Params;
use crate::render;
use idem_sim::scenario::{ScenarioId, Toggle, Toggles};
use idem_sim::wire::Request;
use idem_sim::Run;
use leptos::prelude::*;
use std::cell::RefCell;
use wasm_bindgen::JsCast;
use web_sys::js_sys::{Function, Uint32Array};
use web_sys::{HtmlInputElement, MessageEvent, Worker};

thread_local! {
    /// The running search's worker.
    static WORKER: RefCell<Option<Worker>> = const { RefCell::new(None) };
    /// The comparison's worker, kept for the next one, and the last request it got.
    static CMP: RefCell<Option<Worker>> = const { RefCell::new(None) };
    static ASKED: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
    /// The page's one delegated listener (`ui::listen`), which also hears the worker.
    pub static LISTENER: RefCell<Option<Function>> = const { RefCell::new(None) };
}

/// The panel's frame: the bounds, Explore and Cancel, and the places the
/// worker's markup goes (progress, outcomes, truth table); then the switches of
/// two sets of defences side by side (of the `offered` toggles, the defences,
/// all on at first).
pub fn panel(ui: &Ui, offered: &[Toggle], scenario: ScenarioId) -> Markup {
    let mut h = Html::new();
    // In the section "What else could happen?" (`app::grid`), which names it.
    h.open("div", &[("class", "explore")]);
    h.open("div", &[("class", "explore__bar")]);
    h.el(
        "button",
        &[
            ("type", "button"),
            ("class", "primary"),
            ("data-act", Act::Explore.name()),
            ("data-testid", "btn-explore"),
        ],
        ui.explore(),
    );
    // A second lost message is on at first where the search finishes
    // (`Scenario::explore_losses`); a clock jump is off: it multiplies the states by 10 to 50.
    let two = scenario.scenario().explore_losses > 1;
    for (bound, label, on) in [
        ("losses", ui.explore_losses(), "checked"),
        (
            "losses2",
            ui.explore_losses2(),
            if two { "checked" } else { "" },
        ),
        ("crashes", ui.explore_crashes(), "checked"),
        ("jumps", ui.explore_jump(), ""),
    ] {
        h.open("label", &[("class", "switch")]);
        h.open(
            "input",
            &[("type", "checkbox"), (on, ""), ("data-bound", bound)],
        );
        h.el("span", &[], label).close("label");
    }
    h.el(
        "button",
        &[
            ("type", "button"),
            ("data-act", Act::XCancel.name()),
            ("data-testid", "explore-cancel"),
            ("disabled", ""),
        ],
        ui.explore_cancel(),
    );
    h.close("div");
    h.el(
        "p",
        &[
            ("id", "xf"),
            ("class", "muted"),
            ("data-testid", "explore-from"),
        ],
        "",
    );
    h.el(
        "div",
        &[
            ("id", "xp"),
            ("class", "muted"),
            ("data-testid", "explore-progress"),
        ],
        "",
    );
    h.open(
        "div",
        &[("data-testid", "explore-result"), ("data-done", "0")],
    );
    h.el("div", &[("id", "xo")], "")
        .el("div", &[("id", "xt")], "");
    h.close("div");
    h.open(
        "fieldset",
        &[("class", "switches"), ("data-testid", "compare-switches")],
    );
    h.el("legend", &[], ui.cmp_title());
    let mut switch = |cmp: &str, label: &str, on: &str| {
        let testid = format!("compare-{cmp}");
        h.open("label", &[("class", "switch")]);
        h.open(
            "input",
            &[
                ("type", "checkbox"),
                ("data-act", Act::Cmp.name()),
                ("data-cmp", cmp),
                ("data-testid", &testid),
                (on, ""),
            ],
        );
        h.el("span", &[], label).close("label");
    };
    switch("on", ui.cmp_on(), "");
    for t in scenario.scenario().defences() {
        if offered.contains(&t) {
            let label = crate::lesson::toggle_label(ui, t, Some(scenario));
            switch(t.id(), label, "checked");
        }
    }
    h.close("fieldset").close("div");
    h.finish()
}

fn checked(sel: &str) -> bool {
    find(sel)
        .and_then(|e| e.dyn_into::<HtmlInputElement>().ok())
        .is_some_and(|i| i.checked())
}

/// The run side by side with the reader's (`Lab::cmp`), if any.
fn other(lab: Lab) -> Option<Run> {
    let m = lab.cmp.get();
    (m != 0).then(|| lab.run.with(|r| r.with_defences(defences(r, m))))
}

/// The defences of `m` (bit i: the scenario's defence i).
fn defences(r: &Run, m: u32) -> Toggles {
    let on: Vec<Toggle> = r
        .scenario
        .defences()
        .into_iter()
        .enumerate()
        .filter(|(i, _)| m & 1 << i != 0)
        .map(|(_, t)| t)
        .collect();
    Toggles::of(&on)
}

/// The run compared side by side, at the lab's step: its topology, sequence
/// diagram and outcome, drawn as the lab draws its own (their test ids are
/// `data-b`, so the lab's stay unique; the topology is inert: only the lab's
/// messages can be lost). Empty when nothing is compared.
fn compared(lab: Lab) -> Markup {
    let Some(b) = other(lab) else {
        return Markup::default();
    };
    let ui = lab.ui();
    let k = lab.cursor.get();
    let nodes = b.scenario.nodes();
    let tall = lab.tall.get();
    let (prev, w) = (b.state_at(k.saturating_sub(1)), b.state_at(k));
    let rec = k.checked_sub(1).and_then(|i| b.trace.get(i));
    let topology = render::topology(ui, &Layout::new(&nodes, tall), &prev, &w, rec, 1.0);
    let lanes = crate::seqdiag::lane_width(tall, nodes.len());
    let mark = Some(lab.mark.get()).filter(|m| *m > 0);
    let sequence = render::sequence(ui, &b.trace, &nodes, k, lanes, lab.future.get(), mark);
    // Its diagram is named apart from the lab's own.
    let name = format!("{}: {}", ui.cmp_title(), ui.pane_sequence());
    let mut h = Html::new();
    h.open("figure", &[("class", "topology")]);
    h.open("div", &[("class", "topology__canvas"), ("inert", "")]);
    h.markup(&topology).close("div").close("figure");
    h.open(
        "div",
        &[
            ("class", "sequence"),
            ("tabindex", "0"),
            ("role", "region"),
            ("aria-label", &name),
        ],
    );
    h.markup(&sequence).close("div");
    h.open("section", &[("class", "pane")]);
    h.markup(&render::outcome(ui, &w)).close("section");
    h.finish()
        .replace("data-testid=", "data-b=")
        .replace(" id=\"seq-arrow\"", "")
}

/// A new lab (scenario, language): no search, no comparison (its worker spoke
/// the old language), and the comparison followed anew.
pub fn reset(lab: Lab) {
    stop();
    if let Some(w) = CMP.with(|c| c.borrow_mut().take()) {
        w.terminate();
    }
    ASKED.with(|a| a.take());
    lab.cmp.set(0);
    follow(lab);
}

/// Keeps the comparison in step with the lab: draws the compared run at the
/// lab's step ([`compared`]) and, whenever the switches or the lab's run
/// change, asks the comparison's worker again (the same request is not sent
/// twice: it does not depend on the step).
fn follow(lab: Lab) {
    // Nothing is compared while the page starts: from the lab's second stage on.
    crate::ui::staged(lab, move || {
        let views = compared(lab);
        if let Some(el) = document().get_element_by_id("xv") {
            super::set_inner(&el, &views);
        }
        let m = lab.cmp.get();
        if m == 0 {
            return;
        }
        let mut req = request(lab);
        req.step = 0;
        req.cmp = lab.run.with(|r| Some(defences(r, m)));
        let words = req.encode();
        if ASKED.with(|a| a.replace(words.clone())) == words {
            return;
        }
        CMP.with(|c| {
            let mut c = c.borrow_mut();
            if c.is_none() {
                *c = spawn(lab);
            }
            if let Some(w) = c.as_ref() {
                let _ = w.post_message(&Uint32Array::from(&words[..]));
            }
        });
    });
}

/// Ends the running search, if any (its worker is terminated: nothing more arrives).
/// Cancel is enabled only while a worker is kept (`start`), so without one there is
/// no button to disable and no query of the page (the lab's start calls this).
pub fn stop() -> bool {
    let w = WORKER.with(|w| w.borrow_mut().take());
    if let Some(w) = &w {
        w.terminate();
        if let Some(b) = find(Act::XCancel.selector()) {
            let _ = b.set_attribute("disabled", "");
        }
    }
    w.is_some()
}

/// A message of a worker: its element's markup, put in place if the worker is the
/// current one (a comparison's, only while the reader compares).
pub fn message(lab: Lab, e: &web_sys::Event) {
    let m = e.unchecked_ref::<MessageEvent>();
    let from = |x: &RefCell<Option<Worker>>| {
        x.borrow()
            .as_ref()
            .is_some_and(|w| e.target().as_ref() == Some(w.as_ref()))
    };
    let current = WORKER.with(from) || (CMP.with(from) && lab.cmp.get_untracked() != 0);
    if let (true, Some(text)) = (current, m.data().as_string()) {
        draw(lab, &text);
    }
}

/// The comparison's switches changed: the comparison follows them ([`follow`]
/// asks the worker); off, nothing is compared or framed.
pub fn compare(lab: Lab) {
    let on = lab.run.with_untracked(|r| {
        r.scenario
            .defences()
            .iter()
            .enumerate()
            .filter(|(_, t)| checked(&format!("[data-cmp={}]", t.id())))
            .fold(1 << 31, |m, (i, _)| m | 1 << i)
    });
    let on = if checked("[data-cmp=on]") { on } else { 0 };
    lab.cmp.set(on);
    if on == 0 {
        ASKED.with(|a| a.take());
        for id in ["xm", "xc", "announce"] {
            draw(lab, &format!("{id}\n"));
        }
    }
}

/// Cancel: the search ends, and the panel says so.
pub fn cancel(lab: Lab) {
    if stop() {
        if let Some(p) = find("#xp") {
            p.set_text_content(Some(lab.ui().explore_cancelled()));
        }
    }
}

/// The reader's run as the worker is asked about it: their scenario, seed,
/// switches, commands and step, and the bounds set in the panel.
fn request(lab: Lab) -> Request {
    let bound = |name: &str| u32::from(checked(&format!("[data-bound={name}]")));
    Request {
        scenario: lab.scenario(),
        seed: lab.seed,
        toggles: lab.toggles(),
        retry: lab.run.with_untracked(|r| r.scenario.retry),
        commands: lab.run.with_untracked(idem_sim::Run::commands),
        step: lab.cursor.get_untracked(),
        losses: bound("losses") + bound("losses2"),
        crashes: bound("crashes"),
        jumps: bound("jumps"),
        table: true,
        cmp: None,
    }
}

/// A worker of the page's language whose messages reach the page's one listener.
fn spawn(lab: Lab) -> Option<Worker> {
    let url = format!("./worker/loader.js?{}", lab.lang.get_untracked().code());
    let w = Worker::new(&url).ok()?;
    LISTENER.with(|l| {
        if let Some(f) = l.borrow().as_ref() {
            let _ = w.add_event_listener_with_callback("message", f);
        }
    });
    Some(w)
}

/// Starts a search from the reader's step, with their toggles and commands. At the
/// end of the run nothing is left to reorder: it searches from the decisive step
/// (or the start) instead, and says so.
pub fn start(lab: Lab) {
    stop();
    let Some(w) = spawn(lab) else {
        return;
    };
    let mut req = request(lab);
    let from = (req.step >= lab.steps())
        .then(|| lab.run.with_untracked(|r| r.decisive_step()).unwrap_or(0));
    if let Some(k) = from {
        req.step = k;
    }
    if let Some(p) = find("#xf") {
        let note = from.map(|k| fill(lab.ui().explore_from(), &[&k.to_string()]));
        p.set_text_content(note.as_deref());
    }
    let _ = w.post_message(&Uint32Array::from(&req.encode()[..]));
    WORKER.with(|x| *x.borrow_mut() = Some(w));
    for id in ["xo", "xt"] {
        draw(lab, &format!("{id}\n"));
    }
    if let Some(r) = find("[data-testid=explore-result]") {
        let _ = r.set_attribute("data-done", "0");
    }
    if let Some(b) = find(Act::XCancel.selector()) {
        let _ = b.remove_attribute("disabled");
    }
}

/// Puts the worker's markup for one element in place; the truth table comes
/// last. `xm` is no element: the step both diagrams frame.
fn draw(lab: Lab, text: &str) {
    let Some((id, html)) = text.split_once('\n') else {
        return;
    };
    let k = html.parse().unwrap_or(0);
    if id == "xm" && lab.mark.get_untracked() != k {
        lab.mark.set(k);
    }
    // The worker writes its markup with the page's own writer (`worker/src/view.rs`).
    if let Some(el) = document().get_element_by_id(id) {
        super::set_inner(&el, &Markup::prerendered(html.to_string()));
    }
    if id == "xt" && !html.is_empty() {
        stop();
        if let Some(r) = find("[data-testid=explore-result]") {
            let _ = r.set_attribute("data-done", "1");
        }
    }
}

/// Opens an outcome's or a cell's run (a link of the page) in the lab, with its notice.
/// ([`super::act::Action::XShow`]: `href`, the step to mark, the notice.)
pub fn show(lab: Lab, href: &str, mark: Option<usize>, note: Option<String>) {
    let (p, _) = Params::parse(href, lab.seed);
    if p.scenario != lab.scenario() {
        return;
    }
    let (run, _) = p.run();
    lab.load(run, p.step.unwrap_or(0));
    super::controls::show_policy(lab);
    lab.mark.set(mark.unwrap_or(0));
    if let Some(note) = note {
        lab.notices.update(|n| n.push(note));
    }
    if let Some(el) = document().get_element_by_id("lab") {
        el.scroll_into_view();
    }
    super::lesson::focus_later(Act::Play.selector());
}
