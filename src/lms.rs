//! The module's side of an LMS (SCORM 1.2). The adapter is not in the module: it is
//! `scorm.js`, a small script that runs before the module starts, finds the LMS's `API`
//! and talks to it. The two meet at two points of the page, and only the module reads
//! or writes the progress format ([`crate::progress`]):
//!
//! - [`RESTORED`]: when an LMS was found, the adapter puts the progress the LMS kept
//!   for this learner (`cmi.suspend_data`, possibly empty) on `<html>` under this
//!   attribute before the module starts. The module then starts from it instead of
//!   `localStorage`, which belongs to the browser, not to the learner.
//! - [`PROGRESS_EVENT`]: whenever the progress changes (and once at start) the module
//!   dispatches this `CustomEvent` on `window`, with a `detail` of plain fields the
//!   adapter reports as they are (see [`publish`]). With no LMS nobody listens.

use crate::progress::Progress;
use leptos::prelude::{document, window};
use wasm_bindgen::JsValue;
use web_sys::js_sys::{Object, Reflect};

/// The attribute of `<html>` carrying the LMS's stored progress line.
pub const RESTORED: &str = "data-lms-progress";

/// The window event announcing the reader's progress.
pub const PROGRESS_EVENT: &str = "idempotency-lab:progress";

/// The progress line the LMS kept for this learner, if the page runs in an LMS.
pub fn restored() -> Option<String> {
    document().document_element()?.get_attribute(RESTORED)
}

/// Announces `p` (`line`: its storage text). The event's `detail`:
/// `{line: string, right: number, questions: number, complete: boolean}`, that is
/// the progress line, the questions answered right, how many questions there are,
/// and whether every scenario was watched and every question answered.
pub fn publish(p: &Progress, line: &str) {
    let detail = Object::new();
    for (k, v) in [
        ("line", JsValue::from_str(line)),
        ("right", JsValue::from(p.right() as u32)),
        (
            "questions",
            JsValue::from(idem_sim::ScenarioId::COUNT as u32),
        ),
        ("complete", JsValue::from_bool(p.complete())),
    ] {
        let _ = Reflect::set(&detail, &JsValue::from_str(k), &v);
    }
    let init = web_sys::CustomEventInit::new();
    init.set_detail(&detail);
    if let Ok(e) = web_sys::CustomEvent::new_with_event_init_dict(PROGRESS_EVENT, &init) {
        let _ = window().dispatch_event(&e);
    }
}
