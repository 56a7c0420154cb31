//! Text reaches the page's DOM only as a `Markup` (`src/html.rs`: escaped by
//! construction). The only calls that write markup into the DOM are the four
//! sinks of `src/ui/mod.rs`, each taking a `Markup`; every view's `inner_html=`
//! goes through one of them. The scan reads every source of `src/` (comments
//! aside), so a new `set_inner_html`, `set_outer_html`, `insert_adjacent_html` or
//! a raw `inner_html=` fails here.

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

/// The sinks (`ui::markup`, `ui::fixed`) a view's `inner_html=` may use.
const VIEW_SINKS: [&str; 2] = ["markup(", "fixed("];

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
    for (i, _) in code.match_indices("inner_html=") {
        let arg = &code[i + "inner_html=".len()..];
        let callee = arg
            .split('(')
            .next()
            .unwrap_or("")
            .rsplit("::")
            .next()
            .unwrap_or("");
        if !VIEW_SINKS.contains(&format!("{callee}(").as_str()) {
            let shown: String = arg.chars().take(40).collect();
            out.push(format!("{module}: inner_html={shown}"));
        }
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
        "pub fn markup(f: impl Fn() -> Markup",
        "pub fn fixed(m: Markup)",
        "pub fn set_inner(el: &web_sys::Element, m: &Markup)",
        "pub fn set_outer(el: &web_sys::Element, m: &Markup)",
    ] {
        assert!(ui.contains(sink), "{sink}");
    }
    // The scan sees the views' markup.
    let views: usize = sources
        .iter()
        .map(|(_, s)| code(s).matches("inner_html=").count())
        .sum();
    assert!(views >= 8, "only {views} inner_html= seen");
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
    assert!(bypasses("ui::x", "<div inner_html=super::markup(m)></div>").is_empty());
}
