//! Consistency checks between the two languages and over every string.

use super::Kind as QKind;
use super::*;
use idem_sim::scenario::{Group, Toggle, ToggleKind};

/// Russian strings that are deliberately the same as in English: product names,
/// protocol names and pane titles that are names of software.
const RU_LATIN_ALLOWED: &[&str] = &[
    "RU",
    "EN",
    "API",
    "Redis",
    "Postgres",
    "Stripe",
    "Stripe API v1",
    "Stripe API v2",
    "Square",
    "PayPal",
    "Amazon SQS FIFO",
    "Apache Kafka",
    "etcd",
    "Amazon DynamoDB",
    "HTTP",
    "API {}",
    "PSP",
    "TTL",
    "WHERE version = expected_version",
    ",",
];

/// What a string is, for the language checks.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    /// Prose with inline markup.
    Prose,
    /// Plain UI text, no markup.
    Ui,
    /// Literal code.
    Code,
    /// An id, not shown to readers.
    Id,
}

/// Every string of a lesson with its kind and a path for error messages.
fn walk(lesson: &'static Lesson) -> Vec<(String, Kind, &'static str)> {
    let mut out = Vec::new();
    out.push(("intro".to_string(), Kind::Prose, lesson.intro));
    for s in lesson.sections {
        out.push((format!("section {}", s.id), Kind::Id, s.id));
        out.push((format!("section {} title", s.id), Kind::Prose, s.title));
        walk_blocks(&format!("section {}", s.id), s.blocks, &mut out);
    }
    for (name, text) in lesson.ui.entries() {
        out.push((format!("ui.{name}"), Kind::Ui, text));
    }
    for (name, text) in lesson.page.entries() {
        out.push((format!("page.{name}"), Kind::Ui, text));
    }
    for n in lesson.names {
        out.push((format!("scenario {} title", n.id), Kind::Prose, n.title));
        out.push((format!("scenario {} summary", n.id), Kind::Prose, n.summary));
    }
    for sc in lesson.scenarios {
        let p = format!("scenario {}", sc.id);
        out.push((p.clone(), Kind::Id, sc.id.as_str()));
        walk_blocks(&p, sc.explain, &mut out);
        for (i, line) in super::listing::of(sc.id).iter().enumerate() {
            let note = line.note[lesson.lang as usize];
            if !line.code.is_empty() {
                out.push((format!("{p} code[{i}]"), Kind::Code, line.code));
            }
            if !note.is_empty() {
                out.push((format!("{p} code[{i}] note"), Kind::Prose, note));
            }
        }
    }
    for q in lesson.questions {
        walk_question(q, &mut out);
    }
    for t in lesson.kinds {
        out.push(("kinds".to_string(), Kind::Ui, t));
    }
    out
}

fn walk_question(q: &'static Question, out: &mut Vec<(String, Kind, &'static str)>) {
    let p = format!("question {} {:?}", q.scenario, q.kind);
    out.push((p.clone(), Kind::Id, q.scenario.as_str()));
    out.push((format!("{p} prompt"), Kind::Prose, q.prompt));
    // A fix-it question's answers are toggle ids.
    let answers = if q.kind == QKind::FixIt {
        Kind::Id
    } else {
        Kind::Prose
    };
    for (i, a) in q.answers.iter().enumerate() {
        out.push((format!("{p} answer[{i}]"), answers, a));
    }
    out.push((format!("{p} explain"), Kind::Prose, q.explain));
}

/// Every question of a lesson: those in the prose and the scenarios' explanations,
/// then each scenario's own.
fn questions(l: &'static Lesson) -> Vec<&'static Question> {
    let blocks = l.sections.iter().flat_map(|s| s.blocks);
    let quizzes = blocks
        .chain(l.scenarios.iter().flat_map(|s| s.explain))
        .filter_map(|b| match b {
            Block::Quiz(q) => Some(*q),
            _ => None,
        });
    quizzes.chain(l.questions).collect()
}

fn walk_blocks(path: &str, blocks: &'static [Block], out: &mut Vec<(String, Kind, &'static str)>) {
    for (i, b) in blocks.iter().enumerate() {
        let p = format!("{path} block[{i}]");
        match *b {
            Block::P(s) | Block::Note(s) => out.push((p, Kind::Prose, s)),
            Block::Code(s) => out.push((p, Kind::Code, s)),
            Block::List(items) => {
                for (j, s) in items.iter().enumerate() {
                    out.push((format!("{p} item[{j}]"), Kind::Prose, s));
                }
            }
            Block::Table { head, rows } => {
                for (j, s) in head.iter().enumerate() {
                    out.push((format!("{p} head[{j}]"), Kind::Prose, s));
                }
                for (r, row) in rows.iter().enumerate() {
                    for (j, s) in row.iter().enumerate() {
                        out.push((format!("{p} row[{r}][{j}]"), Kind::Prose, s));
                    }
                }
            }
            Block::ScenarioLink { scenario, label } => {
                out.push((format!("{p} scenario"), Kind::Id, scenario.as_str()));
                out.push((format!("{p} label"), Kind::Prose, label));
            }
            Block::Calculator => {}
            Block::Quiz(q) => walk_question(q, out),
        }
    }
}

