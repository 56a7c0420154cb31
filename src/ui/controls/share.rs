//! Sharing and where the notices go: Copy link (with a field to copy by hand where
//! the page may not), and the notices placed beside the control the reader last
//! used.

use super::markup::Ctl;
use super::patch::{el, find, set};
use crate::ui::state::Lab;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlInputElement};

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
        lab.notices.update(|n| n.push(ui.copy_failed().to_string()));
        request_animation_frame(|| {
            if let Some(i) = el(Ctl::ShareLink).and_then(|e| e.dyn_into::<HtmlInputElement>().ok())
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
        lab.notices.update(|n| n.push(ui.link_copied().to_string()))
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
    /// Above the lesson: what the page itself reports, and a link's notices where it
    /// opens at the top of the page.
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
    // A control's group is its `div.contents` wrapper (`app::grid`); inside a section
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
        keep_in_view(el.clone(), 20, None);
    }
}

/// Brings `el` wholly into view, a little clear of the edge, if it lies past an edge of
/// the screen (either axis), and checks again for `frames` more frames: a section drawn
/// at its own height late can move it after the first check. `at` is where this left
/// the page and `el` on screen the frame before. It stops once both moved: the page was
/// scrolled by someone else, and a reader who scrolls on is not pulled back. The
/// browser's scroll anchoring moves the page alone, keeping `el` where it was on screen.
fn keep_in_view(el: Element, frames: u8, at: Option<(f64, f64)>) {
    request_animation_frame(move || {
        let w = window();
        let now = || {
            (
                w.scroll_y().unwrap_or(0.0),
                el.get_bounding_client_rect().top(),
            )
        };
        let moved = |a: f64, b: f64| (a - b).abs() > 1.0;
        if at.is_some_and(|(y, top)| {
            let (y2, top2) = now();
            moved(y, y2) && moved(top, top2)
        }) {
            return;
        }
        let r = el.get_bounding_client_rect();
        let size = |v: Result<wasm_bindgen::JsValue, _>| v.ok().and_then(|v| v.as_f64());
        // How far to scroll along one axis: to `CLEAR` px inside the edge it lies past,
        // never so far that its start leaves the screen. Scrolling to the edge exactly
        // could leave a fraction of a pixel past it, as scroll offsets are rounded.
        const CLEAR: f64 = 8.0;
        let by = |start: f64, end: f64, screen: Option<f64>| match screen {
            _ if start < 0.0 => start - CLEAR,
            Some(s) if end > s => (end - s + CLEAR).min(start),
            _ => 0.0,
        };
        let (dx, dy) = (
            by(r.left(), r.right(), size(w.inner_width())),
            by(r.top(), r.bottom(), size(w.inner_height())),
        );
        if r.height() > 0.0 && (dx, dy) != (0.0, 0.0) {
            w.scroll_by_with_x_and_y(dx, dy);
        }
        if frames > 0 {
            let here = now();
            keep_in_view(el, frames - 1, Some(here));
        }
    });
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
