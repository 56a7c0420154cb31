//! The core's modules import each other without a circle: every
//! `use crate::…` of `sim/src/**/*.rs` is an edge from the file's module to
//! the module it names, and the graph has no cycle. A failure names one.
//!
//!     cargo test -p idem-sim --test modules -- --nocapture
//!
//! prints the graph (each module with the modules it imports).

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

/// `sim/src/node/client.rs` → `node::client`; `mod.rs` is its directory; `lib.rs` is the root, "".
fn module_of(rel: &Path) -> String {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts.join("::")
}

fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in fs::read_dir(dir).expect("sim/src") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

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
fn graph() -> BTreeMap<String, Vec<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut paths = Vec::new();
    files(&root, &mut paths);
    let modules: Vec<(String, String)> = paths
        .iter()
        .map(|p| {
            let m = module_of(p.strip_prefix(&root).expect("under src"));
            (m, fs::read_to_string(p).expect("readable"))
        })
        .collect();
    let known: Vec<&str> = modules.iter().map(|(m, _)| m.as_str()).collect();
    let mut g = BTreeMap::new();
    for (m, src) in &modules {
        let mut to: Vec<String> = Vec::new();
        for u in uses(src) {
            for path in expand(&u) {
                // The longest prefix of the path that is a module.
                let segs: Vec<&str> = path.split("::").collect();
                let target = (1..=segs.len())
                    .rev()
                    .map(|n| segs[..n].join("::"))
                    .find(|p| known.contains(&p.as_str()));
                if let Some(t) = target {
                    if t != *m && !t.is_empty() && !to.contains(&t) {
                        to.push(t);
                    }
                }
            }
        }
        to.sort();
        g.insert(m.clone(), to);
    }
    g
}

/// A cycle through `m`, if the graph has one reachable from it.
fn cycle(
    g: &BTreeMap<String, Vec<String>>,
    m: &str,
    stack: &mut Vec<String>,
    done: &mut Vec<String>,
) -> Option<Vec<String>> {
    if let Some(i) = stack.iter().position(|s| s == m) {
        let mut c = stack[i..].to_vec();
        c.push(m.to_string());
        return Some(c);
    }
    if done.iter().any(|d| d == m) {
        return None;
    }
    stack.push(m.to_string());
    for t in g.get(m).into_iter().flatten() {
        if let Some(c) = cycle(g, t, stack, done) {
            return Some(c);
        }
    }
    stack.pop();
    done.push(m.to_string());
    None
}

#[test]
fn the_core_has_no_import_cycle() {
    let g = graph();
    for (m, to) in &g {
        println!(
            "{:<16} → {}",
            if m.is_empty() { "(lib)" } else { m },
            to.join(", ")
        );
    }
    let mut done = Vec::new();
    for m in g.keys() {
        if let Some(c) = cycle(&g, m, &mut Vec::new(), &mut done) {
            panic!("import cycle: {}", c.join(" → "));
        }
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