/// A language-independent description of a block: its kind and its shape.
fn shape(b: &Block) -> String {
    match *b {
        Block::P(_) => "P".into(),
        Block::Note(_) => "Note".into(),
        Block::Code(s) => format!("Code({} lines)", s.lines().count()),
        Block::List(items) => format!("List({})", items.len()),
        Block::Table { head, rows } => format!(
            "Table({}x{}; {:?})",
            rows.len(),
            head.len(),
            rows.iter().map(|r| r.len()).collect::<Vec<_>>()
        ),
        Block::ScenarioLink { scenario, .. } => format!("ScenarioLink({scenario})"),
        Block::Calculator => "Calculator".into(),
        Block::Quiz(q) => format!(
            "Quiz({:?}, {} answers, right {})",
            q.kind,
            q.answers.len(),
            q.correct
        ),
    }
}

fn shapes(blocks: &[Block]) -> Vec<String> {
    blocks.iter().map(shape).collect()
}

fn is_cyrillic(c: char) -> bool {
    matches!(c, '\u{0400}'..='\u{04FF}' | '\u{0500}'..='\u{052F}')
}

fn has_cyrillic(s: &str) -> bool {
    s.chars().any(is_cyrillic)
}

/// True if, once code spans are removed, no letter is left: the string is code.
fn is_pure_code(s: &str) -> bool {
    let mut in_code = false;
    for c in s.chars() {
        if c == '`' {
            in_code = !in_code;
        } else if !in_code && c.is_alphabetic() {
            return false;
        }
    }
    true
}

/// A code line without its trailing comment (`//` or `--`), trimmed.
fn code_part(line: &str) -> &str {
    let mut end = line.len();
    for marker in ["//", "--"] {
        if let Some(at) = line.find(marker) {
            end = end.min(at);
        }
    }
    line[..end].trim_end()
}

fn placeholders(s: &str) -> usize {
    s.matches("{}").count()
}

#[test]
fn lang_codes_round_trip() {
    for lang in Lang::ALL {
        assert_eq!(Lang::parse(lang.code()), Some(lang));
        assert_eq!(lesson(lang).lang, lang);
    }
    assert_eq!(Lang::parse("RU"), Some(Lang::Ru));
    assert_eq!(Lang::parse("en-US"), Some(Lang::En));
    assert_eq!(Lang::parse("ru_RU"), Some(Lang::Ru));
    assert_eq!(Lang::parse("de"), None);
    assert_eq!(Lang::parse(""), None);
}

#[test]
fn ids_are_the_declared_ones() {
    for lang in Lang::ALL {
        let l = lesson(lang);
        let sections: Vec<_> = l.sections.iter().map(|s| s.id).collect();
        assert_eq!(sections, SECTION_IDS, "{lang:?} sections");
    }
}

/// Every scenario's text is reached from the catalogue: each language's tables
/// have one entry per [`ScenarioId`] (else they do not compile), each at its
/// scenario's place, and the labels a page carries name them in that order.
#[test]
fn tables_follow_the_catalogue() {
    for lang in Lang::ALL {
        let l = lesson(lang);
        for id in ScenarioId::ALL {
            assert_eq!(l.name(id).id, id, "{lang:?} names");
            assert_eq!(l.scenario(id).id, id, "{lang:?} scenarios");
            assert_eq!(l.question(id).scenario, id, "{lang:?} questions");
            assert_eq!(name(lang, id).id, id, "{lang:?} labels");
        }
    }
}

#[test]
fn languages_have_the_same_structure() {
    let (ru, en) = (lesson(Lang::Ru), lesson(Lang::En));
    for (r, e) in ru.sections.iter().zip(en.sections) {
        assert_eq!(r.id, e.id);
        assert_eq!(shapes(r.blocks), shapes(e.blocks), "section {}", r.id);
        for (rb, eb) in r.blocks.iter().zip(e.blocks) {
            if let (Block::Code(rc), Block::Code(ec)) = (rb, eb) {
                for (rl, el) in rc.lines().zip(ec.lines()) {
                    assert_eq!(code_part(rl), code_part(el), "section {}", r.id);
                }
            }
        }
    }
    for (r, e) in ru.scenarios.iter().zip(en.scenarios) {
        assert_eq!(r.id, e.id);
        assert_eq!(shapes(r.explain), shapes(e.explain), "scenario {}", r.id);
    }
    let (rq, eq) = (questions(ru), questions(en));
    assert_eq!(rq.len(), eq.len());
    for (r, e) in rq.iter().zip(&eq) {
        assert_eq!(r.scenario, e.scenario);
        assert_eq!(r.kind, e.kind, "question {}", r.scenario);
        assert_eq!(r.answers.len(), e.answers.len(), "question {}", r.scenario);
        assert_eq!(r.correct, e.correct, "question {}", r.scenario);
        if r.kind == QKind::FixIt {
            assert_eq!(r.answers, e.answers, "question {}", r.scenario);
        }
    }
    let (ru_ui, en_ui) = (ru.ui.entries(), en.ui.entries());
    assert_eq!(ru_ui.len(), en_ui.len());
    for ((name, r), (_, e)) in ru_ui.iter().zip(&en_ui) {
        assert_eq!(placeholders(r), placeholders(e), "ui.{name}");
    }
}

