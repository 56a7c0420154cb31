//! The simulation core (`sim/`, crate `idem-sim`) must stay independent of the UI world:
//! no dependencies at all, no mention of leptos / web-sys / js-sys / wasm-bindgen / gloo /
//! getrandom, no wall clock and no global RNG. This test reads the core's manifest and
//! sources and names every file and line that breaks the rule.
//!
//! (Adding `use leptos::...` to the core also fails to compile, since the core declares
//! no such dependency; this test states the rule and catches the subtler cases.)

use std::fs;
use std::path::{Path, PathBuf};

/// Names the core must not mention outside comments, each with the reason shown on failure.
const FORBIDDEN: &[(&str, &str)] = &[
    ("leptos", "UI framework"),
    ("web_sys", "browser API"),
    ("web-sys", "browser API"),
    ("js_sys", "JavaScript API"),
    ("js-sys", "JavaScript API"),
    ("wasm_bindgen", "JavaScript glue"),
    ("wasm-bindgen", "JavaScript glue"),
    ("gloo", "browser helpers"),
    (
        "getrandom",
        "OS randomness: seed the core's PRNG at the edge instead",
    ),
    ("thread_rng", "global RNG: use the core's seeded PRNG"),
    ("SystemTime", "wall clock: use the core's virtual time"),
    ("Instant::now", "wall clock: use the core's virtual time"),
];

#[derive(Debug, PartialEq)]
struct Violation {
    line: usize,
    what: String,
}

fn core_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("sim")
}

/// Replaces the text of comments by spaces (keeping line breaks), so that a doc comment
/// saying "this crate never touches leptos" is allowed. String and char literals are kept.
fn strip_comments(src: &str) -> String {
    let chars: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if c == 'r' && matches!(next, Some('"') | Some('#')) && !ident_before(&chars, i) {
            // Raw string r"..." or r#"..."#: copy verbatim up to the matching close.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            while j < chars.len() {
                if chars[j] == '"' && (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            out.extend(&chars[i..j.min(chars.len())]);
            i = j;
        } else if c == '"' {
            out.push(c);
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' && i + 1 < chars.len() {
                    out.push(chars[i]);
                    i += 1;
                }
                out.push(chars[i]);
                i += 1;
            }
            if i < chars.len() {
                out.push('"');
                i += 1;
            }
        } else if c == '\'' {
            // A char literal ('x', '\n', '"') or a lifetime ('a): copy a char literal whole
            // so that '"' does not open a string.
            let end = if next == Some('\\') {
                (i + 3..chars.len()).find(|&j| chars[j] == '\'')
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            let end = end.unwrap_or(i);
            out.extend(&chars[i..=end]);
            i = end + 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn ident_before(chars: &[char], i: usize) -> bool {
    i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')
}

/// Forbidden names in Rust source, ignoring comments. A name matches at the start of an
/// identifier, so `gloo_timers` and `leptos_router` match but `igloo` does not.
fn scan_source(src: &str) -> Vec<Violation> {
    scan_text(&strip_comments(src))
}

fn scan_text(text: &str) -> Vec<Violation> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        for (name, why) in FORBIDDEN {
            let hit = line.match_indices(name).any(|(at, _)| {
                !line[..at]
                    .chars()
                    .next_back()
                    .is_some_and(|p| p.is_alphanumeric() || p == '_' || p == '-')
            });
            if hit {
                found.push(Violation {
                    line: n + 1,
                    what: format!("mentions `{name}` ({why})"),
                });
            }
        }
    }
    found
}

