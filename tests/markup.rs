//! Text reaches the page's DOM only as a `Markup` (`src/html.rs`: escaped by
//! construction). The only calls that write markup into the DOM are the two
//! sinks of `src/ui/mod.rs`, each taking a `Markup` (the page has no Leptos view:
//! its lab is markup written once, `app::grid`). The scan reads every source of
//! `src/` (comments aside), so a new `set_inner_html`, `set_outer_html`,
//! `insert_adjacent_html` or a view's `inner_html=` fails here.

// The module-graph tests' file reader (this test uses only `sources`).
mod support {
    #[allow(dead_code)]
    pub mod modgraph;
}

use std::path::Path;
use support::modgraph;

/// The DOM's ways to parse markup.
const WRITERS: [&str; 4] = [
    "set_inner_html(",
    "set_outer_html(",
    "insert_adjacent_html(",
    "set_html_unsafe(",
];

/// `src` without its `//` comments.
fn code(src: &str) -> String {
    src.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Where `src` (module `module`) writes markup around `Markup`.
fn bypasses(module: &str, src: &str) -> Vec<String> {
    let code = code(src);
    let mut out = Vec::new();
    for w in WRITERS {
        // The sinks themselves, in `ui` (`src/ui/mod.rs`): one call each.
        let sink = module == "ui" && matches!(w, "set_inner_html(" | "set_outer_html(");
        let n = code.matches(w).count();
        if n > usize::from(sink) {
            out.push(format!("{module}: {n} × {w}"));
        }
    }
    // A view's `inner_html=` would write its string as markup: the page has no view.
    for (i, _) in code.match_indices("inner_html=") {
        let shown: String = code[i + "inner_html=".len()..].chars().take(40).collect();
        out.push(format!("{module}: inner_html={shown}"));
    }
    out
}

#[test]
fn markup_reaches_the_dom_only_through_the_markup_sinks() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let sources = modgraph::sources(&root);
    let found: Vec<String> = sources
        .iter()
        .flat_map(|(m, src)| bypasses(m, src))
        .collect();
    assert!(found.is_empty(), "markup written around Markup: {found:#?}");
    // The sinks take a `Markup` (and nothing else).
    let ui = &sources
        .iter()
        .find(|(m, _)| m == "ui")
        .expect("src/ui/mod.rs")
        .1;
    for sink in [
        "pub fn set_inner(el: &web_sys::Element, m: &Markup)",
        "pub fn set_outer(el: &web_sys::Element, m: &Markup)",
    ] {
        assert!(ui.contains(sink), "{sink}");
    }
    // The page's markup goes through the sinks.
    let writes: usize = sources
        .iter()
        .map(|(_, s)| code(s).matches("set_inner(").count())
        .sum();
    assert!(writes >= 8, "only {writes} set_inner( seen");
}

/// The scan itself: a raw write is found, a sink is not.
#[test]
fn the_scan_finds_a_raw_write() {
    assert_eq!(
        bypasses("ui::x", "el.set_inner_html(&s); // el.set_inner_html(&t)"),
        vec!["ui::x: 1 × set_inner_html(".to_string()]
    );
    assert_eq!(
        bypasses(
            "ui::x",
            "view! { <div inner_html=move || s.clone()></div> }"
        ),
        vec!["ui::x: inner_html=move || s.clone()></div> }".to_string()]
    );
    assert!(bypasses("ui::x", "super::set_inner(&el, &m);").is_empty());
}
