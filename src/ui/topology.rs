//! The topology: nodes, links, and every message gliding along its link.
//! Positions come from the simulation's clock: a message sent at `sent_at`
//! and due at `arrives_at` sits at the matching fraction of its link.

use super::state::Lab;
use crate::layout::{Layout, Place};
use crate::narrate::node_name;
use idem_sim::net::{Fate, Msg};
use idem_sim::trace::Happening;
use idem_sim::{Command, NodeId};
use leptos::prelude::*;
use std::collections::BTreeSet;

/// Where a lost message breaks off, as a fraction of its link.
const BREAK_AT: f64 = 0.78;

/// The animated system graph.
#[component]
pub fn Topology() -> impl IntoView {
    let lab = expect_context::<Lab>();
    let ui = lab.ui();
    let layout = Memo::new(move |_| {
        let nodes = lab.run.with(|r| r.scenario.nodes());
        Layout::new(&nodes, lab.tall.get())
    });
    // Every message in flight before or after this step, once.
    let msgs = Memo::new(move |_| {
        let mut v: Vec<Msg> = lab.prev.with(|w| w.msgs.values().cloned().collect());
        lab.world.with(|w| {
            for m in w.msgs.values() {
                if !v.iter().any(|x| x.id == m.id) {
                    v.push(m.clone());
                }
            }
        });
        v
    });
    let busy = Memo::new(move |_| {
        let mut s = BTreeSet::new();
        lab.record.with(|r| {
            for h in r.iter().flat_map(|r| r.happenings.iter()) {
                let n = match h {
                    Happening::Phase { node, .. } => Some(*node),
                    Happening::Redis { .. } => Some(NodeId::Redis),
                    Happening::Sql { .. } | Happening::SqlWaits { .. } => Some(NodeId::Postgres),
                    Happening::Charged { .. } => Some(NodeId::Processor),
                    Happening::Appended { .. } | Happening::OffsetCommitted(_) => {
                        Some(NodeId::Broker)
                    }
                    Happening::ClientSent { .. }
                    | Happening::ClientTimeout { .. }
                    | Happening::Belief { .. } => Some(NodeId::Client),
                    _ => None,
                };
                s.extend(n);
            }
        });
        s
    });
    let view_box = move || layout.with(|l| format!("0 0 {} {}", l.width, l.height));
    view! {
        <figure class="topology" data-testid="topology">
            <svg
                viewBox=view_box
                role="img"
                aria-label=ui.lab_title
                preserveAspectRatio="xMidYMid meet"
            >
                <g class="links">
                    {move || {
                        layout
                            .with(|l| {
                                l.links()
                                    .into_iter()
                                    .filter_map(|(a, b)| {
                                        let (x1, y1) = l.along(a, b, 0.0)?;
                                        let (x2, y2) = l.along(a, b, 1.0)?;
                                        let id = format!("link-{}-{}", test_slug(a), test_slug(b));
                                        Some(
                                            view! {
                                                <line
                                                    class="link"
                                                    data-testid=id
                                                    x1=x1
                                                    y1=y1
                                                    x2=x2
                                                    y2=y2
                                                ></line>
                                            },
                                        )
                                    })
                                    .collect_view()
                            })
                    }}
                </g>
                <g class="nodes">
                    {move || {
                        layout
                            .with(|l| {
                                l.nodes
                                    .iter()
                                    .map(|(n, p)| view! { <Node node=*n place=*p busy=busy/> })
                                    .collect_view()
                            })
                    }}
                </g>
                <g class="msgs">
                    <For
                        each=move || msgs.get()
                        key=|m| (m.id, m.fate == Fate::Deliver)
                        children=move |m| view! { <Message msg=m layout=layout/> }
                    />
                </g>
            </svg>
        </figure>
    }
}

/// The node's name in test ids: the first API instance is plain `api`.
fn test_slug(n: NodeId) -> String {
    match n {
        NodeId::Api(0) => "api".into(),
        n => n.slug(),
    }
}