/// The core's manifest: every forbidden name, plus any entry in a dependency table
/// (`[dependencies]`, `[build-dependencies]`, `[target.'cfg(..)'.dependencies]`,
/// `[dependencies.foo]`). Dev-dependencies are allowed unless they name a forbidden crate.
fn scan_manifest(toml: &str) -> Vec<Violation> {
    let without_comments: String = toml
        .lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let mut found = scan_text(&without_comments);
    let mut in_deps = false;
    for (n, line) in without_comments.lines().enumerate() {
        let line = line.trim();
        if let Some(header) = line.strip_prefix('[') {
            let header = header.trim_matches(|c| c == '[' || c == ']').trim();
            let parts: Vec<&str> = header.split('.').map(str::trim).collect();
            let is_dep_table = |p: &str| p == "dependencies" || p == "build-dependencies";
            in_deps = match parts.as_slice() {
                [table] => is_dep_table(table),
                [table, _name] if is_dep_table(table) => {
                    found.push(Violation {
                        line: n + 1,
                        what: format!("declares a dependency table [{header}]"),
                    });
                    true
                }
                ["target", .., table] => is_dep_table(table),
                _ => false,
            };
        } else if in_deps && !line.is_empty() {
            found.push(Violation {
                line: n + 1,
                what: format!("declares a dependency: `{line}`"),
            });
        }
    }
    found.sort_by_key(|v| v.line);
    found
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn core_stays_independent_of_the_ui_world() {
    let root = core_dir();
    let mut report = Vec::new();
    let mut record = |path: &Path, violations: Vec<Violation>| {
        let shown = path
            .strip_prefix(env!("CARGO_MANIFEST_DIR"))
            .unwrap_or(path);
        for v in violations {
            report.push(format!("{}:{}: {}", shown.display(), v.line, v.what));
        }
    };

    let manifest = root.join("Cargo.toml");
    let toml = fs::read_to_string(&manifest).expect("sim/Cargo.toml is readable");
    record(&manifest, scan_manifest(&toml));

    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let build_script = root.join("build.rs");
    if build_script.exists() {
        files.push(build_script);
    }
    files.sort();
    assert!(!files.is_empty(), "no Rust sources found under sim/src");
    for file in &files {
        let src = fs::read_to_string(file).expect("core source is readable");
        record(file, scan_source(&src));
    }

    assert!(
        report.is_empty(),
        "the simulation core must not depend on the UI world (see ARCHITECTURE.md, Invariants):\n{}",
        report.join("\n")
    );
    println!(
        "core boundary: checked sim/Cargo.toml and {} source file(s)",
        files.len()
    );
}

// The checker itself.

fn check(src: &str, expected: &[(usize, &str)]) {
    let got: Vec<(usize, String)> = scan_source(src)
        .into_iter()
        .map(|v| (v.line, v.what))
        .collect();
    let expected: Vec<(usize, String)> = expected
        .iter()
        .map(|(l, name)| (*l, name.to_string()))
        .collect();
    let names: Vec<(usize, String)> = got
        .iter()
        .map(|(l, what)| (*l, what.split('`').nth(1).unwrap_or("").to_string()))
        .collect();
    assert_eq!(names, expected, "violations in:\n{src}");
}

#[test]
fn flags_ui_crates_clock_and_global_rng() {
    check("use leptos::prelude::*;", &[(1, "leptos")]);
    check(
        "fn f() {}\nlet t = std::time::SystemTime::now();",
        &[(2, "SystemTime")],
    );
    check("let t = Instant::now();", &[(1, "Instant::now")]);
    check("let r = rand::thread_rng();", &[(1, "thread_rng")]);
    check("use gloo_timers::callback::Timeout;", &[(1, "gloo")]);
    check("let s = \"wasm_bindgen\";", &[(1, "wasm_bindgen")]);
}

#[test]
fn ignores_comments_and_lookalike_names() {
    check(
        "//! This crate never touches leptos or web_sys.\nfn f() {}",
        &[],
    );
    check("/* SystemTime /* nested */ Instant::now */ fn f() {}", &[]);
    check("fn igloo() {} struct VirtualInstant; // not the clock", &[]);
    check("let c = '\"'; // leptos\nlet d = 1;", &[]);
    check("let q = '\\''; let s = \"gloo\"; // '", &[(1, "gloo")]);
    check("fn f<'a>(x: &'a str) {} // getrandom", &[]);
    check("let s = r#\"// not a comment: leptos\"#;", &[(1, "leptos")]);
}

#[test]
fn manifest_may_not_declare_dependencies() {
    let lines = |toml: &str| -> Vec<usize> { scan_manifest(toml).iter().map(|v| v.line).collect() };
    assert_eq!(
        lines("[package]\nname = \"idem-sim\"\n\n[dependencies]\n"),
        Vec::<usize>::new()
    );
    assert_eq!(lines("[dependencies]\nserde = \"1\"\n"), vec![2]);
    assert_eq!(lines("[dependencies.serde]\nversion = \"1\"\n"), vec![1, 2]);
    assert_eq!(
        lines("[target.'cfg(target_arch = \"wasm32\")'.dependencies]\nfoo = \"1\"\n"),
        vec![2]
    );
    assert_eq!(
        lines("[dev-dependencies]\nproptest = \"1\"\n"),
        Vec::<usize>::new()
    );
    assert_eq!(lines("[dev-dependencies]\nleptos = \"0.8\"\n"), vec![2]);
    assert_eq!(
        lines("# leptos is not allowed here\n[package]\n"),
        Vec::<usize>::new()
    );
}
