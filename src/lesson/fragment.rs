//! The lesson's prose as HTML fragments, written into the page at build time and
//! fetched by the module when the reader switches language.
//!
//! The prose is ~15–20 KB gzip per language; compiled into the WebAssembly module
//! both languages would cost every reader both. So the module never links it: this
//! host-side renderer writes the fragments under `public/lesson/`, a test
//! (`fragments_are_fresh`) keeps the committed files equal to what it renders, and
//! the build's last hook (`build/prerender.mjs`) writes the sections of each language
//! into that language's page (`en.html` English, `ru.html` Russian), so the
//! lesson is text at first paint, before and without the module. The module fetches
//! only what the page does not hold: the other language's sections (`<lang>.html`)
//! when the reader switches, and the text of the scenario open in the lab
//! (`<lang>/<id>.html`).
//!
//! A fragment is a sequence of named parts, each introduced by a marker line
//! `<!--@name-->` ([`MARK`]); [`parts`] splits it. The names:
//!
//! * sections: [`PAGE_PARTS`] — `title` and `description` (the page's `<title>` and
//!   meta description), `header` (the page header with the language switch),
//!   `before` (the introduction, the contents and the sections up to "the four
//!   scenarios", shown above the lab), `lab` (the lab's place until the module
//!   mounts there), `after` (the rest, below the lab) and `ui` (the module's labels
//!   in this language, `lesson::labels_text`, escaped);
//! * a scenario: `ex` (the explanation shown beside it), `code` (the handler's code,
//!   one escaped line per line) and `q` (the scenario's question, one field per
//!   line: the prompt, the index of the right answer, the explanation, then the
//!   answers; a fix-it question has [`FIX`] and the size of the smallest set of
//!   defences for the index, and no answers).
//!
//! Prose is escaped and its inline markup (`` `code` ``, `**bold**`) turned into
//! `<code>`/`<strong>`. Scenario links are plain links to `?scenario=…&step=decisive`
//! (they work without the module too); the page intercepts them to stay in place.

use super::calc::{self, Inputs, INPUT_NAMES, OUTPUT_NAMES};
use super::inline::{self, Span};
use super::{lesson, Block, Kind, Lang, Lesson, PageText, Question, ScenarioId, Ui};
use crate::html::{esc, esc_text as text, Html, Markup};
use crate::template::split_once;
use crate::ui::act::{Act, Action};
use std::fmt::Write;

/// The parts of a sections fragment that the build's last hook (`build/prerender.mjs`)
/// writes into the page of its language (`en.html`, `ru.html`): the `<title>`, the
/// description, the page header, the prose `before` the lab, the lab's place, the prose
/// `after` it. The module reads only `header`, `before` and `after`, when the reader
/// switches to the other language.
pub const PAGE_PARTS: [&str; 7] = [
    "title",
    "description",
    "header",
    "before",
    "lab",
    "after",
    "ui",
];

/// The file of the page prerendered in `lang`, beside the other in `dist/` (named the
/// same in `build/prerender.mjs` `PAGES`, which the hook uses, and in `boot.js`: the test
/// `the_pages_are_named_alike` keeps the three in step).
pub fn page_file(lang: Lang) -> &'static str {
    match lang {
        Lang::En => "en.html",
        Lang::Ru => "ru.html",
    }
}

/// Starts every part: `<!--@name-->`.
pub const MARK: &str = "<!--@";

/// The section after which the lab is placed.
pub const LAB_AFTER_SECTION: &str = "scenarios";

/// The path of the sections' fragment inside the crate, `public/lesson/<lang>.html`;
/// the page fetches it relative to itself.
pub fn sections_path(lang: Lang) -> String {
    format!("public/lesson/{}.html", lang.code())
}

/// The path of one scenario's fragment, `public/lesson/<lang>/<scenario>.html`.
pub fn scenario_path(lang: Lang, scenario: ScenarioId) -> String {
    format!("public/lesson/{}/{scenario}.html", lang.code())
}

