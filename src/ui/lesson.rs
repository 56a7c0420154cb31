//! The lesson around the lab: the prose sections, the open scenario's explanation
//! and handler code, predict-then-reveal and the reader's progress.
//!
//! The text comes from fragments (see [`crate::lesson::fragment`]): the module links
//! no prose. The sections of the page's language are in the page already
//! (prerendered); those of the other language are fetched when the reader switches,
//! and the open scenario's text whenever it changes. This file only places that
//! text, marks the current code line, asks the question at the run's decisive step
//! and keeps the progress; which step is decisive, and which line a step runs, come
//! from the core's trace.
//!
//! Size matters here (the page has a 200 KB budget), so every part is one piece of
//! markup ([`Part`], rendered by pure functions), and its controls are handled by
//! the page's one delegated listener ([`super::listen`]), which calls the functions
//! here, instead of a typed view and a closure per control.

use super::act::{Act, Action};
use super::state::Lab;
use crate::fixit;
use crate::html::{Html, Markup};
use crate::lesson::calc::{self, Inputs, INPUT_NAMES, OUTPUT_NAMES};
use crate::lesson::fragment::{self, part_of};
use crate::lesson::{codemap, names, Lang, ScenarioId, Ui};
use crate::narrate::fill;
use crate::progress::{Progress, STORAGE_KEY};
use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Element, HtmlElement, HtmlInputElement};

/// Where the open scenario's question stands.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Ask {
    /// The decisive step has not been reached in this run yet.
    Waiting,
    Asking,
    /// Answered with this choice; the reveal is shown.
    Answered(usize),
    /// Answered or skipped: not asked again until another scenario is opened.
    Done,
}

/// Fetched text, the question's state and the reader's progress. `Copy`, provided
/// as context by the app.
#[derive(Clone, Copy)]
pub struct Learn {
    /// The open scenario's fragment, with its id.
    pub scenario: RwSignal<Option<(ScenarioId, String)>>,
    pub ask: RwSignal<Ask>,
    /// The question paused a playing run: Continue plays on.
    pub paused: RwSignal<bool>,
    pub progress: RwSignal<Progress>,
}

impl Learn {
    /// Reads the stored progress and starts fetching the text the lab shows. `to_lab`: the link points at the
    /// lab, so the page scrolls to it once the lab is drawn.
    pub fn new(lab: Lab, to_lab: bool) -> Learn {
        let storage = window().local_storage().ok().flatten();
        // In an LMS, the progress it kept for this learner; `localStorage` is the
        // browser's (another learner's, on a shared computer) and is only written.
        let restored = crate::lms::restored();
        if storage.is_none() && restored.is_none() {
            lab.notices
                .update(|n| n.push(lab.ui().storage_unavailable.to_string()));
        }
        let stored = restored
            .or_else(|| storage.as_ref()?.get_item(STORAGE_KEY).ok().flatten())
            .unwrap_or_default();
        let learn = Learn {
            scenario: RwSignal::new(None),
            ask: RwSignal::new(Ask::Waiting),
            paused: RwSignal::new(false),
            progress: RwSignal::new(Progress::parse(&stored)),
        };
        Effect::new(move |_| {
            learn.progress.with(|p| {
                let text = p.to_text();
                if let Some(s) = &storage {
                    let _ = s.set_item(STORAGE_KEY, &text);
                }
                crate::lms::publish(p, &text);
            });
        });
        Effect::new(move |last: Option<ScenarioId>| {
            lab.opened.track();
            let (lang, id) = (lab.lang.get(), lab.scenario.get());
            // A new language asks the open question again (in that language); a new
            // scenario also forgets that a question had paused the run.
            learn.ask.set(Ask::Waiting);
            if last != Some(id) {
                learn.paused.set(false);
            }
            learn.scenario.set(None);
            let url = fragment::scenario_path(lang, id);
            let current =
                move || (lab.lang.get_untracked(), lab.scenario.get_untracked()) == (lang, id);
            fetch(lab, learn.scenario, url, id, current);
            id
        });
        Effect::new(move |_| {
            let (k, n) = (lab.cursor.get(), lab.steps());
            let id = lab.scenario.get_untracked();
            // A run watched to its end counts, whatever the path there.
            if n > 0 && k >= n && !learn.progress.with_untracked(|p| p.has_watched(id)) {
                learn.progress.update(|p| p.watch(id));
            }
            // At the decisive step (a fix-it question: at the end), pause and ask
            // (once per opened scenario).
            let q = learn.part(id, "q");
            let fix = q.as_deref().and_then(Question::parse).map(|q| q.fix);
            let at = match fix {
                Some(true) => Some(n),
                Some(false) => lab.run.with(|r| r.decisive_step()),
                None => None,
            };
            if at == Some(k)
                && learn.ask.get_untracked() == Ask::Waiting
                && learn.progress.with(|p| p.predict)
            {
                learn.ask.set(Ask::Asking);
                // A fix-it question is answered with the defences: their section opens.
                if fix == Some(true) {
                    if let Ok(Some(d)) = document().query_selector("details[data-sec=defences]") {
                        let _ = d.set_attribute("open", "");
                    }
                }
                // A run that was playing pauses, and the reader lands on the first answer;
                // one stepped by hand shows the question and leaves the keys to the reader.
                if lab.playing.get_untracked() {
                    learn.paused.set(true);
                    lab.playing.set(false);
                    focus_later("[data-testid=predict] input");
                }
            }
        });
        if to_lab {
            // The prose above the lab is in the page already: its place is fixed.
            request_animation_frame(move || lab_into_view(lab));
        }
        learn
    }