#[test]
fn english_has_no_cyrillic() {
    for (path, _, s) in walk(lesson(Lang::En)) {
        assert!(!has_cyrillic(s), "Cyrillic in English {path}: {s:?}");
    }
}

#[test]
fn russian_is_translated() {
    for (path, kind, s) in walk(lesson(Lang::Ru)) {
        let exempt = match kind {
            Kind::Code | Kind::Id => true,
            Kind::Prose => is_pure_code(s),
            Kind::Ui => false,
        };
        if exempt || has_cyrillic(s) {
            continue;
        }
        assert!(
            RU_LATIN_ALLOWED.contains(&s),
            "untranslated Russian {path}: {s:?}"
        );
    }
}

#[test]
fn no_empty_strings() {
    for lang in Lang::ALL {
        for (path, _, s) in walk(lesson(lang)) {
            assert!(!s.trim().is_empty(), "{lang:?} {path} is empty");
        }
    }
}

#[test]
fn links_and_questions_point_to_scenarios() {
    for lang in Lang::ALL {
        let l = lesson(lang);
        for (path, _, s) in walk(l) {
            if path.ends_with(" scenario") {
                assert!(ScenarioId::parse(s).is_some(), "{lang:?} {path}: {s:?}");
            }
        }
        for q in l.questions {
            assert!(
                matches!(q.kind, QKind::Predict | QKind::FixIt),
                "{}",
                q.scenario
            );
        }
        for q in questions(l) {
            if q.kind == QKind::FixIt {
                continue;
            }
            assert!(
                (3..=4).contains(&q.answers.len()),
                "{lang:?} question {} has {} answers",
                q.scenario,
                q.answers.len()
            );
            assert!(q.correct < q.answers.len(), "question {}", q.scenario);
        }
    }
}

/// A predict question is asked at its run's decisive step: a scenario whose default
/// run has none never asks it (key-reuse-different-body did not, so the reader
/// could not answer every question and an LMS never saw the lesson completed).
#[test]
fn every_predict_question_has_a_decisive_step_to_be_asked_at() {
    for q in lesson(Lang::En).questions {
        if q.kind != QKind::Predict {
            continue;
        }
        let s = q.scenario.scenario();
        let run = idem_sim::Run::new(s.clone(), idem_sim::Config::defaults(s, 1));
        assert!(
            run.decisive_step().is_some(),
            "{}: no decisive step",
            q.scenario
        );
    }
}

#[test]
fn every_pitfall_is_linked_from_the_anti_patterns() {
    for lang in Lang::ALL {
        // The interview's pitfalls and the anti-patterns are one list.
        let anti = lesson(lang).section("anti-patterns").unwrap();
        for id in ScenarioId::of(Group::Pitfall) {
            if id == ScenarioId::StatusTransition {
                // Not a pitfall to avoid but a technique: the interview links it.
                let interview = lesson(lang).section("interview").unwrap().blocks;
                assert!(interview
                    .iter()
                    .any(|b| matches!(b, Block::ScenarioLink { scenario, .. } if *scenario == id)));
                continue;
            }
            let linked = anti
                .blocks
                .iter()
                .any(|b| matches!(b, Block::ScenarioLink { scenario, .. } if *scenario == id));
            assert!(linked, "{lang:?}: pitfall {id} is not linked");
        }
        let scenarios = lesson(lang).section("scenarios").unwrap();
        for id in ScenarioId::of(Group::Seed) {
            let linked = scenarios
                .blocks
                .iter()
                .any(|b| matches!(b, Block::ScenarioLink { scenario, .. } if *scenario == id));
            assert!(linked, "{lang:?}: scenario {id} is not linked");
        }
        let adr = lesson(lang).section("adr").unwrap();
        assert!(adr.blocks.contains(&Block::Calculator));
    }
}

#[test]
fn inline_markup_is_well_formed() {
    for lang in Lang::ALL {
        for (path, kind, s) in walk(lesson(lang)) {
            if kind == Kind::Prose {
                assert!(
                    inline::parse(s).is_ok(),
                    "{lang:?} {path}: bad markup {s:?}"
                );
            }
            if kind == Kind::Ui {
                assert!(
                    !s.contains('`') && !s.contains("**"),
                    "{lang:?} {path}: markup in a UI string"
                );
            }
        }
    }
}

