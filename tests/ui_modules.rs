//! The UI crate's modules and what they name of each other: every `crate::…` and
//! `super::…` path of `src/**/*.rs` (outside comments and test modules) is an edge
//! from the file's module to the module it names. `app` mounts the page: no module
//! imports back up into it, only `app` installs the page's one listener, and the
//! graph has no cycle.
//!
//!     cargo test --test ui_modules -- --nocapture
//!
//! prints the graph (each module with the modules it names).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// `src/ui/listen.rs` → `ui::listen`; `mod.rs` is its directory; `lib.rs` is the root, "".
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

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).expect("src") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

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

/// The UI crate's graph: module → modules it names.
fn graph() -> BTreeMap<String, Vec<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    files(&root, &mut found);
    let modules: Vec<(String, String)> = found
        .iter()
        .map(|p| {
            let rel = p.strip_prefix(&root).expect("under src");
            let src = fs::read_to_string(p).expect("readable");
            (module_of(rel), code(&src))
        })
        .collect();
    let known: Vec<&str> = modules.iter().map(|(m, _)| m.as_str()).collect();
    let mut g = BTreeMap::new();
    for (m, code) in &modules {
        let mut to: Vec<String> = Vec::new();
        for path in paths(m, code) {
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
        to.sort();
        g.insert(m.clone(), to);
    }
    g
}

#[test]
fn no_module_imports_back_up_into_app() {
    let g = graph();
    for (m, to) in &g {
        println!(
            "{:<16} → {}",
            if m.is_empty() { "(lib)" } else { m },
            to.join(", ")
        );
    }
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
fn the_ui_crate_has_no_import_cycle() {
    let g = graph();
    let mut done = Vec::new();
    for m in g.keys() {
        if let Some(c) = cycle(&g, m, &mut Vec::new(), &mut done) {
            panic!("import cycle: {}", c.join(" → "));
        }
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
    let mut found = Vec::new();
    files(&root, &mut found);
    let mut read = 0;
    for p in found.iter().filter(|p| !p.starts_with(root.join("lesson"))) {
        let code = code(&fs::read_to_string(p).expect("readable"));
        read += 1;
        for pat in TAKEN_APART {
            assert!(!code.contains(pat), "{}: {pat}", p.display());
        }
    }
    assert!(read > 10, "{read} files");
}