    /// A part of the open scenario's fragment, if it has arrived.
    fn part(&self, id: ScenarioId, name: &str) -> Option<String> {
        self.scenario.with(|s| match s {
            Some((sid, text)) if *sid == id => part_of(text, name).map(str::to_string),
            _ => None,
        })
    }
}

/// The reader switches to `lang`. Its labels and prose arrive in one fragment
/// (`fragment::sections_path`: the parts `ui`, `header`, `before`, `after`); once it
/// is in, the header and prose are written over the page's and the lab is built anew
/// in `lang`, with the focus back on the language pressed. A failure is a notice in
/// the language the page is still in.
pub fn switch(lab: Lab, lang: Lang) {
    spawn_local(async move {
        let url = fragment::sections_path(lang);
        let text = fetch_text(&url).await.unwrap_or_default();
        // A language switched to before already has its labels: parse them only once.
        let labels_in = crate::lesson::loaded(lang)
            || part_of(&text, "ui")
                .and_then(unescape)
                .is_some_and(|l| crate::lesson::load(lang, l));
        if !labels_in {
            let msg = fill(lab.ui().lesson_unavailable, &[&url]);
            lab.notices.update(|n| n.push(msg));
            return;
        }
        let doc = document();
        for (sel, name) in [
            ("#page-header", "header"),
            ("[data-testid=prose-before]", "before"),
            ("[data-testid=prose-after]", "after"),
        ] {
            if let (Ok(Some(el)), Some(part)) = (doc.query_selector(sel), part_of(&text, name)) {
                super::set_inner(&el, &Markup::prerendered(part.to_string()));
            }
        }
        lab.lang.set(lang);
        focus_later(Action::Lang(lang).selector());
    });
}

/// Escaped text back to text, by the browser's parser: a `<textarea>`'s content is
/// text, never markup, so nothing in it is an element.
fn unescape(html: &str) -> Option<String> {
    let el = document().create_element("textarea").ok()?;
    super::set_inner(&el, &Markup::prerendered(html.to_string()));
    el.text_content()
}

/// Fetches `url` (relative to the page) into `into`, tagged with `tag`, if it is
/// still `current` when it arrives (the reader may have moved to another language or
/// scenario meanwhile). A failure becomes a notice, once, and an empty text: the lab
/// goes on without it, and the same text is not fetched again for every scenario.
fn fetch(
    lab: Lab,
    into: RwSignal<Option<(ScenarioId, String)>>,
    url: String,
    tag: ScenarioId,
    current: impl Fn() -> bool + 'static,
) {
    spawn_local(async move {
        let text = fetch_text(&url).await;
        if !current() {
            return;
        }
        if text.is_none() {
            let msg = fill(lab.ui().lesson_unavailable, &[&url]);
            lab.notices.update(|n| n.push(msg));
        }
        into.set(Some((tag, text.unwrap_or_default())));
    });
}