#[test]
fn tables_are_rectangular() {
    for lang in Lang::ALL {
        let l = lesson(lang);
        let all = l
            .sections
            .iter()
            .flat_map(|s| s.blocks)
            .chain(l.scenarios.iter().flat_map(|s| s.explain));
        for b in all {
            if let Block::Table { head, rows } = b {
                assert!(rows.iter().all(|r| r.len() == head.len()), "{head:?}");
            }
        }
    }
}

#[test]
fn inline_parser() {
    use inline::Span::*;
    assert_eq!(
        inline::parse("a `b` **c** d").unwrap(),
        vec![Text("a "), Code("b"), Text(" "), Bold("c"), Text(" d")]
    );
    assert_eq!(inline::parse("`x**y`").unwrap(), vec![Code("x**y")]);
    assert_eq!(inline::parse("plain").unwrap(), vec![Text("plain")]);
    assert_eq!(inline::parse("").unwrap(), vec![]);
    assert_eq!(inline::parse("a `b"), Err(2));
    assert_eq!(inline::parse("**a"), Err(0));
    assert_eq!(inline::parse("**a `b`**"), Err(0));
}

/// The committed fragments in `public/lesson/` are what [`fragment::files`] makes
/// of the lesson today. A stale one is rewritten and the test fails: commit it.
#[test]
fn fragments_are_fresh() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut stale = Vec::new();
    let catalogue = (CATALOGUE_FILE.to_string(), catalogue_json());
    for (rel, want) in fragment::files().into_iter().chain([catalogue]) {
        let path = root.join(&rel);
        if std::fs::read_to_string(&path).ok().as_deref() != Some(want.as_str()) {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &want).unwrap();
            stale.push(rel);
        }
    }
    assert!(stale.is_empty(), "rewritten, commit them: {stale:?}");
}

/// The scenario catalogue for the e2e suite (`e2e/catalogue.mjs` reads it): every
/// scenario's id and group, in the picker's order. Kept fresh by `fragments_are_fresh`.
const CATALOGUE_FILE: &str = "e2e/scenarios.json";

/// A row of `e2e/scenarios.json`.
#[derive(serde::Serialize)]
struct CatalogueEntry {
    id: &'static str,
    group: &'static str,
}

fn catalogue_json() -> String {
    let rows: Vec<CatalogueEntry> = ScenarioId::ALL
        .into_iter()
        .map(|id| CatalogueEntry {
            id: id.as_str(),
            group: match id.group() {
                Group::Seed => "seed",
                Group::Pitfall => "pitfall",
            },
        })
        .collect();
    serde_json::to_string_pretty(&rows).expect("the catalogue serialises") + "\n"
}

#[test]
fn the_labels_travel_as_text_and_come_back_the_same() {
    for lang in Lang::ALL {
        for (name, text) in ui(lang).entries() {
            assert!(!text.contains('\n'), "{lang:?} {name}: a label is one line");
        }
        for n in names(lang) {
            assert!(
                !n.title.contains('\n') && !n.summary.contains('\n'),
                "{}",
                n.id
            );
        }
        let text = labels_text(lang);
        let back = parse_labels(Box::leak(text.clone().into_boxed_str())).expect("parses");
        assert_eq!(back.ui, *ui(lang));
        let pairs = |l: &[ScenarioName]| -> Vec<_> {
            l.iter().map(|n| (n.id, n.title, n.summary)).collect()
        };
        assert_eq!(pairs(&back.names), pairs(names(lang)));
        // A cut text, or one with a line too many, is refused.
        let cut = text.rsplit_once('\n').unwrap().0;
        assert!(parse_labels(Box::leak(cut.to_string().into_boxed_str())).is_none());
        let more = format!("{text}\nx");
        assert!(parse_labels(Box::leak(more.into_boxed_str())).is_none());
        // The page carries the text escaped in the fragment's part `ui`.
        let sections = fragment::render_sections(lang);
        assert_eq!(
            fragment::part_of(&sections, "ui"),
            Some(crate::html::esc(&text).as_str())
        );
    }
}

#[test]
fn fragment_parts_are_complete() {
    for lang in Lang::ALL {
        let text = fragment::render_sections(lang);
        let names: Vec<&str> = fragment::parts(&text).iter().map(|(n, _)| *n).collect();
        assert_eq!(names, fragment::PAGE_PARTS);
        // The lab's place: its title and both lines for a reader without the lab.
        let lab = fragment::part_of(&text, "lab").unwrap();
        assert!(lab.contains("id=\"lab-title\"") && lab.contains("<noscript>"));
        assert!(lab.contains(lesson(lang).no_lab[0].split(' ').next().unwrap()));
        for id in SECTION_IDS {
            assert!(text.contains(&format!("<section class=\"prose\" id=\"{id}\"")));
        }
        for id in ScenarioId::ALL {
            let text = fragment::render_scenario(lang, id);
            let part = |name| fragment::part_of(&text, name).unwrap_or_default();
            let q: Vec<&str> = part("q").lines().collect();
            let want = lesson(lang).question(id);
            if want.kind == QKind::FixIt {
                let fix = format!("{}{}", fragment::FIX, want.answers.len());
                assert_eq!((q[1], q.len()), (fix.as_str(), 3), "{lang:?} {id}");
            } else {
                assert_eq!(q[1], want.correct.to_string(), "{lang:?} {id}");
                assert_eq!(q.len(), 3 + want.answers.len(), "{lang:?} {id}");
            }
            let code = super::listing::of(id).len();
            assert_eq!(part("code").lines().count(), code, "{lang:?} {id}");
            assert!(part("ex").starts_with('<'), "{lang:?} {id}");
        }
    }
}