/// Splits a fragment into its named parts, in order.
pub fn parts(fragment: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    let mut rest = Some(fragment);
    while let Some(text) = rest {
        let (chunk, next) = match split_once(text, MARK) {
            Some((c, n)) => (c, Some(n)),
            None => (text, None),
        };
        if let Some((name, body)) = split_once(chunk, "-->") {
            out.push((name, body.trim_matches('\n')));
        }
        rest = next;
    }
    out
}

/// The part called `name`, if the fragment has it.
pub fn part_of<'a>(fragment: &'a str, name: &str) -> Option<&'a str> {
    parts(fragment)
        .into_iter()
        .find(|(n, _)| *n == name)
        .map(|(_, b)| b)
}

/// Every fragment file of both languages: (path, content). Host only.
#[cfg(not(target_arch = "wasm32"))]
pub fn files() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for lang in Lang::ALL {
        out.push((sections_path(lang), render_sections(lang)));
        for id in ScenarioId::ALL {
            out.push((scenario_path(lang, id), render_scenario(lang, id)));
        }
        out.push((explore_path(lang), explore_text(lang)));
    }
    out.push((EXPLORE_KEYS_PATH.to_string(), explore_keys()));
    out
}

/// The worker's typed label keys, generated from [`super::Explore`]'s fields.
pub const EXPLORE_KEYS_PATH: &str = "worker/src/key.rs";

/// `worker/src/key.rs`: where each label is in `explore_text`'s lines, typed. One
/// [`Key`] variant per field of [`super::Explore`] (the first lines, in order), then a
/// line per [`Toggle`] and per [`Invariant`] (the discriminant's order, which is
/// their `ALL`'s), then the names a scenario gives a toggle apart ([`toggle_apart`]).
/// The worker indexes the lines, never searches them, and a misspelt key does not
/// compile. Host only; kept fresh by `fragments_are_fresh`.
///
/// [`Toggle`]: idem_sim::scenario::Toggle
/// [`Invariant`]: idem_sim::invariant::Invariant
#[cfg(not(target_arch = "wasm32"))]
pub fn explore_keys() -> String {
    use idem_sim::invariant::Invariant;
    use idem_sim::scenario::Toggle;
    let names: Vec<&str> = lesson(Lang::En)
        .explore
        .entries()
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    let camel = |k: &str| -> String {
        k.split('_')
            .map(|w| {
                let mut c = w.chars();
                c.next()
                    .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                    .unwrap_or_default()
            })
            .collect()
    };
    let toggles = names.len();
    let invariants = toggles + Toggle::ALL.len();
    let apart = invariants + Invariant::ALL.len();
    let pairs = toggle_apart();
    let mut out = String::from(
        "//! Generated by `src/lesson/fragment.rs` (`explore_keys`) from the fields of\n\
         //! `Explore` in `src/lesson/mod.rs`; `fragments_are_fresh` rewrites it. Do not edit.\n\
         //! `worker/text/<lang>.txt` is one label per line, in the order given here.\n\n\
         use idem_sim::invariant::Invariant;\n\
         use idem_sim::scenario::{ScenarioId, Toggle};\n\n\
         /// A label of the Explore panel: its line of `worker/text/<lang>.txt` (the first lines).\n\
         #[derive(Clone, Copy, PartialEq, Eq, Debug)]\n\
         pub enum Key {\n",
    );
    for k in &names {
        let _ = writeln!(out, "    {},", camel(k));
    }
    out.push_str(
        "}\n\nimpl Key {\n    /// Every key, in the text's order.\n    pub const ALL: [Key; ",
    );
    let _ = writeln!(out, "{}] = [", names.len());
    for k in &names {
        let _ = writeln!(out, "        Key::{},", camel(k));
    }
    let _ = write!(
        out,
        "    ];\n}}\n\n\
         /// The line of the first toggle's name, then one per [`Toggle`] in `Toggle::ALL`'s order.\n\
         pub const TOGGLES: usize = {toggles};\n\
         /// The line of the first invariant's name, then one per [`Invariant`] in `Invariant::ALL`'s order.\n\
         pub const INVARIANTS: usize = {invariants};\n\
         /// The text's lines in all: the last are the names a scenario gives a toggle apart.\n\
         pub const LINES: usize = {};\n\n\
         /// The line of toggle `t`'s name in scenario `s`.\n\
         pub fn toggle(t: Toggle, s: ScenarioId) -> usize {{\n    match (t, s) {{\n",
        apart + pairs.len()
    );
    for (i, (t, s)) in pairs.iter().enumerate() {
        let _ = writeln!(
            out,
            "        (Toggle::{t:?}, ScenarioId::{s:?}) => {},",
            apart + i
        );
    }
    out.push_str(
        "        _ => TOGGLES + t as usize,\n    }\n}\n\n\
         /// The line of invariant `i`'s name.\n\
         pub fn invariant(i: Invariant) -> usize {\n    INVARIANTS + i as usize\n}\n",
    );
    out
}