/// The text at `url` (relative to the page); `None` on any failure.
pub async fn fetch_text(url: &str) -> Option<String> {
    let resp = JsFuture::from(window().fetch_with_str(url)).await.ok()?;
    let resp: web_sys::Response = resp.dyn_into().ok()?;
    if !resp.ok() {
        return None;
    }
    JsFuture::from(resp.text().ok()?).await.ok()?.as_string()
}

/// The lab into view (for "Try it" and a link to a step). On a phone the picture comes
/// to the top (the lab's title and picker are just above it), so the topology, the
/// narration under it and playback fill the screen, clear of the outcome bar stuck to
/// the bottom edge.
pub fn lab_into_view(lab: Lab) {
    let to = if lab.tall.get_untracked() {
        document()
            .query_selector("[data-testid=topology]")
            .ok()
            .flatten()
    } else {
        document().get_element_by_id("lab")
    };
    if let Some(l) = to {
        l.scroll_into_view();
    }
}

/// Focuses the first element matching `selector` after the next render.
pub fn focus_later(selector: impl AsRef<str> + 'static) {
    request_animation_frame(move || {
        if let Some(el) = document()
            .query_selector(selector.as_ref())
            .ok()
            .flatten()
            .and_then(|e| e.dyn_into::<HtmlElement>().ok())
        {
            let _ = el.focus();
        }
    });
}

/// Continue: the question is gone, and a run it paused plays on.
pub fn go_on(lab: Lab, learn: Learn) {
    learn.ask.set(Ask::Done);
    if learn.paused.get_untracked() {
        learn.paused.set(false);
        lab.playing.set(true);
    }
    // The question is gone; the reader goes on from Play.
    focus_later(Act::Play.selector());
}

/// Clears the progress (the predict setting stays).
pub fn clear(lab: Lab, learn: Learn) {
    learn.progress.update(|p| *p = p.cleared());
    let done = lab.ui().progress_cleared.to_string();
    lab.notices.update(|n| n.push(done));
    focus_later(Act::Clear.selector());
}

/// The predict switch: pause at the decisive step and ask, or not.
pub fn set_predict(learn: Learn, on: bool) {
    learn.progress.update(|p| p.predict = on);
    focus_later(Act::Predict.selector());
}

/// Another tab saved its progress: take it, so this tab does not write over it.
pub fn storage(learn: Learn, e: &web_sys::Event) {
    if let Some(s) = e
        .dyn_ref::<web_sys::StorageEvent>()
        .filter(|s| s.key().as_deref() == Some(STORAGE_KEY))
    {
        let p = Progress::parse(&s.new_value().unwrap_or_default());
        if learn.progress.with_untracked(|old| *old != p) {
            learn.progress.set(p);
        }
    }
}

/// A scenario link ([`Action::Open`]): opens scenario `id` in the lab, at its
/// decisive step (or at its start), and brings the lab into view.
pub fn open_link(lab: Lab, id: ScenarioId, at_start: bool) {
    lab.open(id, 0);
    if !at_start {
        let d = lab.run.with_untracked(|r| r.decisive_step()).unwrap_or(0);
        lab.go(d);
    }
    if let Some(el) = document().get_element_by_id("lab") {
        el.scroll_into_view();
    }
    // The link may be gone with the old lab; the reader goes on from the new one.
    focus_later("#lab-title");
}

