//! A friendly failure. A panic in the module would otherwise leave a frozen page
//! (with `panic = "abort"`, the module traps with `unreachable` and answers nothing
//! more). The panic hook draws a box instead, in the reader's language: what happened,
//! a link that reloads the page at the state it was in, and that same link to send
//! with a report. It uses plain DOM calls, not the reactive system (which may be in the
//! middle of an update), and the box needs no script: its buttons are links.
//!
//! The test hook: the event `idempotency-lab:panic` dispatched on `window` panics (see
//! [`crate::ui::lesson`]'s listener). Only a script of the page's own origin can
//! dispatch it, and such a script can already do anything to the page; no URL
//! reaches it.

use crate::html::{Html, Markup};
use crate::lesson::{ui, Lang, Ui};

/// The name of the window event that panics, for the end-to-end test of this box.
pub const PANIC_EVENT: &str = "idempotency-lab:panic";

/// Installs the panic hook. Called once, first thing in `main`.
pub fn install() {
    std::panic::set_hook(Box::new(|info| show(&info.to_string())));
}

/// The box: the title, what happened, the reload link, the link to report.
pub fn markup(ui: &Ui, href: &str, what: &str) -> Markup {
    let mut h = Html::new();
    h.open(
        "div",
        &[
            ("class", "crash"),
            ("role", "alert"),
            ("data-testid", "crash"),
        ],
    );
    h.el("h2", &[], ui.crash_title());
    h.el("p", &[], ui.crash_text());
    h.el(
        "a",
        &[
            ("class", "crash__reload"),
            ("href", href),
            ("data-testid", "crash-reload"),
        ],
        ui.crash_reload(),
    );
    h.el("p", &[], ui.crash_report());
    h.el(
        "a",
        &[
            ("class", "crash__link"),
            ("href", href),
            ("data-testid", "crash-link"),
        ],
        href,
    );
    h.el("p", &[("class", "crash__what")], what);
    h.close("div");
    h.finish()
}

/// Draws the box at the top of the page and moves focus to its reload link.
fn show(what: &str) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let Some(doc) = window.document() else {
        return;
    };
    // The page keeps `<html lang>` in step with the reader's language.
    let lang = doc
        .document_element()
        .and_then(|e| e.get_attribute("lang"))
        .and_then(|l| Lang::parse(&l))
        .unwrap_or(Lang::En);
    // The labels come from the page (`lesson::load`); a module that stopped before
    // they were in has no words for the box (the console has the panic).
    if !Lang::ALL.iter().any(|l| crate::lesson::loaded(*l)) {
        return;
    }
    let href = window.location().href().unwrap_or_default();
    let Ok(el) = doc.create_element("div") else {
        return;
    };
    crate::ui::set_inner(&el, &markup(ui(lang), &href, what));
    if let Some(body) = doc.body() {
        let _ = body.prepend_with_node_1(&el);
    }
    if let Some(link) = doc
        .query_selector(".crash__reload")
        .ok()
        .flatten()
        .and_then(|e| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(e).ok())
    {
        let _ = link.focus();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_box_escapes_the_link_and_speaks_the_language() {
        let html = markup(ui(Lang::Ru), "?a=1&b=<x>", "panicked at <src/x.rs>");
        assert!(html.contains("Лаборатория остановилась"));
        assert!(html.contains("href=\"?a=1&amp;b=&lt;x&gt;\""));
        assert!(html.contains("panicked at &lt;src/x.rs&gt;"));
        assert!(!html.contains("<script") && !html.contains("style="));
        assert!(markup(ui(Lang::En), "", "").contains("Reload the lesson"));
    }
}
