//! The sequence diagram: a lane per node, an arrow per message, the current
//! step highlighted. Clicking an arrow jumps to the step that sent it.

use super::state::Lab;
use crate::narrate::node_short;
use crate::seqdiag::{self, MarkKind};
use leptos::html::Div;
use leptos::prelude::*;

const LANE_W: f64 = 92.0;
const ROW_H: f64 = 22.0;
const TOP: f64 = 34.0;

#[component]
pub fn Sequence() -> impl IntoView {
    let lab = expect_context::<Lab>();
    let ui = lab.ui();
    let data = Memo::new(move |_| lab.run.with(|r| seqdiag::build(&r.trace)));
    let lanes = Memo::new(move |_| lab.run.with(|r| r.scenario.nodes()));
    let lane_x = move |n| {
        lanes.with(|l| {
            l.iter()
                .position(|x| *x == n)
                .map_or(0.0, |i| LANE_W / 2.0 + LANE_W * i as f64)
        })
    };
    let y = |step: usize| TOP + ROW_H * step as f64;
    let width = move || LANE_W * lanes.with(|l| l.len()) as f64;
    let height = move || TOP + ROW_H * (lab.len() as f64 + 1.5);
    let scroller = NodeRef::<Div>::new();
    // Keep the current step in view (the DOM's scroll position is outside state).
    Effect::new(move |_| {
        let k = lab.cursor.get();
        if let Some(el) = scroller.get() {
            let top = (y(k) - 120.0).max(0.0);
            el.set_scroll_top(top as i32);
        }
    });
    view! {
        <section class="pane pane--sequence" data-testid="pane-sequence">
            <h3>{ui.pane_sequence}</h3>
            <div class="sequence" node_ref=scroller>
                <svg
                    width=width
                    height=height
                    viewBox=move || format!("0 0 {} {}", width(), height())
                    role="img"
                    aria-label=ui.pane_sequence
                >
                    <defs>
                        <marker
                            id="seq-arrow"
                            viewBox="0 0 10 10"
                            refX="9"
                            refY="5"
                            markerWidth="7"
                            markerHeight="7"
                            orient="auto-start-reverse"
                        >
                            <path d="M0 0L10 5L0 10z" class="seq__head"></path>
                        </marker>
                    </defs>
                    <rect
                        class="seq__now"
                        x="0"
                        y=move || y(lab.cursor.get()) - ROW_H / 2.0
                        width=width
                        height=ROW_H
                    ></rect>
                    {move || {
                        lanes
                            .get()
                            .into_iter()
                            .map(|n| {
                                let x = lane_x(n);
                                view! {
                                    <g class="seq__lane">
                                        <text class="seq__lane-name" x=x y="16">
                                            {node_short(ui, n)}
                                        </text>
                                        <line x1=x y1="24" x2=x y2=height></line>
                                    </g>
                                }
                            })
                            .collect_view()
                    }}
                    {move || {
                        let (arrows, marks) = data.get();
                        let k = lab.cursor.get();
                        let arrows = arrows
                            .into_iter()
                            .map(|a| {
                                let (x1, y1) = (lane_x(a.from), y(a.sent));
                                let end = a.end.unwrap_or(a.sent + 1);
                                let (mut x2, mut y2) = (lane_x(a.to), y(end));
                                if a.lost {
                                    x2 = x1 + (x2 - x1) * 0.75;
                                    y2 = y1 + (y2 - y1) * 0.75;
                                }
                                let future = a.sent > k;
                                let sent = a.sent;
                                let tx = if x2 >= x1 { x1 + 4.0 } else { x1 - 4.0 };
                                let anchor = if x2 >= x1 { "start" } else { "end" };
                                view! {
                                    <g
                                        class=format!("seq__arrow seq__arrow--{}", a.kind)
                                        class:lost=a.lost
                                        class:future=future
                                        data-testid="seq-arrow"
                                        on:click=move |_| {
                                            lab.playing.set(false);
                                            lab.go(sent);
                                        }
                                    >
                                        <title>{a.label.clone()}</title>
                                        <line
                                            x1=x1
                                            y1=y1
                                            x2=x2
                                            y2=y2
                                            marker-end=if a.lost { "" } else { "url(#seq-arrow)" }
                                        ></line>
                                        <line class="seq__hit" x1=x1 y1=y1 x2=x2 y2=y2></line>
                                        {a.lost.then(|| view! { <text class="seq__x" x=x2 - 5.0 y=y2 + 5.0>"✕"</text> })}
                                        <text class="seq__label" x=tx y=y1 - 3.0 text-anchor=anchor>
                                            {truncate(&a.label, 22)}
                                        </text>
                                    </g>
                                }
                            })
                            .collect_view();
                        let marks = marks
                            .into_iter()
                            .map(|m| {
                                let (glyph, class) = match m.kind {
                                    MarkKind::Crash => ("✕", "crash"),
                                    MarkKind::Restart => ("↻", "restart"),
                                    MarkKind::Timeout => ("⏱", "timeout"),
                                    MarkKind::Violation => ("!", "violation"),
                                    MarkKind::KeyExpired => ("⌛", "expired"),
                                    MarkKind::ClockJump => ("⏩", "clock"),
                                };
                                view! {
                                    <text
                                        class=format!("seq__mark seq__mark--{class}")
                                        class:future={ m.step > k }
                                        x=lane_x(m.node) + 6.0
                                        y=y(m.step) + 4.0
                                    >
                                        {glyph}
                                    </text>
                                }
                            })
                            .collect_view();
                        (arrows, marks)
                    }}
                </svg>
            </div>
        </section>
    }
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n - 1).collect::<String>())
    }
}