/// The (toggle, scenario) pairs where the scenario names the toggle apart, in
/// either language: each has a line of its own at the end of `explore_text`.
#[cfg(not(target_arch = "wasm32"))]
fn toggle_apart() -> Vec<(idem_sim::scenario::Toggle, ScenarioId)> {
    use super::toggle_label;
    let mut out = Vec::new();
    for t in idem_sim::scenario::Toggle::ALL {
        for id in ScenarioId::ALL {
            if Lang::ALL.into_iter().any(|lang| {
                let ui = lesson(lang).ui;
                toggle_label(ui, t, Some(id)) != toggle_label(ui, t, None)
            }) {
                out.push((t, id));
            }
        }
    }
    out
}

/// The Explore panel's text for the explorer's worker, `worker/text/<lang>.txt`,
/// which fetches it (the page's module never reads it).
pub fn explore_path(lang: Lang) -> String {
    format!("worker/text/{}.txt", lang.code())
}

/// One label per line, in the order of `worker/src/key.rs` ([`explore_keys`]):
/// [`super::Explore`]'s fields, each toggle's name, each invariant's, as the lab
/// names them, then each name a scenario gives a toggle apart.
#[cfg(not(target_arch = "wasm32"))]
pub fn explore_text(lang: Lang) -> String {
    use super::toggle_label;
    use idem_sim::scenario::Toggle;
    let l = lesson(lang);
    let mut out = String::new();
    for (_, v) in l.explore.entries() {
        let _ = writeln!(out, "{v}");
    }
    for t in Toggle::ALL {
        let _ = writeln!(out, "{}", toggle_label(l.ui, t, None));
    }
    for inv in idem_sim::invariant::Invariant::ALL {
        let _ = writeln!(out, "{}", crate::narrate::invariant_name(l.ui, inv));
    }
    for (t, id) in toggle_apart() {
        let _ = writeln!(out, "{}", toggle_label(l.ui, t, Some(id)));
    }
    out
}