/// Records the reader's answer to the open question and reveals the right one.
pub fn check(lab: Lab, learn: Learn, form: &Element) {
    let id = lab.scenario.get_untracked();
    let text = learn.part(id, "q").unwrap_or_default();
    if let Some(q) = Question::parse(&text).filter(|q| q.fix) {
        return check_fix(lab, learn, q.correct);
    }
    let Some(choice) = form
        .query_selector("input[name=predict]:checked")
        .ok()
        .flatten()
        .and_then(|e| e.get_attribute("value"))
        .and_then(|v| v.parse::<usize>().ok())
    else {
        // Nothing chosen: say so beside the button, and go back to the answers.
        if let Ok(Some(hint)) = form.query_selector("[data-testid=predict-hint]") {
            hint.set_text_content(Some(lab.ui().pick_an_answer));
        }
        focus_later("[data-testid=predict] input");
        return;
    };
    let Some(q) = Question::parse(&text) else {
        return;
    };
    let right = choice == q.correct;
    learn.progress.update(|p| p.answer(id, right));
    learn.ask.set(Ask::Answered(choice));
    // The verdict goes to a live region that was there, empty, before the answer,
    // so screen readers announce it; focus moves on to Continue.
    if let Some(live) = document().get_element_by_id("announce") {
        let ui = lab.ui();
        let verdict = if right { ui.correct } else { ui.not_quite };
        let said = Markup::text(verdict) + &Markup::text(". ");
        super::set_inner(&live, &(said + &Markup::prerendered(q.explain.to_string())));
    }
    focus_later(Act::Continue.selector());
}

/// Judges a fix-it answer: the defences the reader has switched on in the lab, whose
/// run the lab already shows (see [`crate::fixit`]).
fn check_fix(lab: Lab, learn: Learn, smallest: usize) {
    let id = lab.scenario.get_untracked();
    let on = lab.toggles.get_untracked();
    let mask = lab.run.with_untracked(|r| {
        let defs = r.scenario.defences();
        (0..defs.len())
            .filter(|i| on.has(defs[*i]))
            .fold(0, |m, i| m | 1 << i)
    });
    let right = fix_verdict(lab, mask, smallest).0;
    learn.progress.update(|p| p.answer(id, right));
    learn.ask.set(Ask::Answered(mask));
    if let Some(live) = document().get_element_by_id("announce") {
        let ui = lab.ui();
        live.set_text_content(Some(if right { ui.correct } else { ui.not_quite }));
    }
    focus_later(Act::Continue.selector());
}

/// Judges the defences in `mask` (a bit per defence the scenario offers, on in the
/// lab, whose run the core has computed with them): right if every invariant holds
/// to the end and no more defences are on than the smallest set that holds
/// (`smallest`, which a test finds by running every set). Also says what the run showed.
fn fix_verdict(lab: Lab, mask: usize, smallest: usize) -> (bool, String) {
    let ui = lab.ui();
    let chosen = mask.count_ones() as usize;
    // The lab's run has the reader's switches: it is the run of their choice.
    let broken = lab.run.with_untracked(fixit::first_break);
    let ran = match broken {
        Some((inv, step)) => fill(
            ui.fix_breaks,
            &[crate::narrate::invariant_name(ui, inv), &step.to_string()],
        ),
        None if chosen > smallest => fill(ui.fix_fewer, &[&smallest.to_string()]),
        None => ui.fix_holds.to_string(),
    };
    (broken.is_none() && chosen <= smallest, ran)
}

/// Recomputes the ADR calculator after an edit of one of its inputs.
pub fn recalc(lang: Lang, form: &Element) {
    let find = |sel: String| form.query_selector(&sel).ok().flatten();
    let mut values = [f64::NAN; 5];
    for (v, name) in values.iter_mut().zip(INPUT_NAMES) {
        if let Some(input) =
            find(format!("input[name={name}]")).and_then(|e| e.dyn_into::<HtmlInputElement>().ok())
        {
            *v = input.value_as_number();
        }
    }
    let results = calc::outputs(Inputs::from_values(values), lang);
    for (name, text) in OUTPUT_NAMES.iter().zip(results) {
        if let Some(out) = find(format!("output[name={name}]")) {
            out.set_text_content(Some(&text));
        }
    }
}

