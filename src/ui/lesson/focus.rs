//! Where the reader's eyes and keys go: the lab into view, the focus after a render.

use crate::ui::state::Lab;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::HtmlElement;

/// The lab into view (for "Try it" and a link to a step). On a phone the picture comes
/// to the top (the lab's title and picker are just above it), so the topology, the
/// narration under it and playback fill the screen, clear of the outcome bar stuck to
/// the bottom edge.
pub fn lab_into_view(lab: Lab) {
    let to = if lab.tall.get_untracked() {
        document()
            .query_selector("[data-testid=topology]")
            .ok()
            .flatten()
    } else {
        document().get_element_by_id("lab")
    };
    if let Some(l) = to {
        l.scroll_into_view();
    }
}

/// Focuses the first element matching `selector` after the next render.
pub fn focus_later(selector: impl AsRef<str> + 'static) {
    request_animation_frame(move || {
        if let Some(el) = document()
            .query_selector(selector.as_ref())
            .ok()
            .flatten()
            .and_then(|e| e.dyn_into::<HtmlElement>().ok())
        {
            let _ = el.focus();
        }
    });
}