/// `boot.js` (which sends a reader to the page of their language) and
/// `build/prerender.mjs` (the build's hook; the budget reads it) name the pages as [`fragment::page_file`].
#[test]
fn the_pages_are_named_alike() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let pages = format!(
        "{{ en: '{}', ru: '{}' }}",
        fragment::page_file(Lang::En),
        fragment::page_file(Lang::Ru)
    );
    for file in ["boot.js", "build/prerender.mjs"] {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        assert!(text.contains(&pages), "{file} names the pages {pages}");
    }
}

/// Every kind of question is asked, in both languages (the parity test above makes
/// the two languages ask the same ones).
#[test]
fn every_kind_of_question_is_asked() {
    for lang in Lang::ALL {
        let qs = questions(lesson(lang));
        for kind in QKind::ALL {
            assert!(
                qs.iter().any(|q| q.kind == kind),
                "{lang:?}: no {kind:?} question"
            );
        }
    }
}

/// A fix-it question's stated answer is what the core finds by running every set
/// of the scenario's defences, for several seeds: the explanation cannot go stale.
#[test]
fn fix_it_answers_are_what_the_core_finds() {
    for q in questions(lesson(Lang::En))
        .into_iter()
        .filter(|q| q.kind == QKind::FixIt)
    {
        let s = q.scenario.scenario();
        let stated: Vec<Toggle> = q
            .answers
            .iter()
            .map(|id| Toggle::from_id(id).unwrap())
            .collect();
        for seed in [1, 2, 7, 42] {
            let v = crate::fixit::judge(s, seed, &stated);
            assert!(v.right(&stated), "{} seed {seed}: {v:?}", q.scenario);
            assert_eq!(
                v.smallest,
                vec![stated.clone()],
                "{} seed {seed}: the only smallest set",
                q.scenario
            );
        }
    }
}

/// The numbers question's right answer is the calculator's own figure (one formula).
#[test]
fn the_numbers_answer_is_the_calculators() {
    for lang in Lang::ALL {
        let q = questions(lesson(lang))
            .into_iter()
            .find(|q| q.kind == QKind::Numbers)
            .unwrap();
        let memory = calc::format_bytes(
            calc::memory_bytes(calc::keys_held(10_000.0, 7.0 * 24.0), 100.0),
            lang,
        );
        // The calculator writes a no-break space between the figure and its unit, and
        // so does the Russian text; the English writes a plain one.
        let plain = |s: &str| s.replace('\u{a0}', " ");
        let memory = plain(&memory);
        assert!(
            plain(q.answers[q.correct]).contains(&memory),
            "{lang:?}: {memory} in {:?}",
            q.answers[q.correct]
        );
        assert!(
            plain(q.explain).contains(&memory),
            "{lang:?}: the explanation shows {memory}"
        );
    }
}

/// «карта» in a payments lesson reads as the payment card: the in-process map is a
/// HashMap or «словарь в памяти», and the card is only ever charged «с карты» (money
/// leaves it) or seen «на карте» — «спишут карту» would mean writing the card off. The
/// other client is «другой клиент», not «писатель».
#[test]
fn russian_does_not_call_the_map_a_card_nor_the_client_a_writer() {
    for (path, _, s) in walk(lesson(Lang::Ru)) {
        let lower = s.to_lowercase();
        assert!(!lower.contains("писател"), "{path}: {s:?}");
        for (at, _) in lower.match_indices("карт") {
            let before = &lower[..at];
            let ok = before.ends_with("с ")
                || before.ends_with("на ")
                || lower[at..].starts_with("карточн");
            assert!(
                ok,
                "{path}: «карт…» used otherwise than «с карты»/«на карте»: {s:?}"
            );
        }
    }
}

#[test]
fn the_page_header_has_the_title_and_the_language_switch() {
    let page = &lesson(Lang::En).page;
    let header = fragment::page_header(ui(Lang::En), page, Lang::En);
    assert!(header.contains("<h1>Idempotency Lab</h1><div class=\"lang\""));
    let switch = fragment::lang_switch(page, Lang::Ru);
    assert!(switch
        .contains("aria-pressed=\"true\" title=\"Russian\" data-act=\"lang\" data-lang=\"ru\""));
}

