//! The docs are maps, checked against the code they describe: README.md and
//! ARCHITECTURE.md stay short, every "Architecture invariant:" names a test that exists,
//! and the contracts in `docs/` (the URL parameters, the test ids) are what the page
//! parses and writes.

// The module-graph tests' file reader (this test uses only `sources`).
mod support {
    #[allow(dead_code)]
    pub mod modgraph;
}

use std::fs;
use std::path::Path;

fn read(path: &str) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The backticked spans of a line.
fn ticks(line: &str) -> Vec<&str> {
    line.split('`').skip(1).step_by(2).collect()
}

#[test]
fn readme_and_architecture_are_maps_not_logs() {
    for (file, most) in [("README.md", 150), ("ARCHITECTURE.md", 250)] {
        let lines = read(file).lines().count();
        assert!(lines <= most, "{file} has {lines} lines, at most {most}");
    }
}

/// Whether `name` is a test of `file`: a Rust `fn name`, or the start of an e2e test's title.
fn names_a_test(file: &str, name: &str) -> bool {
    let Ok(text) = fs::read_to_string(file) else {
        return false;
    };
    if file.ends_with(".rs") {
        text.contains(&format!("fn {name}("))
    } else {
        ["test('", "test(\"", "test(`"]
            .iter()
            .any(|open| text.contains(&format!("{open}{name}")))
    }
}

#[test]
fn every_architecture_invariant_names_a_test_that_exists() {
    let doc = read("ARCHITECTURE.md");
    // A callout is the paragraph that starts with the marker.
    let callouts: Vec<String> = doc
        .split("\n\n")
        .filter(|p| p.contains("Architecture invariant:"))
        .map(|p| p.replace('\n', " "))
        .collect();
    assert!(
        callouts.len() >= 8,
        "only {} invariant callouts",
        callouts.len()
    );
    for callout in &callouts {
        let tests: Vec<(&str, &str)> = ticks(callout)
            .into_iter()
            .filter_map(|t| t.split_once("::"))
            .filter(|(file, _)| Path::new(file).is_file())
            .collect();
        assert!(
            !tests.is_empty(),
            "an invariant names no test as `file::test`: {callout}"
        );
        for (file, name) in tests {
            assert!(
                names_a_test(file, name),
                "{file} has no test {name:?} (named by: {callout})"
            );
        }
    }
}

/// The parameters `Params::parse` matches on: the quoted names of its `match k.as_str()`.
fn parsed_parameters() -> Vec<String> {
    let src = read("src/params.rs");
    let body = src
        .split("match k.as_str() {")
        .nth(1)
        .expect("Params::parse matches on the parameter's name");
    let mut names = Vec::new();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let arms = body.lines().find(|l| l.trim().starts_with('"')).map(indent);
    for line in body.lines().take_while(|l| l.trim() != "_ => {}") {
        let arm = line.trim();
        if Some(indent(line)) == arms && arm.starts_with('"') && arm.contains("=>") {
            let pattern = arm
                .split("=>")
                .next()
                .unwrap()
                .split(" if ")
                .next()
                .unwrap();
            for name in pattern.split('|') {
                let name = name.trim().trim_matches('"').to_string();
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
    }
    names.sort();
    names
}

#[test]
fn the_documented_url_parameters_are_the_parsed_ones() {
    let doc = read("docs/embedding.md");
    let mut documented: Vec<String> = doc
        .lines()
        .filter(|l| l.starts_with("| `"))
        .flat_map(|l| {
            let first = l.split('|').nth(1).unwrap_or_default();
            ticks(first)
                .into_iter()
                .map(|t| t.split('=').next().unwrap().to_string())
                .collect::<Vec<_>>()
        })
        .filter(|t| !t.starts_with("cmi."))
        .collect();
    documented.sort();
    documented.dedup();
    assert_eq!(
        documented,
        parsed_parameters(),
        "docs/embedding.md's table of URL parameters against src/params.rs"
    );
}

#[test]
fn the_documented_test_ids_are_written_by_the_page() {
    let sources: Vec<String> = ["src", "worker/src"]
        .iter()
        .flat_map(|root| support::modgraph::sources(Path::new(root)))
        .map(|(_, source)| source)
        .collect();
    let written = |id: &str| {
        sources.iter().any(|s| {
            s.match_indices(id).any(|(i, _)| {
                let part_of_a_name = |c: char| c.is_ascii_alphanumeric() || c == '-';
                let after = s[i + id.len()..].chars().next().unwrap_or(' ');
                let before = s[..i].chars().next_back().unwrap_or(' ');
                !part_of_a_name(after) && !part_of_a_name(before)
            })
        })
    };
    let doc = read("docs/testids.md");
    let mut ids = Vec::new();
    for line in doc.lines().filter(|l| l.starts_with("- ")) {
        // The ids of a bullet: its backticked names before any colon, outside parentheses.
        let mut plain = String::new();
        let mut depth = 0;
        for c in line.chars() {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ if depth == 0 => plain.push(c),
                _ => {}
            }
        }
        let head = plain.split(": ").next().unwrap();
        ids.extend(ticks(head).into_iter().map(str::to_string));
    }
    assert!(ids.len() >= 30, "docs/testids.md names {} ids", ids.len());
    for id in &ids {
        // An id the page formats (`compare-{cmp}`, `toggle-{}`; the doc's `toggle-<toggle
        // id>`): its prefix before a format argument.
        let formatted = id.match_indices('-').any(|(i, _)| {
            let open = format!("\"{}-{{", &id[..i]);
            sources.iter().any(|s| s.contains(&open))
        });
        let ok = written(id) || formatted;
        assert!(
            ok,
            "docs/testids.md names `{id}`, which src/ and worker/src/ never write"
        );
    }
}
