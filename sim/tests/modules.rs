//! The core's modules import each other without a circle: every
//! `use crate::…` of `sim/src/**/*.rs` is an edge from the file's module to
//! the module it names, and the graph has no cycle. A failure names one.
//!
//!     cargo test -p idem-sim --test modules -- --nocapture
//!
//! prints the graph (each module with the modules it imports).

#[path = "../../tests/support/modgraph.rs"]
mod modgraph;

use modgraph::Graph;
use std::path::Path;

/// The `use crate::…;` statements of a source, without comments, each on one line.
fn uses(src: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur: Option<String> = None;
    for line in src.lines() {
        let code = line.split("//").next().unwrap_or("").trim();
        if cur.is_none() {
            let code = code.strip_prefix("pub ").unwrap_or(code);
            let code = code.strip_prefix("pub(crate) ").unwrap_or(code);
            if let Some(rest) = code.strip_prefix("use crate::") {
                cur = Some(String::new());
                cur.as_mut().unwrap().push_str(rest);
            }
        } else if let Some(c) = cur.as_mut() {
            c.push_str(code);
        }
        if cur.as_ref().is_some_and(|c| c.ends_with(';')) {
            out.push(cur.take().unwrap().trim_end_matches(';').to_string());
        }
    }
    out
}

/// The paths a use tree names: `a::{b, c::{d, e}}` → `a::b`, `a::c::d`, `a::c::e`.
fn expand(tree: &str) -> Vec<String> {
    let tree = tree.replace(' ', "");
    let Some(open) = tree.find('{') else {
        return vec![tree];
    };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.len() - 1];
    let mut items = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, ch) in inner.char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&inner[start..]);
    items
        .into_iter()
        .filter(|i| !i.is_empty())
        .flat_map(expand)
        .map(|p| match p.as_str() {
            "self" => prefix.trim_end_matches("::").to_string(),
            _ => format!("{prefix}{p}"),
        })
        .collect()
}

/// The import graph of the core: module → modules it imports.
fn graph() -> Graph {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let named: Vec<(String, Vec<String>)> = modgraph::sources(&root)
        .into_iter()
        .map(|(m, src)| (m, uses(&src).iter().flat_map(|u| expand(u)).collect()))
        .collect();
    modgraph::graph(&named)
}

#[test]
fn the_core_has_no_import_cycle() {
    let g = graph();
    modgraph::print(&g);
    if let Some(c) = modgraph::cycle(&g) {
        panic!("import cycle: {}", c.join(" → "));
    }
}

#[test]
fn the_graph_sees_the_uses() {
    // The reader itself: a nested tree, `self`, a use over several lines.
    assert_eq!(
        expand("a::{self, b, c::{d, e}}"),
        ["a", "a::b", "a::c::d", "a::c::e"]
    );
    let src = "use crate::x::Y; // a comment\npub use crate::z::{\n    P,\n    Q,\n};\n";
    assert_eq!(uses(src), ["x::Y", "z::{P,Q,}"]);
    let g = graph();
    assert!(g["world"].contains(&"node::client".to_string()), "{g:?}");
}