/// The switches each predict question's prompt states, with the words that state
/// them (Russian, English): the prompt must describe the run it is asked on, the
/// scenario's default run. counter-increment's asked about a handler that records
/// `op_7f3a` under a unique index while op_id deduplication was off, and the reader
/// who answered 101 watched 102.
const PREMISES: &[(ScenarioId, Toggle, bool, [&str; 2])] = &[
    (
        ScenarioId::IdempotencyKey,
        Toggle::AtomicClaim,
        true,
        ["захватывает ключи атомарно", "claims keys atomically"],
    ),
    (
        ScenarioId::CounterIncrement,
        Toggle::OpDedup,
        false,
        ["Дедупликация op_id выключена", "op_id deduplication is off"],
    ),
    (
        ScenarioId::CounterIncrement,
        Toggle::UniqueConstraint,
        true,
        [
            "уникальный индекс на `like_ops` есть",
            "the unique index on `like_ops` is there",
        ],
    ),
    (
        ScenarioId::ConditionalUpdate,
        Toggle::VersionCheck,
        true,
        ["`expected_version = 5`", "`expected_version = 5`"],
    ),
    (
        ScenarioId::ConcurrentDuplicates,
        Toggle::UniqueConstraint,
        false,
        ["без уникального ограничения", "no unique constraint"],
    ),
    (
        ScenarioId::ConcurrentDuplicates,
        Toggle::AtomicClaim,
        false,
        ["Check-then-act", "Check-then-act"],
    ),
    (
        ScenarioId::InMemoryStore,
        Toggle::SharedStore,
        false,
        ["в HashMap экземпляра A", "in instance A's HashMap"],
    ),
    (
        ScenarioId::KeyReuseDifferentBody,
        Toggle::Fingerprint,
        false,
        ["Отпечатка нет", "No fingerprint"],
    ),
    (
        ScenarioId::TtlExpiry,
        Toggle::LongTtl,
        false,
        ["TTL — 24\u{a0}часа", "the TTL is 24 hours"],
    ),
    (
        ScenarioId::TransactionIsNotIdempotency,
        Toggle::IdempotencyKey,
        false,
        [
            "ключа идемпотентности у обработчика нет",
            "the handler has no idempotency key",
        ],
    ),
    (
        ScenarioId::NewKeyPerRetry,
        Toggle::NewKeyPerRetry,
        true,
        ["новый ключ", "a new key"],
    ),
    (
        ScenarioId::ReceiptEmail,
        Toggle::Outbox,
        false,
        ["Outbox нет", "There is no outbox"],
    ),
    (
        ScenarioId::LatePut,
        Toggle::IfMatch,
        false,
        ["без If-Match", "without If-Match"],
    ),
    (
        ScenarioId::KeyScope,
        Toggle::ScopedKey,
        false,
        [
            "ключи хранятся только по пользователю и ключу",
            "keys are stored by user and key only",
        ],
    ),
    (
        ScenarioId::KeyScope,
        Toggle::Fingerprint,
        false,
        ["отпечатка нет", "no fingerprint"],
    ),
];

/// Every predict question describes the run it is asked on: each switch its prompt
/// states is stated in both languages and has that state in the scenario's default
/// run (the run a link or the picker opens, where the question is asked); and every
/// scenario with a defence or a bug to switch states at least one. (status-transition's
/// prompt is being rewritten with its handler, by the issue that fixes it.)
#[test]
fn predict_questions_describe_their_runs() {
    for &(id, toggle, on, words) in PREMISES {
        let s = id.scenario();
        assert_eq!(
            s.default_toggles().has(toggle),
            on,
            "{id}: the prompt says {toggle:?} is {}, the run has it the other way",
            if on { "on" } else { "off" }
        );
        for lang in Lang::ALL {
            let q = lesson(lang).question(id);
            assert_eq!(q.kind, QKind::Predict, "{id}");
            assert!(
                q.prompt.contains(words[lang as usize]),
                "{lang:?} {id}: the prompt does not say {:?}: {:?}",
                words[lang as usize],
                q.prompt
            );
        }
    }
    for q in lesson(Lang::En).questions {
        let s = q.scenario.scenario();
        let switchable = s
            .toggles
            .iter()
            .any(|(t, _)| t.kind() != ToggleKind::Variant);
        if q.kind != QKind::Predict || !switchable || q.scenario == ScenarioId::StatusTransition {
            continue;
        }
        assert!(
            PREMISES.iter().any(|p| p.0 == q.scenario),
            "{}: the prompt states none of its run's switches",
            q.scenario
        );
    }
}

/// Words in an HTML fragment's text: the tags dropped, whitespace-separated.
fn words(html: &str) -> usize {
    let mut plain = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                plain.push(' ');
            }
            _ if !in_tag => plain.push(c),
            _ => {}
        }
    }
    plain.split_whitespace().count()
}