/// The lesson's pieces of markup on the page.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The handler's code with the current line.
    Code,
    /// The predict-then-reveal question, while it is asked.
    Predict,
    /// The open scenario's explanation.
    About,
    /// The reader's progress.
    Progress,
}

/// One piece of the lesson's markup, re-rendered when what it shows changes.
#[component]
pub fn LessonPart(part: Part) -> impl IntoView {
    let lab = expect_context::<Lab>();
    let learn = expect_context::<Learn>();
    let ui = lab.ui();
    let id = lab.scenario.get_untracked();
    let (class, testid) = match part {
        Part::Code => ("pane pane--code", "code-pane"),
        Part::Predict => ("predict-slot", "predict-slot"),
        Part::About => ("about", "about"),
        Part::Progress => ("progress", "progress"),
    };
    let markup = move || match part {
        // The question is the lab's core; the rest is drawn with the panes (`Lab::whole`).
        _ if part != Part::Predict && !lab.whole.get() => Markup::default(),
        Part::Code => {
            let code = learn.part(id, "code").unwrap_or_default();
            let cur = lab
                .run
                .with(|r| codemap::current(&r.trace, lab.cursor.get(), &code));
            // The listing is the fragment's code, marked: markup the build wrote.
            let listing = lab.toggles.with(|t| {
                codemap::listing(&code, cur, |id| {
                    idem_sim::scenario::Toggle::from_id(id).is_some_and(|x| t.has(x))
                })
            });
            let mut h = Html::new();
            h.el("h3", &[], ui.pane_code);
            h.open(
                "ol",
                &[
                    ("class", "code"),
                    ("tabindex", "0"),
                    ("aria-label", ui.pane_code),
                ],
            );
            h.markup(&Markup::prerendered(listing)).close("ol");
            h.finish()
        }
        Part::Predict => {
            let answered = match learn.ask.get() {
                Ask::Asking => None,
                Ask::Answered(c) => Some(c),
                Ask::Waiting | Ask::Done => return Markup::default(),
            };
            let q = learn.part(id, "q").unwrap_or_default();
            let fix = match (answered, Question::parse(&q)) {
                (Some(mask), Some(q)) if q.fix => Some(fix_verdict(lab, mask, q.correct)),
                _ => None,
            };
            predict(ui, &q, answered, fix)
        }
        Part::About => {
            // Only once the reader has answered, or has seen the run to its end:
            // before that it would give the outcome away.
            // (`watched` is set when the run reaches its end; reading the progress, not
            // the cursor, keeps an answered quiz of the explanation in place while the
            // reader steps on.)
            let open = learn
                .progress
                .with(|p| p.answer_of(id).is_some() || p.has_watched(id))
                || matches!(learn.ask.get(), Ask::Answered(_));
            let mut h = Html::new();
            h.el("h3", &[], ui.about_scenario);
            h.open("div", &[("class", "prose-wrap")]);
            if open {
                h.markup(&Markup::prerendered(
                    learn.part(id, "ex").unwrap_or_default(),
                ));
            } else {
                h.el(
                    "p",
                    &[("class", "muted"), ("data-testid", "about-later")],
                    ui.about_later,
                );
            }
            h.close("div");
            h.finish()
        }
        Part::Progress => learn
            .progress
            .with(|p| progress(ui, p, lab.lang.get_untracked())),
    };
    view! { <div class=class data-testid=testid inner_html=super::markup(markup)></div> }
}

/// A question of a fragment's `q` part.
struct Question<'a> {
    prompt: &'a str,
    /// A fix-it question: no answers (the reader flips the lab's switches), and
    /// `correct` is the size of the smallest set of defences that holds.
    fix: bool,
    correct: usize,
    explain: &'a str,
    answers: Vec<&'a str>,
}

impl Question<'_> {
    fn parse(q: &str) -> Option<Question<'_>> {
        let mut lines = q.lines();
        let prompt = lines.next()?;
        let second = lines.next()?;
        let size = second.strip_prefix(fragment::FIX);
        Some(Question {
            prompt,
            fix: size.is_some(),
            correct: size.unwrap_or(second).parse().ok()?,
            explain: lines.next()?,
            answers: lines.collect(),
        })
    }
}