/// The sections of `lang`: parts `before` and `after`, and what the page needs
/// besides them to show the whole lesson before the module starts (see [`PAGE_PARTS`]).
pub fn render_sections(lang: Lang) -> String {
    let l = lesson(lang);
    let mut out = String::with_capacity(64 * 1024);
    part(&mut out, "title");
    out.push_str(&esc(l.ui.title()));
    part(&mut out, "description");
    out.push_str(&esc(l.page.subtitle()));
    part(&mut out, "header");
    // The module writes this part over the page's when the reader switches language.
    out.push_str(&page_header(l.ui, &l.page, lang));
    part(&mut out, "before");
    // The first screen: the problem in a sentence, and the lab offered at once
    // (`Act::Try`: see `ui::controls::try_lab`).
    let _ = write!(
        out,
        "<div class=\"hero\"><p class=\"hero__problem\">{}</p><button type=\"button\" class=\"primary hero__try\" data-act=\"{}\" data-testid=\"try-lab\">{}</button></div>",
        prose(l.hero[0]),
        Act::Try.name(),
        esc(l.hero[1])
    );
    let _ = write!(out, "<p class=\"intro\">{}</p>", prose(l.intro));
    contents(&mut out, l);
    let split = l
        .sections
        .iter()
        .position(|s| s.id == LAB_AFTER_SECTION)
        .map_or(l.sections.len(), |i| i + 1);
    for s in &l.sections[..split] {
        section(&mut out, l, s);
    }
    part(&mut out, "lab");
    // The lab's place until the module mounts into it (it empties it first): its
    // title, and the line a reader sees when the lab cannot start (`boot.js` marks
    // `<html class="no-lab">`; style/main.css shows the line then), or without script.
    let _ = write!(
        out,
        "<h2 id=\"lab-title\">{}</h2><p class=\"lab-off\" data-testid=\"lab-off\">{}</p><noscript><p class=\"lab-off\" data-testid=\"lab-noscript\">{}</p></noscript>",
        esc(l.ui.lab_title()),
        prose(l.no_lab[0]),
        prose(l.no_lab[1])
    );
    part(&mut out, "after");
    for s in &l.sections[split..] {
        section(&mut out, l, s);
    }
    // The module's labels in this language (`lesson::labels_text`), escaped: the page
    // holds them in an inert `<textarea hidden id="ui-text">`, and the module reads
    // them back as text, at start from the page, after a switch from this fragment.
    part(&mut out, "ui");
    out.push_str(&esc(&crate::lesson::labels_text(lang)));
    out
}

/// The page's header: the skip link, the title with the language switch, the lead.
/// Prerendered into the page; the module never writes it.
pub fn page_header(ui: &Ui, page: &PageText, lang: Lang) -> Markup {
    let mut h = Html::new();
    h.el(
        "a",
        &[("class", "skip"), ("href", "#lab")],
        page.skip_to_lab(),
    );
    h.open("header", &[("class", "page__header")]);
    h.open("div", &[("class", "page__title")]);
    h.el("h1", &[], ui.title());
    h.markup(&lang_switch(page, lang));
    h.close("div");
    h.el("p", &[("class", "lead")], page.subtitle());
    h.close("header");
    h.finish()
}

/// RU / EN buttons; the header is written anew when the language changes.
pub fn lang_switch(page: &PageText, lang: Lang) -> Markup {
    let mut h = Html::new();
    h.open(
        "div",
        &[
            ("class", "lang"),
            ("role", "group"),
            ("aria-label", page.lang_switch()),
        ],
    );
    for l in Lang::ALL {
        let (short, name) = match l {
            Lang::Ru => (page.lang_ru_short(), page.lang_ru_name()),
            Lang::En => (page.lang_en_short(), page.lang_en_name()),
        };
        let testid = format!("lang-{}", l.code());
        h.open(
            "button",
            &[
                ("type", "button"),
                ("data-testid", &testid),
                ("aria-pressed", if l == lang { "true" } else { "false" }),
                ("title", name),
            ],
        );
        Action::Lang(l).put(&mut h);
        h.text(short).close("button");
    }
    h.close("div");
    h.finish()
}

/// One scenario of `lang`: parts `ex`, `code` and `q`.
pub fn render_scenario(lang: Lang, id: ScenarioId) -> String {
    let l = lesson(lang);
    let mut out = String::new();
    let s = l.scenario(id);
    part(&mut out, "ex");
    blocks(&mut out, l, s.explain);
    part(&mut out, "code");
    out.push_str(&super::listing::lines(id, lang));
    {
        let q = l.question(id);
        part(&mut out, "q");
        let _ = writeln!(out, "{}", prose(q.prompt));
        if q.kind == Kind::FixIt {
            // The page lists the scenario's defences and judges the choice by running it.
            let _ = writeln!(out, "{FIX}{}\n{}", q.answers.len(), prose(q.explain));
        } else {
            let _ = writeln!(out, "{}\n{}", q.correct, prose(q.explain));
            for a in q.answers {
                let _ = writeln!(out, "{}", prose(a));
            }
        }
    }
    out
}

