//! The UI crate's modules and what they name of each other: every `crate::…` and
//! `super::…` path of `src/**/*.rs` (outside comments and test modules) is an edge
//! from the file's module to the module it names. `app` mounts the page: no module
//! imports back up into it, only `app` installs the page's one listener, and the
//! graph has no cycle.
//!
//!     cargo test --test ui_modules -- --nocapture
//!
//! prints the graph (each module with the modules it names).

mod support {
    pub mod modgraph;
}

use std::path::Path;
use support::modgraph::{self, Graph};

/// The code of a source without comments and without its test module (which may
/// reach anything it tests).
fn code(src: &str) -> String {
    let src = src.split("#[cfg(test)]").next().unwrap_or("");
    src.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The paths `code` names after `crate::` or `super::`, resolved to full paths from
/// the crate's root, each with its following segments (`a::b::c`). A use tree's
/// braces name each item: `crate::x::{y, z}` → `x::y`, `x::z`.
fn paths(module: &str, code: &str) -> Vec<String> {
    // `super` of `ui::listen` (and of `ui`, written in `ui/mod.rs`) is its parent.
    let mut parent: Vec<&str> = module.split("::").filter(|s| !s.is_empty()).collect();
    parent.pop();
    let mut out = Vec::new();
    for (prefix, base) in [("crate::", Vec::new()), ("super::", parent)] {
        for (i, _) in code.match_indices(prefix) {
            // `crate::` inside `$crate::` or another path's middle is not a root.
            let before = code[..i].chars().last();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$' || c == ':') {
                continue;
            }
            let rest = &code[i + prefix.len()..];
            let path: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let path = path.trim_end_matches(':');
            let mut full: Vec<&str> = base.clone();
            full.extend(path.split("::").filter(|s| !s.is_empty()));
            let head = full.join("::");
            // A brace after the path: each item of the tree (one level is enough here).
            let after = &rest[path.len()..];
            let tree = after
                .strip_prefix("::{")
                .or_else(|| after.strip_prefix('{').filter(|_| path.is_empty()));
            if let Some(items) = tree {
                let items = &items[..items.find('}').unwrap_or(items.len())];
                for item in items.split(',') {
                    let item = item.trim().split("::").next().unwrap_or("").trim();
                    if !item.is_empty() && item != "self" {
                        out.push(format!("{head}::{item}"));
                    }
                }
            }
            out.push(head);
        }
    }
    out
}

/// The UI crate's graph: module → the modules it names.
fn graph() -> Graph {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let named: Vec<(String, Vec<String>)> = modgraph::sources(&root)
        .into_iter()
        .map(|(m, src)| {
            let p = paths(&m, &code(&src));
            (m, p)
        })
        .collect();
    modgraph::graph(&named)
}

#[test]
fn no_module_imports_back_up_into_app() {
    let g = graph();
    modgraph::print(&g);
    for (m, to) in &g {
        // `main` mounts the app; the library root declares it.
        if m != "main" {
            assert!(!to.iter().any(|t| t == "app"), "{m} names app");
        }
        if m != "app" && m != "main" {
            assert!(
                !to.iter().any(|t| t == "ui::listen"),
                "{m} names the listener: only app installs it"
            );
        }
    }
    assert!(g["app"].contains(&"ui::listen".to_string()), "{g:?}");
    assert!(
        g["ui::listen"].contains(&"ui::controls".to_string()),
        "{g:?}"
    );
}

#[test]
fn the_ui_crate_has_no_import_cycle() {
    if let Some(c) = modgraph::cycle(&graph()) {
        panic!("import cycle: {}", c.join(" → "));
    }
}

#[test]
fn the_reader_sees_the_paths() {
    let code = "use crate::x::{Y, z::W};\nuse super::{act, state::Lab};\nfn f() { super::lesson::focus(); crate::a::b(); }";
    let p = paths("ui::controls", code);
    for want in [
        "x::Y",
        "x::z",
        "ui::act",
        "ui::state",
        "ui::lesson::focus",
        "a::b",
    ] {
        assert!(p.contains(&want.to_string()), "{want}: {p:?}");
    }
    assert!(paths("m", "$crate::x").is_empty());
}

/// The UI never parses core text: the trace, the stores and the outcome reach it
/// typed (`Happening` with its `Stmt`/`Outcome`/Redis command, `KeyRecord`,
/// `World::observables`) and are rendered, never read back. The
/// ways core text was once taken apart (splitting a command on whitespace, comparing
/// a rendered outcome, a home-made JSON `field()`, probing the stores' tables for a
/// number) appear nowhere in the UI's code; `src/lesson/` (the text itself) aside.
#[test]
fn the_ui_never_parses_core_text() {
    const TAKEN_APART: [&str; 12] = [
        "split_whitespace",
        "field(",
        "\"ROLLBACK\"",
        "\"COMMIT\"",
        "\"INSERT",
        "\"SELECT",
        "\"UPDATE",
        "\"GET ",
        "\"SET ",
        "r[1]",
        ".table(\"",
        "first_int(",
    ];
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut read = 0;
    for (m, src) in modgraph::sources(&root) {
        if m == "lesson" || m.starts_with("lesson::") {
            continue;
        }
        let code = code(&src);
        read += 1;
        for pat in TAKEN_APART {
            assert!(!code.contains(pat), "{m}: {pat}");
        }
    }
    assert!(read > 10, "{read} files");
}