/// A node: its box, icon and name; it pulses while it works and greys out when down.
#[component]
fn Node(
    /// Which node.
    node: NodeId,
    /// Where it sits.
    place: Place,
    /// Nodes that did something at this step.
    busy: Memo<BTreeSet<NodeId>>,
) -> impl IntoView {
    let lab = expect_context::<Lab>();
    let ui = lab.ui();
    let kind = match node {
        NodeId::Client => "client",
        NodeId::Api(_) => "api",
        NodeId::Redis | NodeId::Postgres => "store",
        NodeId::Processor => "external",
        NodeId::Broker | NodeId::Consumer => "service",
    };
    let testid = format!("node-{}", test_slug(node));
    let full = node_name(ui, node);
    let (title, detail) = match full.split_once(" (") {
        Some((a, b)) => (a.to_string(), b.trim_end_matches(')').to_string()),
        None => (full.clone(), String::new()),
    };
    let (x, y) = (place.x - place.w / 2.0, place.y - place.h / 2.0);
    view! {
        <g
            class=format!("node node--{kind}")
            class:busy=move || busy.with(|b| b.contains(&node))
            class:down=move || !lab.world.with(|w| w.is_up(node))
            data-testid=testid
            data-node=node.slug()
        >
            <rect class="node__box" x=x y=y width=place.w height=place.h rx="10"></rect>
            <Icon node=node x=x + 8.0 y=place.y - 11.0/>
            <text class="node__name" x=x + 36.0 y=place.y - 3.0>
                {title}
            </text>
            <text class="node__detail" x=x + 36.0 y=place.y + 14.0>
                {move || {
                    if lab.world.with(|w| w.is_up(node)) {
                        detail.clone()
                    } else {
                        format!("✕ {}", ui.node_down)
                    }
                }}
            </text>
        </g>
    }
}

/// A small line icon per node type, 22 × 22 units.
#[component]
fn Icon(
    /// Which node type.
    node: NodeId,
    /// Top-left corner.
    x: f64,
    /// Top-left corner.
    y: f64,
) -> impl IntoView {
    let d = match node {
        // A phone.
        NodeId::Client => {
            "M6 1h10a2 2 0 0 1 2 2v16a2 2 0 0 1-2 2H6a2 2 0 0 1-2-2V3a2 2 0 0 1 2-2zM9 18h4"
        }
        // A server with two units.
        NodeId::Api(_) | NodeId::Consumer => {
            "M2 3h18v7H2zM2 12h18v7H2zM6 6.5h.5M6 15.5h.5M10 6.5h6M10 15.5h6"
        }
        // A key.
        NodeId::Redis => "M8 14a5 5 0 1 1 3.5-1.5L20 21M16 17l2-2M18 19l2-2",
        // A database cylinder.
        NodeId::Postgres => {
            "M3 5c0-2 16-2 16 0v12c0 2-16 2-16 0zM3 5c0 2 16 2 16 0M3 11c0 2 16 2 16 0"
        }
        // A card.
        NodeId::Processor => "M1 5h20v13H1zM1 9h20M4 14h5",
        // A log of records.
        NodeId::Broker => "M2 4h18M2 9h18M2 14h18M2 19h12",
    };
    view! { <path class="node__icon" transform=format!("translate({x} {y})") d=d></path> }
}

/// One message on its link, labelled; click it to lose it in flight.
#[component]
fn Message(
    /// The message (in flight before or after this step).
    msg: Msg,
    /// The drawing's geometry.
    layout: Memo<Layout>,
) -> impl IntoView {
    let lab = expect_context::<Lab>();
    let id = msg.id;
    let lost = matches!(msg.fate, Fate::Lost(_));
    // The fraction of its flight done at the displayed moment.
    let progress = move || {
        let t0 = lab.prev.with(|w| w.now.0) as f64;
        let t1 = lab.world.with(|w| w.now.0) as f64;
        let t = t0 + (t1 - t0) * lab.anim.get();
        let span = (msg.arrives_at.0 as f64 - msg.sent_at.0 as f64).max(1.0);
        ((t - msg.sent_at.0 as f64) / span).clamp(0.0, 1.0)
    };
    let in_world = move || lab.world.with(|w| w.msgs.contains_key(&id));
    // Delivered during this step: gone once the glide ends.
    let hidden = move || !in_world() && lab.anim.get() >= 1.0 && !lost;
    let broken = move || lost && progress() >= BREAK_AT;
    let pos = move || {
        let p = if lost {
            progress().min(BREAK_AT)
        } else {
            progress()
        };
        layout
            .with(|l| l.along(msg.from, msg.to, p))
            .unwrap_or((0.0, 0.0))
    };
    let label = msg.payload.label();
    let w = 8.0 + 6.4 * label.chars().count() as f64;
    let kind = msg.payload.kind();
    let title = label.clone();
    let lose = move |_| {
        if in_world() && !lost {
            lab.command(Command::Lose(id));
        }
    };
    view! {
        <g
            class=format!("msg msg--{kind}")
            class:msg--lost=broken
            class:hidden=hidden
            data-testid="msg"
            data-msg=id.0
            transform=move || {
                let (x, y) = pos();
                format!("translate({x:.1} {y:.1})")
            }
            on:click=lose
            role="button"
            tabindex="-1"
        >
            <title>{title}</title>
            <circle class="msg__dot" r="6"></circle>
            <g class="msg__tag" transform="translate(9 -9)">
                <rect class="msg__pill" x="0" y="-11" width=w height="16" rx="8"></rect>
                <text class="msg__label" x="4" y="1">
                    {label}
                </text>
            </g>
            <text class="msg__x" x="-5" y="5">
                "✕"
            </text>
        </g>
    }
}
