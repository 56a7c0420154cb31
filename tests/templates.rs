//! The labels' templates against their callers: every `{}` template of the UI's
//! labels is filled with as many arguments as it has placeholders, in both
//! languages (`narrate::fill` cannot know: a missing argument would leave a `{}`
//! on the page, an extra one would be lost).

// The module-graph tests' file reader (this test uses only `sources`).
mod support {
    #[allow(dead_code)]
    pub mod modgraph;
}

use idempotency_lab::lesson::{ui, Lang};
use std::path::Path;
use support::modgraph;

fn placeholders(s: &str) -> usize {
    s.matches("{}").count()
}

/// The splits of `s` at its top-level commas (outside brackets and strings).
fn top_level_args(s: &str) -> Vec<&str> {
    let (mut depth, mut quoted, mut start, mut out) = (0i32, false, 0, Vec::new());
    let mut prev = ' ';
    for (i, c) in s.char_indices() {
        match c {
            '"' if prev != '\\' => quoted = !quoted,
            '(' | '[' | '{' if !quoted => depth += 1,
            ')' | ']' | '}' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => {
                out.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
        prev = c;
    }
    out.push(s[start..].trim());
    out.retain(|a| !a.is_empty());
    out
}

/// The text of `s` from its start to the bracket that closes the one before it.
fn to_close(s: &str) -> &str {
    let mut depth = 1;
    let mut quoted = false;
    let mut prev = ' ';
    for (i, c) in s.char_indices() {
        match c {
            '"' if prev != '\\' => quoted = !quoted,
            '(' | '[' | '{' if !quoted => depth += 1,
            ')' | ']' | '}' if !quoted => {
                depth -= 1;
                if depth == 0 {
                    return &s[..i];
                }
            }
            _ => {}
        }
        prev = c;
    }
    s
}

/// Every template of the labels (`{}` placeholders, filled by `narrate::fill`) is
/// filled with as many arguments as it has placeholders, at every call of the UI's
/// sources (`fill(ui.x, &[a, b])`, `count(ui.x, n, &[a])`, and `one(ui.x, a)` in
/// `narrate::refusal`), in
/// both languages; and every template with placeholders is filled somewhere the
/// scan sees. (`fill` itself cannot know: a missing argument would leave a `{}`
/// on the page, an extra one would be lost.)
#[test]
fn every_template_is_filled_with_as_many_arguments_as_it_has_placeholders() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let (ru, en) = (ui(Lang::Ru).entries(), ui(Lang::En).entries());
    let arity = |field: &str| -> Option<usize> {
        let r = ru.iter().find(|(k, _)| *k == field)?.1;
        let e = en.iter().find(|(k, _)| *k == field)?.1;
        assert_eq!(placeholders(r), placeholders(e), "{field}: {r:?} / {e:?}");
        Some(placeholders(e))
    };
    let mut filled = std::collections::BTreeSet::new();
    let mut counted = std::collections::BTreeSet::new();
    let mut wrong = Vec::new();
    for (module, code) in modgraph::sources(&root) {
        for call in ["fill(", "one(", "count("] {
            for (i, _) in code.match_indices(call) {
                if code[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                    continue;
                }
                let args = top_level_args(to_close(&code[i + call.len()..]));
                let got = match (call, args.get(1)) {
                    ("one(", _) => args.len() - 1,
                    // The count, then the rest.
                    ("count(", _) => match args.get(2) {
                        Some(a) if a.starts_with("&[") => {
                            1 + top_level_args(to_close(&a[2..])).len()
                        }
                        _ => continue,
                    },
                    (_, Some(a)) if a.starts_with("&[") => top_level_args(to_close(&a[2..])).len(),
                    // A slice built elsewhere: not counted here.
                    _ => continue,
                };
                // The template: `ui.x`, or either of `if … { ui.x } else { ui.y }`.
                let first = args.first().copied().unwrap_or("");
                for (j, _) in first.match_indices('.') {
                    let field: String = first[j + 1..]
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    let Some(want) = arity(&field) else { continue };
                    if got != want {
                        wrong.push(format!(
                            "{module}: {field} has {want} placeholders, filled with {got}"
                        ));
                    }
                    if call == "count(" {
                        counted.insert(field.clone());
                    }
                    filled.insert(field);
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    // A counted label (a choice `[a|b]`) is filled by `narrate::count`, which makes
    // its choices, and only such a label: `fill` would show the brackets.
    let (ru_counted, en_counted) = (forms_of(&ru), forms_of(&en));
    assert_eq!(ru_counted, en_counted, "counted in one language only");
    let mut by_count = counted.clone();
    by_count.extend(COUNTED_ELSEWHERE.iter().map(|f| f.to_string()));
    assert_eq!(
        en_counted, by_count,
        "counted labels against count()'s calls"
    );
    // Templates chosen into a variable first, then filled: each with the number of
    // arguments its `fill` passes (`lesson::calc::outputs`' verdict,
    // `narrate::narrate`'s invariant line, `render`'s truth line).
    // Counted labels chosen into a variable first (`render`'s truth line).
    const COUNTED_ELSEWHERE: &[&str] = &["truth_charges", "truth_refunds"];
    const FILLED_ELSEWHERE: &[(&str, usize)] = &[
        ("calc_fits_one_node", 1),
        ("calc_needs_cluster", 1),
        ("n_invariant_restored", 1),
        ("truth_charges", 2),
    ];
    for (field, n) in FILLED_ELSEWHERE {
        assert_eq!(arity(field), Some(*n), "{field}");
    }
    let unseen: Vec<&str> = en
        .iter()
        .filter(|(k, v)| placeholders(v) > 0 && !filled.contains(*k))
        .map(|(k, _)| *k)
        .filter(|k| !FILLED_ELSEWHERE.iter().any(|(f, _)| f == k))
        .collect();
    assert!(
        unseen.is_empty(),
        "templates the scan never sees filled: {unseen:?}"
    );
    assert!(filled.len() > 40, "only {} templates seen", filled.len());
}

/// The labels with a choice of forms (`[a|b]`), by field name.
fn forms_of(entries: &[(&'static str, &'static str)]) -> std::collections::BTreeSet<String> {
    entries
        .iter()
        .filter(|(_, v)| v.contains('['))
        .map(|(k, _)| k.to_string())
        .collect()
}
