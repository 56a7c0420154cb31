//! The root component and the first page: title, introduction and the system topology.

use leptos::prelude::*;

/// The root of the page. `data-testid="app-ready"` appears once the wasm app has
/// mounted; the end-to-end tests and `make bench` wait for it.
#[component]
pub fn App() -> impl IntoView {
    view! {
        <main class="page" data-testid="app-ready">
            <header class="page__header">
                <h1>"Idempotency Lab"</h1>
                <p class="lead">
                    "A payment request times out. Did the card get charged? The client cannot "
                    "tell, so it retries, and a careless retry charges the customer twice. In "
                    "this lab you send requests through a small payment system, inject "
                    "timeouts, crashes and duplicate deliveries, and watch how an idempotency "
                    "key turns a risky retry into a safe one."
                </p>
            </header>
            <Topology/>
        </main>
    }
}

/// One box of the topology diagram, in SVG user units of a `0 0 400 300` viewBox.
struct NodeSpec {
    /// Short id: the test id is `node-{id}`.
    id: &'static str,
    /// Name, one entry per line.
    title: &'static [&'static str],
    /// Technology or role, drawn under the name in a muted style.
    detail: &'static str,
    /// CSS modifier for the node's role: `client`, `service`, `store` or `external`.
    role: &'static str,
    x: f32,
    y: f32,
    w: f32,
    h: f32,
}

const NODES: [NodeSpec; 5] = [
    NodeSpec {
        id: "client",
        title: &["Mobile App"],
        detail: "client",
        role: "client",
        x: 125.0,
        y: 4.0,
        w: 150.0,
        h: 58.0,
    },
    NodeSpec {
        id: "api",
        title: &["Payment API"],
        detail: "service",
        role: "service",
        x: 125.0,
        y: 110.0,
        w: 150.0,
        h: 58.0,
    },
    NodeSpec {
        id: "redis",
        title: &["Idempotency", "Store"],
        detail: "Redis",
        role: "store",
        x: 2.0,
        y: 218.0,
        w: 122.0,
        h: 78.0,
    },
    NodeSpec {
        id: "postgres",
        title: &["Payments", "Ledger"],
        detail: "Postgres",
        role: "store",
        x: 139.0,
        y: 218.0,
        w: 122.0,
        h: 78.0,
    },
    NodeSpec {
        id: "processor",
        title: &["Card", "Processor"],
        detail: "external",
        role: "external",
        x: 276.0,
        y: 218.0,
        w: 122.0,
        h: 78.0,
    },
];

/// Directed links `(from, to)` by node id. The client talks only to the API.
const LINKS: [(&str, &str); 4] = [
    ("client", "api"),
    ("api", "redis"),
    ("api", "postgres"),
    ("api", "processor"),
];

/// Space left between an arrowhead and the box it points at.
const ARROW_GAP: f32 = 4.0;

fn node(id: &str) -> &'static NodeSpec {
    NODES
        .iter()
        .find(|n| n.id == id)
        .expect("LINKS names only ids from NODES")
}

/// The five services of the lesson drawn as an SVG that scales to the page width.
#[component]
fn Topology() -> impl IntoView {
    let links = LINKS
        .iter()
        .map(|&(from, to)| {
            let (a, b) = (node(from), node(to));
            let d = format!(
                "M {} {} L {} {}",
                a.x + a.w / 2.0,
                a.y + a.h,
                b.x + b.w / 2.0,
                b.y - ARROW_GAP
            );
            view! {
                <path
                    class="link"
                    data-testid=format!("link-{from}-{to}")
                    d=d
                    marker-end="url(#arrowhead)"
                />
            }
        })
        .collect_view();

    let nodes = NODES
        .iter()
        .map(|n| {
            let cx = n.x + n.w / 2.0;
            let lines = n.title.len() as f32;
            // Vertically centre the name lines plus the detail line in the box.
            let first = n.y + n.h / 2.0 - (lines * 18.0 + 16.0) / 2.0 + 14.0;
            let title = n
                .title
                .iter()
                .enumerate()
                .map(|(i, line)| {
                    view! { <tspan x=cx y=first + i as f32 * 18.0>{*line}</tspan> }
                })
                .collect_view();
            view! {
                <g class=format!("node node--{}", n.role) data-testid=format!("node-{}", n.id)>
                    <rect x=n.x y=n.y width=n.w height=n.h rx="10"/>
                    <text class="node__title" text-anchor="middle">{title}</text>
                    <text
                        class="node__detail"
                        text-anchor="middle"
                        x=cx
                        y=first + lines * 18.0 + 2.0
                    >
                        {n.detail}
                    </text>
                </g>
            }
        })
        .collect_view();

    view! {
        <figure class="topology">
            <svg
                class="topology__svg"
                viewBox="0 0 400 300"
                role="img"
                aria-labelledby="topology-title"
            >
                <title id="topology-title">
                    "Mobile App calls Payment API; Payment API calls the Idempotency Store "
                    "(Redis), the Payments Ledger (Postgres) and the Card Processor."
                </title>
                <defs>
                    <marker
                        id="arrowhead"
                        viewBox="0 0 10 10"
                        refX="9"
                        refY="5"
                        markerWidth="7"
                        markerHeight="7"
                        orient="auto-start-reverse"
                    >
                        <path class="arrowhead" d="M 0 0 L 10 5 L 0 10 z"/>
                    </marker>
                </defs>
                <g class="links">{links}</g>
                <g class="nodes">{nodes}</g>
            </svg>
            <figcaption>"The system you will break: one client, one API, three dependencies."</figcaption>
        </figure>
    }
}