/// The page's prose, outside the lab's labels, in words: what a reader reads.
fn page_words(lang: Lang) -> usize {
    let page = fragment::render_sections(lang);
    fragment::parts(&page)
        .into_iter()
        .filter(|(name, _)| *name != "ui")
        .map(|(_, body)| words(body))
        .sum()
}

/// The lesson as a reader reads it, in words: the page's prose ([`page_words`]), then
/// every scenario's text shown beside the lab (its explanation with the questions
/// placed in it, `ex`) and its own question with the answers and the explanation
/// (`q`). Not counted: the handler's code (`code`), the lab's labels and the
/// narration, one sentence per step beside the picture, which the reader sees while
/// watching the run rather than reading on.
fn lesson_words(lang: Lang) -> (usize, usize, usize) {
    let (mut ex, mut q) = (0, 0);
    for id in ScenarioId::ALL {
        let text = fragment::render_scenario(lang, id);
        for (name, body) in fragment::parts(&text) {
            match name {
                "ex" => ex += words(body),
                "q" => q += words(body),
                _ => {}
            }
        }
    }
    (page_words(lang), ex, q)
}

/// The English page stays at most 5,500 words of prose: 4,539 before the lesson was
/// first cut, 3,040 since the whole lesson was cut by a third. Russian runs shorter.
#[test]
fn the_english_prose_fits_its_word_budget() {
    let en = page_words(Lang::En);
    assert!(
        en <= 5_500,
        "the English page has {en} words of prose, over 5,500"
    );
    let ru = page_words(Lang::Ru);
    assert!(
        ru <= en,
        "the Russian page ({ru} words) outgrew the English ({en})"
    );
}

/// The whole lesson, the page and every scenario's text and questions
/// ([`lesson_words`]), reads in about half an hour: at most 5,900 English words, a
/// third under the 8,800 it had when this was asked for (it had grown to 9,248,
/// Russian 7,885; after the cut 5,854 and 5,195). Russian runs no longer than
/// English. Whoever adds text pays for it with a cut elsewhere.
#[test]
fn the_whole_lesson_fits_its_word_budget() {
    let (page, ex, q) = lesson_words(Lang::En);
    let en = page + ex + q;
    println!("en: page {page}, scenario texts {ex}, questions {q}: {en}");
    assert!(
        en <= 5_900,
        "the English lesson has {en} words (page {page}, scenario texts {ex}, questions {q}), over 5,900"
    );
    let (rp, rex, rq) = lesson_words(Lang::Ru);
    let ru = rp + rex + rq;
    println!("ru: page {rp}, scenario texts {rex}, questions {rq}: {ru}");
    assert!(
        ru <= en,
        "the Russian lesson ({ru} words: page {rp}, scenario texts {rex}, questions {rq}) outgrew the English ({en})"
    );
}

/// Russian typography over every string a Russian reader sees: no Latin word
/// inflected with a Cyrillic ending («ack-и», «ledger-ом»: write «подтверждение
/// (ack)»); a non-breaking space, never a plain one, between a number and its unit
/// («3 с», «24 часа», «86,4 ГБ») and between the groups of a number («10 000»);
/// «» quotes, not straight ones, outside code; an em dash, not a hyphen, between words.
#[test]
fn russian_typography() {
    const UNITS: &[&str] = &[
        "мс",
        "ч",
        "мин",
        "секунд",
        "секунды",
        "секунда",
        "час",
        "часа",
        "часов",
        "дня",
        "дней",
        "день",
        "недели",
        "неделю",
        "неделя",
        "суток",
        "сутки",
        "ГБ",
        "ТБ",
        "МБ",
        "КБ",
        "байт",
        "байта",
        "байтов",
        "млн",
        "млрд",
        "%",
    ];
    for (path, kind, s) in walk(lesson(Lang::Ru)) {
        if matches!(kind, Kind::Code | Kind::Id) {
            continue;
        }
        // Outside code spans.
        let prose: String = s
            .split('`')
            .enumerate()
            .filter(|(i, _)| i % 2 == 0)
            .map(|(_, t)| t)
            .collect::<Vec<_>>()
            .join(" ");
        let chars: Vec<char> = prose.chars().collect();
        for (i, w) in chars.windows(3).enumerate() {
            // An ending: one to three Cyrillic letters after the hyphen, then no letter.
            let ending: String = chars[i + 2..]
                .iter()
                .take_while(|c| is_cyrillic(**c))
                .collect();
            const ENDINGS: &[&str] = &[
                "а", "у", "е", "и", "ы", "ю", "я", "ом", "ов", "ам", "ах", "ой", "ей", "ами", "ем",
                "ым", "ым", "ого", "ому",
            ];
            if w[0].is_ascii_alphabetic() && w[1] == '-' && ENDINGS.contains(&ending.as_str()) {
                let word: String = chars[i.saturating_sub(6)..(i + 6).min(chars.len())]
                    .iter()
                    .collect();
                panic!("{path}: a Latin word with a Russian ending, «{word}»: {s:?}");
            }
        }
        // (A label shows HTTP's own syntax as is: `If-Match: "5"`.)
        assert!(
            kind == Kind::Ui || !prose.contains('"'),
            "{path}: straight quotes, not «»: {s:?}"
        );
        assert!(!prose.contains(" - "), "{path}: a hyphen for a dash: {s:?}");
        for (at, _) in prose.match_indices(' ') {
            let before = prose[..at].chars().next_back();
            if !before.is_some_and(|c| c.is_ascii_digit() || c == '}') {
                continue;
            }
            let after: String = prose[at + 1..]
                .chars()
                .take_while(|c| c.is_alphabetic() || *c == '%')
                .collect();
            let next = prose[at + 1..].chars().next();
            let unit = UNITS.contains(&after.as_str())
                // «3 с» is seconds; «201 с `pay_1`» is a preposition.
                || (after == "с" && {
                    let rest = &prose[at + 1 + "с".len()..];
                    rest.is_empty() || rest.starts_with([',', '.', ';', ')', '»', ':'])
                });
            let group = next.is_some_and(|c| c.is_ascii_digit())
                && prose[at + 1..]
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .count()
                    == 3;
            assert!(
                !(unit || group),
                "{path}: a plain space before «{after}» (write a non-breaking one): {s:?}"
            );
        }
    }
}