/// The question as a form: radio answers (keyboard-native), Check and Continue;
/// after an answer (`answered`), the answers marked right and wrong and the
/// explanation. A fix-it question has no answers of its own: the reader flips the
/// lab's switches, and `fix` is what the core's run of them showed (right, in words).
/// The fragment's text is markup already (escaped at build time).
pub fn predict(ui: &Ui, q: &str, answered: Option<usize>, fix: Option<(bool, String)>) -> Markup {
    let Some(q) = Question::parse(q) else {
        return Markup::default();
    };
    // The fragment's text is markup already (escaped when the build wrote it).
    let prerendered = |s: &str| Markup::prerendered(s.to_string());
    let mut h = Html::new();
    h.open("form", &[("class", "predict"), ("data-testid", "predict")]);
    Action::Do(Act::Check).put(&mut h);
    h.open("fieldset", &[]);
    h.el(
        "legend",
        &[],
        if q.fix {
            ui.fix_title
        } else {
            ui.predict_title
        },
    );
    h.open("p", &[("class", "predict__prompt")]);
    h.markup(&prerendered(q.prompt)).close("p");
    for (i, a) in q.answers.iter().enumerate() {
        let class = match answered {
            Some(_) if i == q.correct => "answer right",
            Some(c) if c == i => "answer wrong",
            _ => "answer",
        };
        let value = i.to_string();
        h.open("label", &[("class", class)]);
        h.open(
            "input",
            &[
                ("type", "radio"),
                ("name", "predict"),
                ("value", &value),
                (if answered == Some(i) { "checked" } else { "" }, ""),
                (if answered.is_some() { "disabled" } else { "" }, ""),
            ],
        );
        h.open("span", &[]).markup(&prerendered(a)).close("span");
        h.close("label");
    }
    h.close("fieldset");
    // The verdict first, where the eyes are after Check; Continue under it.
    if let Some(c) = answered {
        let right = fix.as_ref().map_or(c == q.correct, |(right, _)| *right);
        h.open(
            "p",
            &[("class", "verdict"), ("data-testid", "predict-verdict")],
        );
        h.open("strong", &[])
            .text(if right { ui.correct } else { ui.not_quite })
            .raw(".")
            .close("strong");
        if let Some((_, ran)) = &fix {
            h.raw(" ").el("span", &[("data-testid", "fix-run")], ran);
            h.close("p").open("p", &[]);
        } else {
            h.raw(" ");
        }
        h.markup(&prerendered(q.explain)).close("p");
    }
    h.open("div", &[("class", "predict__actions")]);
    if answered.is_none() {
        h.el(
            "button",
            &[
                ("type", "submit"),
                ("class", "primary"),
                ("data-testid", "predict-check"),
            ],
            ui.check_answer,
        );
    }
    h.open("button", &[("type", "button")]);
    Action::Do(Act::Continue).put(&mut h);
    h.attr("data-testid", "predict-continue");
    h.text(ui.continue_run).close("button").close("div");
    if answered.is_none() {
        h.el(
            "p",
            &[
                ("class", "predict__hint"),
                ("data-testid", "predict-hint"),
                ("role", "status"),
            ],
            "",
        );
    }
    h.close("form");
    h.finish()
}

