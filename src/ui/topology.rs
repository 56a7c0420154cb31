//! The topology on the page: its markup comes from [`crate::render::topology`]
//! once per step; between steps, an effect moves each message along its link
//! as the glide progresses (only `transform` and `class` change per frame).

use super::state::Lab;
use crate::html::tenths;
use crate::layout::Layout;
use crate::render;
use idem_sim::net::Fate;
use idem_sim::{Command, MsgId};
use leptos::html::Div;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// The animated system graph. Click a message in flight to lose it.
#[component]
pub fn Topology() -> impl IntoView {
    let lab = expect_context::<Lab>();
    let ui = lab.ui();
    // The nodes are fixed per scenario (the lab is built anew for each); the orientation follows the width.
    let layout = move || {
        Layout::new(
            &lab.run.with_untracked(|r| r.scenario.nodes()),
            lab.tall.get(),
        )
    };
    let markup = move || {
        let l = layout();
        lab.prev.with(|p| {
            lab.world.with(|w| {
                lab.record
                    .with(|r| render::topology(ui, &l, p, w, r.as_ref(), lab.anim.get_untracked()))
            })
        })
    };
    let canvas = NodeRef::<Div>::new();
    // Per frame: move the messages (the DOM is outside the reactive state).
    Effect::new(move |_| {
        let anim = lab.anim.get();
        let Some(el) = canvas.get() else { return };
        let Ok(nodes) = el.query_selector_all("[data-msg]") else {
            return;
        };
        let (t0, t1) = (lab.prev.with(|w| w.now.0), lab.world.with(|w| w.now.0));
        let l = &layout();
        lab.prev.with(|p| {
            lab.world.with(|w| {
                for i in 0..nodes.length() {
                    let Some(g) = nodes
                        .item(i)
                        .and_then(|n| n.dyn_into::<web_sys::Element>().ok())
                    else {
                        continue;
                    };
                    let Some(id) = g
                        .get_attribute("data-msg")
                        .and_then(|s| s.parse::<u32>().ok())
                        .map(MsgId)
                    else {
                        continue;
                    };
                    // As `render::messages` draws it: the version before this step wins.
                    let Some(m) = p.msgs.get(&id).or_else(|| w.msgs.get(&id)) else {
                        continue;
                    };
                    let at = l.msg_at(m, t0, t1, anim, w.msgs.contains_key(&id));
                    let _ = g.set_attribute(
                        "transform",
                        &format!("translate({} {})", tenths(at.x), tenths(at.y)),
                    );
                    let cl = g.class_list();
                    let _ = cl.toggle_with_force("hidden", at.hidden);
                    let _ = cl.toggle_with_force("msg--lost", at.broken);
                }
            })
        });
    });
    // Lose the message under the event's target, if it is still on its way.
    let lose_at = move |target: Option<web_sys::EventTarget>| {
        let id = target
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .and_then(|el| el.closest("[data-msg]").ok().flatten())
            .and_then(|el| el.get_attribute("data-msg"))
            .and_then(|s| s.parse::<u32>().ok())
            .map(MsgId);
        let Some(id) = id else { return false };
        let live = lab
            .world
            .with(|w| w.msgs.get(&id).is_some_and(|m| m.fate == Fate::Deliver));
        if live {
            lab.command(Command::Lose(id));
        }
        live
    };
    let lose = move |ev: leptos::ev::MouseEvent| {
        lose_at(ev.target());
    };
    // Enter or Space on a focused message loses it (and does not reach the page's Space = play).
    let lose_key = move |ev: leptos::ev::KeyboardEvent| {
        if matches!(ev.key().as_str(), "Enter" | " ") && lose_at(ev.target()) {
            ev.prevent_default();
            ev.stop_propagation();
        }
    };
    view! {
        <figure class="topology" data-testid="topology">
            <div class="topology__canvas" node_ref=canvas on:click=lose on:keydown=lose_key inner_html=markup></div>
        </figure>
    }
}