/// A label with a placeholder or a choice of forms is typed by its arity
/// (`Template<N>`, `Counted<N>`), so the compiler checks its text and every call
/// that fills it; a plain one would reach the page with its `{}` unfilled.
#[test]
fn every_label_with_placeholders_is_typed_by_its_arity() {
    for lang in Lang::ALL {
        for (k, v) in ui(lang).entries() {
            let template = v.contains("{}") || v.contains('[');
            assert_eq!(Ui::TYPED.contains(&k), template, "{lang:?} {k}: {v}");
        }
    }
    assert!(Ui::TYPED.len() > 40, "{:?}", Ui::TYPED);
}

/// Every label that shows a count with a word that agrees with it (the page's
/// [`Ui`], then the Explore panel's [`Explore`]), filled by `narrate::count` and
/// the worker's `Text::count`. A count that stands after a colon ("States
/// explored: 1,204") agrees with nothing and is not one.
const COUNTED_UI: &[&str] = &[
    "n_cmd_parallel",
    "truth_charges",
    "truth_refunds",
    "cmd_bad_count",
    "parallel_n_retries",
    "more_notices",
];
const COUNTED_EXPLORE: &[&str] = &["charges", "ledger", "likes", "receipts", "count"];

/// Each counted label has the count and, in every choice `[…]`, every form of its
/// language (English one|other, Russian one|few|many), its forms for 1, 2 and 5
/// unlike; no other label has a choice.
#[test]
fn every_counted_label_has_its_forms_in_both_languages() {
    for lang in Lang::ALL {
        let l = lesson(lang);
        let want = match lang {
            Lang::En => 2,
            Lang::Ru => 3,
        };
        for (entries, counted) in [
            (l.ui.entries(), COUNTED_UI),
            (l.explore.entries(), COUNTED_EXPLORE),
        ] {
            for (k, v) in entries {
                let choices: Vec<&str> = v
                    .split('[')
                    .skip(1)
                    .map(|c| c.split_once(']').map_or(c, |(c, _)| c))
                    .collect();
                if !counted.contains(&k) {
                    assert!(
                        choices.is_empty(),
                        "{lang:?} {k}: a choice, but not counted: {v}"
                    );
                    assert!(!v.contains(']'), "{lang:?} {k}: {v}");
                    continue;
                }
                assert!(
                    v.starts_with("{}") || v.contains(" {} "),
                    "{lang:?} {k}: {v}"
                );
                assert!(
                    !choices.is_empty(),
                    "{lang:?} {k}: counted, with no choice: {v}"
                );
                for c in &choices {
                    assert_eq!(c.split('|').count(), want, "{lang:?} {k}: [{c}] in {v}");
                }
                let mut forms = [1, 2, 5].map(|n| crate::template::form(v, n)).to_vec();
                forms.sort();
                forms.dedup();
                assert_eq!(forms.len(), want, "{lang:?} {k}: forms alike: {v}");
                assert!(
                    !forms.iter().any(|f| f.contains(['[', ']', '|'])),
                    "{k}: {forms:?}"
                );
            }
        }
    }
    // And the page fills them so: Russian at 1, 3 and 5.
    let ui = ui(Lang::Ru);
    let got: Vec<String> = [1, 3, 5, 11, 21]
        .map(|n| crate::narrate::count(ui.parallel_n_retries(), n, &[]))
        .to_vec();
    assert_eq!(
        got,
        [
            "Отправить разом 1 повтор",
            "Отправить разом 3 повтора",
            "Отправить разом 5 повторов",
            "Отправить разом 11 повторов",
            "Отправить разом 21 повтор",
        ]
    );
}
