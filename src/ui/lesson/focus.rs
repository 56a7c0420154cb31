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

/// Focuses the first element matching `selector` after the next render (the reader
/// is taken there: Play after "Try it", the question at the decisive step).
pub fn focus_later(selector: impl AsRef<str> + 'static) {
    request_animation_frame(move || {
        if let Some(el) = first(selector.as_ref()) {
            let _ = el.focus();
        }
    });
}

/// Gives the focus back, after the next render, to the control the reader just used
/// (matched by `selector`), which the render may have written anew; unless the reader
/// has put it elsewhere since, and without scrolling. A frame can be long: a reader (or
/// a test) who has already scrolled on and clicked is not pulled back to the control.
pub fn keep_focus(selector: impl AsRef<str> + 'static) {
    request_animation_frame(move || {
        let doc = document();
        let lost = doc
            .active_element()
            .is_none_or(|a| doc.body().is_some_and(|b| a == *b));
        if let (true, Some(el)) = (lost, first(selector.as_ref())) {
            let options = web_sys::FocusOptions::new();
            options.set_prevent_scroll(true);
            let _ = el.focus_with_options(&options);
        }
    });
}

fn first(selector: &str) -> Option<HtmlElement> {
    crate::ui::find(selector).and_then(|e| e.dyn_into::<HtmlElement>().ok())
}
