//! The lab's components. Each reads the [`state::Lab`] from context.

pub mod act;
pub mod controls;
pub mod explore;
pub mod lesson;
pub mod listen;
pub mod panes;
pub mod state;
pub mod topology;

/// The element of the event's target matching `selector`, itself or an ancestor: how
/// the page's one delegated listener finds what an event is for.
pub fn closest(ev: &web_sys::Event, selector: &str) -> Option<web_sys::Element> {
    use wasm_bindgen::JsCast;
    ev.target()?
        .dyn_into::<web_sys::Element>()
        .ok()?
        .closest(selector)
        .ok()?
}
