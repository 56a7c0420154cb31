//! A crate's module graph, read from its sources: which module names which. Shared
//! by the two crates' import tests (`sim/tests/modules.rs`, `tests/ui_modules.rs`),
//! each of which decides what counts as naming a module; this finds the files,
//! resolves the names to modules, prints the graph and finds a cycle.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// Module → the modules it names, sorted.
pub type Graph = BTreeMap<String, Vec<String>>;

/// `src/ui/listen.rs` → `ui::listen`; `mod.rs` is its directory; `lib.rs` is the root, "".
pub fn module_of(rel: &Path) -> String {
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
    for e in fs::read_dir(dir).expect("a source directory") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Every source file under `root`, as (module, source).
pub fn sources(root: &Path) -> Vec<(String, String)> {
    let mut found = Vec::new();
    files(root, &mut found);
    found
        .iter()
        .map(|p| {
            let rel = p.strip_prefix(root).expect("under the root");
            (module_of(rel), fs::read_to_string(p).expect("readable"))
        })
        .collect()
}

/// The graph of `named`: each module with the paths it names (`a::b::c`, from the
/// crate's root), each path resolved to its longest prefix that is a module.
pub fn graph(named: &[(String, Vec<String>)]) -> Graph {
    let known: Vec<&str> = named.iter().map(|(m, _)| m.as_str()).collect();
    let mut g = Graph::new();
    for (m, paths) in named {
        let mut to: Vec<String> = Vec::new();
        for path in paths {
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

/// Prints the graph, a module per line (seen with `--nocapture`).
pub fn print(g: &Graph) {
    for (m, to) in g {
        println!(
            "{:<16} → {}",
            if m.is_empty() { "(lib)" } else { m },
            to.join(", ")
        );
    }
}

/// A cycle of the graph, if it has one: the modules in order, the first repeated last.
pub fn cycle(g: &Graph) -> Option<Vec<String>> {
    let mut done = Vec::new();
    g.keys()
        .find_map(|m| cycle_through(g, m, &mut Vec::new(), &mut done))
}

fn cycle_through(
    g: &Graph,
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
        if let Some(c) = cycle_through(g, t, stack, done) {
            return Some(c);
        }
    }
    stack.pop();
    done.push(m.to_string());
    None
}
