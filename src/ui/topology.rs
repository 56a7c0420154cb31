//! The topology on the page: its place is written once with the lab, its markup
//! comes from [`crate::render::topology`] once per step; between steps, an effect moves each message along its link
//! as the glide progresses (only `transform` and `class` change per frame).
//! Clicks and keys on a message ([`Action::Lose`]) reach it through the page's one
//! listener ([`lose`]).

use super::act::{Act, Action};
use super::state::Lab;
use crate::html::{tenths, Html};
use crate::layout::{Layout, TAG_RISE};
use crate::lesson::Ui;
use crate::render;
use idem_sim::net::Fate;
use idem_sim::{Command, MsgId};
use wasm_bindgen::JsCast;
use web_sys::Element;

/// The graph's place, written once with the lab (`app::grid`); [`follow`] draws in it.
pub fn frame(h: &mut Html, ui: &Ui) {
    h.open(
        "figure",
        &[("class", "topology"), ("data-testid", "topology")],
    );
    h.el("div", &[("class", "topology__canvas")], "");
    h.el("figcaption", &[("class", "hint muted")], ui.topology_hint());
    h.close("figure");
}

/// The animated system graph (in `place`, the lab). Click a message in flight to lose it.
pub fn follow(lab: Lab, place: &Element) {
    let ui = lab.ui();
    let Some(canvas) = place.query_selector(".topology__canvas").ok().flatten() else {
        return;
    };
    // The nodes are fixed per scenario (the lab is built anew for each); the orientation follows the width.
    let layout = move || {
        Layout::new(
            &lab.run.with_untracked(|r| r.scenario.nodes()),
            lab.tall.get(),
        )
    };
    let el = canvas.clone();
    // From the lab's second stage on (`Lab::whole`).
    super::staged(lab, move || {
        let l = layout();
        let m = lab.step.with(|s| {
            let anim = lab.anim.get_untracked();
            render::topology(ui, &l, &s.prev, &s.world, s.record.as_ref(), anim)
        });
        super::set_inner(&el, &m);
    });
    // Per frame: move the messages (the DOM is outside the reactive state). Before the
    // second stage there is none to move.
    super::staged(lab, move || {
        let anim = lab.anim.get();
        let Ok(nodes) = canvas.query_selector_all(Act::Lose.selector()) else {
            return;
        };
        let l = &layout();
        lab.step.with(|s| {
            let (p, w) = (&s.prev, &s.world);
            let (t0, t1) = (p.now.0, w.now.0);
            for i in 0..nodes.length() {
                let Some(g) = nodes
                    .item(i)
                    .and_then(|n| n.dyn_into::<web_sys::Element>().ok())
                else {
                    continue;
                };
                let Ok(Action::Lose(id)) = Action::parse(&|n| g.get_attribute(n)) else {
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
                // The tag moves to the side where it covers no node, or hides.
                if let Some(t) = g.query_selector(".msg__tag").ok().flatten() {
                    let w = t
                        .get_attribute("data-w")
                        .and_then(|v| v.parse::<u32>().ok())
                        .unwrap_or(0);
                    let dx = l.tag_dx(at.x, at.y, f64::from(w));
                    let _ = t.class_list().toggle_with_force("hidden", dx.is_none());
                    if let Some(dx) = dx {
                        let _ = t.set_attribute(
                            "transform",
                            &format!("translate({} -{})", tenths(dx), tenths(TAG_RISE)),
                        );
                    }
                }
                let cl = g.class_list();
                let _ = cl.toggle_with_force("hidden", at.hidden);
                let _ = cl.toggle_with_force("msg--lost", at.broken);
            }
        });
    });
}

/// Loses message `id` if it is still in flight (a click on it, or Enter or Space on
/// it: the page's one delegated listener); `false` if it was not.
pub fn lose(lab: Lab, id: MsgId) -> bool {
    let live = lab.step.with(|s| {
        s.world
            .msgs
            .get(&id)
            .is_some_and(|m| m.fate == Fate::Deliver)
    });
    if live {
        lab.command(Command::Lose(id));
    }
    live
}