/// The progress panel: counts, the predict switch, the checklist (each scenario
/// with a mark for "watched" and one for its answer, ✓ right, ✗ wrong), and the
/// button that clears it.
pub fn progress(ui: &Ui, p: &Progress, lang: Lang) -> Markup {
    let total = ScenarioId::COUNT.to_string();
    let count = |n: usize| fill(ui.progress_count, &[&n.to_string(), &total]);
    let mut h = Html::new();
    h.el("h3", &[], ui.progress_title);
    h.el(
        "p",
        &[("data-testid", "progress-summary")],
        &format!(
            "{}: {} · {}: {}",
            ui.progress_watched,
            count(p.watched.len()),
            ui.progress_answered,
            count(p.answered.len())
        ),
    );
    h.open("label", &[("class", "switch")]);
    h.open(
        "input",
        &[
            ("type", "checkbox"),
            ("data-act", Act::Predict.name()),
            ("data-testid", "predict-toggle"),
            (if p.predict { "checked" } else { "" }, ""),
        ],
    );
    h.el("span", &[], ui.predict_toggle).close("label");
    h.open("ul", &[("class", "checklist")]);
    for n in names(lang) {
        let watched = p.has_watched(n.id);
        let (mark, answer) = match p.answer_of(n.id) {
            Some(true) => ("✓", "tick on"),
            Some(false) => ("✗", "tick off"),
            None => ("○", "tick"),
        };
        h.open("li", &[]);
        h.el(
            "span",
            &[
                ("class", if watched { "tick on" } else { "tick" }),
                ("title", ui.progress_watched),
            ],
            if watched { "✓" } else { "○" },
        );
        h.el(
            "span",
            &[("class", answer), ("title", ui.progress_answered)],
            mark,
        );
        let href = format!("?lang={}&scenario={}", lang.code(), n.id);
        h.open(
            "a",
            &[
                ("href", &href),
                ("data-testid", &format!("progress-{}", n.id)),
            ],
        );
        Action::Open {
            scenario: n.id,
            at_start: true,
        }
        .put(&mut h);
        h.text(n.title).close("a");
        h.close("li");
    }
    h.close("ul");
    h.el(
        "button",
        &[
            ("type", "button"),
            ("data-act", Act::Clear.name()),
            ("data-testid", "clear-progress"),
        ],
        ui.clear_progress,
    );
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lesson::{fragment, ui};

    #[test]
    fn the_question_reveals_after_an_answer() {
        let text = fragment::render_scenario(Lang::En, ScenarioId::NaivePost);
        let q = part_of(&text, "q").unwrap();
        let ui = ui(Lang::En);
        let asking = predict(ui, q, None, None);
        assert_eq!(asking.matches("type=\"radio\"").count(), 4);
        assert!(asking.contains("predict-check") && !asking.contains("predict-verdict"));
        let wrong = predict(ui, q, Some(0), None);
        assert!(wrong.contains("<strong>Not quite.</strong>"));
        assert!(wrong.contains("answer wrong") && wrong.contains("answer right"));
        assert!(!wrong.contains("predict-check"));
        assert!(
            wrong.find("predict-verdict") < wrong.find("predict-continue"),
            "the verdict comes before Continue: {wrong}"
        );
        assert!(predict(ui, q, Some(1), None).contains("<strong>Correct.</strong>"));
        assert_eq!(predict(ui, "garbage", None, None), "");
    }

    /// The labels around the question were written into its markup unescaped
    /// (while `fragment.rs` escaped the same labels on the host).
    #[test]
    fn the_questions_labels_are_escaped() {
        let text = fragment::render_scenario(Lang::En, ScenarioId::NaivePost);
        let q = part_of(&text, "q").unwrap();
        let mut ui = *ui(Lang::En);
        ui.predict_title = "Q&A <b>";
        ui.not_quite = "<i>no</i>";
        assert!(predict(&ui, q, None, None).contains("<legend>Q&amp;A &lt;b&gt;</legend>"));
        assert!(predict(&ui, q, Some(0), None).contains("&lt;i&gt;no&lt;/i&gt;."));
    }

    #[test]
    fn the_progress_panel_counts_and_marks() {
        let mut p = Progress::default();
        p.watch(ScenarioId::NaivePost);
        p.answer(ScenarioId::NaivePost, false);
        let html = progress(ui(Lang::En), &p, Lang::En);
        let n = ScenarioId::COUNT;
        assert!(html.contains(&format!(
            "Watched to the end: 1 of {n} · Question answered: 1 of {n}"
        )));
        assert!(html.contains("class=\"tick off\""));
        assert!(html.contains("data-act=\"predict\" data-testid=\"predict-toggle\" checked"));
        p.predict = false;
        assert!(!progress(ui(Lang::En), &p, Lang::En).contains("checked"));
    }
}