/// Starts the second line of a fix-it question's `q` part (then the size of the
/// smallest set of defences), where a predict question has the index of its right
/// answer.
pub const FIX: &str = "fix";

/// A question answered in place, with no script: radio answers (the right one
/// marked `data-right`), and Check, a `<details>` that opens on the explanation with
/// both verdicts; the style shows the one that fits the checked answer and marks the
/// answers (`style/main.css`, `.quiz`).
fn quiz(out: &mut String, l: &Lesson, q: &Question) {
    let kind = q.kind.id();
    let _ = write!(
        out,
        "<div class=\"predict quiz\" data-testid=\"quiz-{kind}\"><fieldset><legend>{}</legend><p>{}</p>",
        esc(l.kinds[q.kind as usize]),
        prose(q.prompt)
    );
    for (i, a) in q.answers.iter().enumerate() {
        let right = if i == q.correct { " data-right" } else { "" };
        let _ = write!(
            out,
            "<label class=\"answer\"{right}><input type=\"radio\" name=\"q-{kind}\" value=\"{i}\"><span>{}</span></label>",
            prose(a)
        );
    }
    let _ = write!(
        out,
        "</fieldset><details><summary>{}</summary><p class=\"verdict\"><strong class=\"yes\">{}.</strong><strong class=\"no\">{}.</strong> {}</p></details></div>",
        esc(l.ui.check_answer()),
        esc(l.ui.correct()),
        esc(l.ui.not_quite()),
        prose(q.explain)
    );
}

fn part(out: &mut String, name: &str) {
    let _ = writeln!(out, "\n{MARK}{name}-->");
}

fn contents(out: &mut String, l: &Lesson) {
    let _ = write!(
        out,
        "<nav class=\"toc\" aria-labelledby=\"toc-title\"><h2 id=\"toc-title\">{}</h2><ol>",
        esc(l.page.contents())
    );
    for s in l.sections {
        let _ = write!(out, "<li><a href=\"#{}\">{}</a>", s.id, prose(s.title));
        if s.id == LAB_AFTER_SECTION {
            let _ = write!(out, " · <a href=\"#lab\">{}</a>", esc(l.ui.lab_title()));
        }
        out.push_str("</li>");
    }
    out.push_str("</ol></nav>\n");
}

fn section(out: &mut String, l: &Lesson, s: &super::Section) {
    let _ = writeln!(
        out,
        "<section class=\"prose\" id=\"{}\" aria-labelledby=\"h-{0}\"><h2 id=\"h-{0}\">{}</h2>",
        s.id,
        prose(s.title)
    );
    blocks(out, l, s.blocks);
    out.push_str("</section>\n");
}

