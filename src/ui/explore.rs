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

use super::act::Act;
use super::state::Lab;
use crate::html::Html;
use crate::lesson::Ui;
use crate::params::Params;
use idem_sim::wire::Request;
use leptos::prelude::*;
use std::cell::RefCell;
use wasm_bindgen::JsCast;
use web_sys::js_sys::{Function, Uint32Array};
use web_sys::{Element, HtmlInputElement, MessageEvent, Worker};

thread_local! {
    /// The running search's worker.
    static WORKER: RefCell<Option<Worker>> = const { RefCell::new(None) };
    /// The page's one delegated listener (`ui::listen`), which also hears the worker.
    pub static LISTENER: RefCell<Option<Function>> = const { RefCell::new(None) };
}

/// The panel's frame: the bounds, Explore and Cancel, and the places the
/// worker's markup goes (progress, outcomes, truth table).
pub fn panel(ui: &Ui) -> String {
    let mut h = Html::new();
    h.open(
        "section",
        &[("class", "explore"), ("aria-labelledby", "x-h")],
    );
    h.el("h3", &[("id", "x-h")], ui.explore_title);
    h.open("div", &[("class", "explore__bar")]);
    h.el(
        "button",
        &[
            ("type", "button"),
            ("class", "primary"),
            ("data-act", Act::Explore.name()),
            ("data-testid", "btn-explore"),
        ],
        ui.explore,
    );
    // A clock jump is off at first: it multiplies the states by 10 to 50.
    for (bound, label, on) in [
        ("losses", ui.explore_losses, "checked"),
        ("crashes", ui.explore_crashes, "checked"),
        ("jumps", ui.explore_jump, ""),
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
        ui.explore_cancel,
    );
    h.close("div");
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
    h.close("div").close("section");
    h.finish()
}

fn find(sel: &str) -> Option<Element> {
    document().query_selector(sel).ok().flatten()
}

/// Ends the running search, if any (its worker is terminated: nothing more arrives).
pub fn stop() -> bool {
    let w = WORKER.with(|w| w.borrow_mut().take());
    if let Some(w) = &w {
        w.terminate();
    }
    if let Some(b) = find(Act::XCancel.selector()) {
        let _ = b.set_attribute("disabled", "");
    }
    w.is_some()
}

/// A message of the worker: its element's markup, put in place if the worker is the
/// current one.
pub fn message(e: &web_sys::Event) {
    let m = e.unchecked_ref::<MessageEvent>();
    let current = WORKER.with(|w| {
        w.borrow()
            .as_ref()
            .is_some_and(|w| e.target().as_ref() == Some(w.as_ref()))
    });
    if let (true, Some(text)) = (current, m.data().as_string()) {
        draw(&text);
    }
}

/// Cancel: the search ends, and the panel says so.
pub fn cancel(lab: Lab) {
    if stop() {
        if let Some(p) = find("#xp") {
            p.set_text_content(Some(lab.ui().explore_cancelled));
        }
    }
}

/// Starts a search from the reader's step, with their toggles and commands.
pub fn start(lab: Lab) {
    stop();
    let bound = |name: &str| {
        find(&format!("[data-bound={name}]"))
            .and_then(|e| e.dyn_into::<HtmlInputElement>().ok())
            .is_some_and(|i| i.checked())
    };
    let req = Request {
        scenario: lab.scenario.get_untracked(),
        seed: lab.seed,
        toggles: lab.toggles.get_untracked(),
        commands: lab.run.with_untracked(idem_sim::Run::commands),
        step: lab.cursor.get_untracked(),
        losses: u32::from(bound("losses")),
        crashes: u32::from(bound("crashes")),
        jumps: u32::from(bound("jumps")),
        table: true,
    };
    let url = format!("./worker/loader.js?{}", lab.lang.get_untracked().code());
    let Ok(w) = Worker::new(&url) else {
        return;
    };
    LISTENER.with(|l| {
        if let Some(f) = l.borrow().as_ref() {
            let _ = w.add_event_listener_with_callback("message", f);
        }
    });
    let _ = w.post_message(&Uint32Array::from(&req.encode()[..]));
    WORKER.with(|x| *x.borrow_mut() = Some(w));
    for id in ["xo", "xt"] {
        draw(&format!("{id}\n"));
    }
    if let Some(r) = find("[data-testid=explore-result]") {
        let _ = r.set_attribute("data-done", "0");
    }
    if let Some(b) = find(Act::XCancel.selector()) {
        let _ = b.remove_attribute("disabled");
    }
}

/// Puts the worker's markup for one element in place; the truth table comes last.
fn draw(text: &str) {
    let Some((id, html)) = text.split_once('\n') else {
        return;
    };
    if let Some(el) = document().get_element_by_id(id) {
        el.set_inner_html(html);
    }
    if id == "xt" && !html.is_empty() {
        stop();
        if let Some(r) = find("[data-testid=explore-result]") {
            let _ = r.set_attribute("data-done", "1");
        }
    }
}

/// Opens an outcome's or a cell's run (a link of the page) in the lab, with its notice.
pub fn show(lab: Lab, a: &Element) {
    let href = a.get_attribute("href").unwrap_or_default();
    let (p, _) = Params::parse(&href, lab.seed);
    if p.scenario != lab.scenario.get_untracked() {
        return;
    }
    let (run, _) = p.run();
    lab.load(run, p.step.unwrap_or(0));
    let mark = a.get_attribute("data-mark").and_then(|m| m.parse().ok());
    lab.mark.set(mark.unwrap_or(0));
    if let Some(note) = a.get_attribute("data-note") {
        lab.notices.update(|n| n.push(note));
    }
    if let Some(el) = document().get_element_by_id("lab") {
        el.scroll_into_view();
    }
    super::lesson::focus_later(Act::Play.selector());
}