fn blocks(out: &mut String, l: &Lesson, blocks: &[Block]) {
    for b in blocks {
        match *b {
            Block::P(t) => {
                let _ = write!(out, "<p>{}</p>", prose(t));
            }
            Block::Code(c) => {
                // A listing may scroll sideways: a focusable region, so keys can scroll it.
                let _ = write!(
                    out,
                    "<pre class=\"listing\" tabindex=\"0\" role=\"region\" aria-label=\"{}\"><code>{}</code></pre>",
                    l.ui.listing(),
                    text(c)
                );
            }
            Block::List(items) => {
                out.push_str("<ul>");
                for i in items {
                    let _ = write!(out, "<li>{}</li>", prose(i));
                }
                out.push_str("</ul>");
            }
            Block::Table { head, rows } => {
                out.push_str("<div class=\"table\"><table><thead><tr>");
                for h in head {
                    let _ = write!(out, "<th>{}</th>", prose(h));
                }
                out.push_str("</tr></thead><tbody>");
                // On a phone the rows are stacked; each cell then names its column.
                let labels: Vec<String> = head
                    .iter()
                    .map(|h| esc(&h.replace(['`', '*'], "")))
                    .collect();
                for r in rows {
                    out.push_str("<tr>");
                    for (c, label) in r.iter().zip(&labels) {
                        let _ = write!(out, "<td data-label=\"{label}\">{}</td>", prose(c));
                    }
                    out.push_str("</tr>");
                }
                out.push_str("</tbody></table></div>");
            }
            Block::Note(t) => {
                let _ = write!(out, "<p class=\"note\">{}</p>", prose(t));
            }
            Block::ScenarioLink { scenario, label } => {
                let _ = write!(
                    out,
                    "<p><a class=\"scn-link\" data-act=\"{}\" data-scenario=\"{scenario}\" \
                     href=\"?lang={}&amp;scenario={scenario}&amp;step=decisive#lab\">{} →</a></p>",
                    Act::Open.name(),
                    l.lang.code(),
                    prose(label)
                );
            }
            Block::Calculator => calculator(out, l),
            Block::Quiz(q) => quiz(out, l, q),
        }
        out.push('\n');
    }
}

/// The ADR calculator: inputs with the ADR's figures and outputs computed from
/// them here, so the numbers are right before the module recomputes them on input.
fn calculator(out: &mut String, l: &Lesson) {
    let (lang, ui, page) = (l.lang, l.ui, &l.page);
    let labels = super::calc::input_labels(ui);
    let d = Inputs::default();
    let _ = write!(
        out,
        "<form class=\"calc\" data-act=\"{}\" aria-labelledby=\"calc-title\"><h3 id=\"calc-title\">{}</h3><div class=\"calc__in\">",
        Act::Calc.name(),
        esc(page.calc_title())
    );
    for (((name, label), value), (lo, hi)) in INPUT_NAMES
        .iter()
        .zip(labels)
        .zip(d.values())
        .zip(calc::BOUNDS)
    {
        // The HTML number syntax is locale-independent.
        let en = |x: f64| calc::format_short(x, Lang::En);
        let _ = write!(
            out,
            "<label>{}<input type=\"number\" name=\"{name}\" value=\"{}\" min=\"{}\" max=\"{}\" step=\"any\" inputmode=\"decimal\" required></label>",
            esc(label),
            en(value),
            en(lo),
            // `format_short` keeps three digits; the bounds are whole numbers.
            (hi as u64)
        );
    }
    out.push_str("</div><dl class=\"calc__out\">");
    let values = calc::outputs(d, lang);
    let out_labels = [
        page.calc_keys_held(),
        page.calc_memory(),
        page.calc_added_latency(),
    ];
    for ((name, label), v) in OUTPUT_NAMES.iter().zip(out_labels).zip(&values) {
        let _ = write!(
            out,
            "<div><dt>{}</dt><dd><output name=\"{name}\">{}</output></dd></div>",
            esc(label),
            esc(v)
        );
    }
    out.push_str("</dl>");
    for (name, v) in OUTPUT_NAMES.iter().zip(&values).skip(3) {
        let _ = write!(
            out,
            "<p><output name=\"{name}\" aria-live=\"polite\">{}</output></p>",
            esc(v)
        );
    }
    let _ = write!(
        out,
        "<p class=\"muted\">{}</p></form>",
        esc(page.calc_note())
    );
}

/// A prose string as markup: escaped, with its inline markup as elements.
pub fn prose(s: &str) -> String {
    let Ok(spans) = inline::parse(s) else {
        return text(s);
    };
    let mut out = String::with_capacity(s.len() + 16);
    for span in spans {
        match span {
            Span::Text(t) => out.push_str(&text(t)),
            Span::Code(c) => {
                let _ = write!(out, "<code>{}</code>", text(c));
            }
            Span::Bold(b) => {
                let _ = write!(out, "<strong>{}</strong>", text(b));
            }
        }
    }
    out
}
