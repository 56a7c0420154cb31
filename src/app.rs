//! The root component. It reads the outside world once (the URL, the page's
//! language, a random seed, motion and width preferences), builds the lab's state
//! from it, and keeps the URL in step with the reader.
//!
//! The page is prerendered (`build/prerender.mjs`): the header, the prose before and
//! after the lab and the lab's empty place are in the HTML of the reader's language
//! before the module starts. The module enhances that page instead of drawing it: it
//! mounts the lab into `#lab` ([`mount`]) and leaves the rest where it is; only when
//! the reader switches language does it fetch the other language's header and prose
//! (`ui::lesson`).

use crate::html::{Html, Markup};
use crate::lesson::fragment::page_file;
use crate::lesson::{ui, Lang};
use crate::narrate::{count, fill};
use crate::params::{echo, first_notices, Notice, Params};
use crate::ui::act::Act;
use crate::ui::controls;
use crate::ui::lesson::{self, Learn, Part};
use crate::ui::panes::{self, Pane};
use crate::ui::state::{Lab, Start, STEP_MS};
use crate::ui::{listen, topology};
use gloo_timers::callback::{Interval, Timeout};
use idem_sim::scenario::Toggle;
use idem_sim::NodeId;
use leptos::prelude::*;

/// The language the page was prerendered in (`<html lang>` as the page arrived):
/// the language of its header and prose. Read before [`app`] changes the attribute.
pub fn page_lang() -> Lang {
    document()
        .document_element()
        .and_then(|html| html.get_attribute("lang"))
        .and_then(|l| Lang::parse(&l))
        .unwrap_or(Lang::En)
}

/// Mounts the app into the prerendered page: the lab into `#lab` (emptied of its
/// placeholder first), then marks `<main>` `data-testid="app-ready"`. A page without
/// `#lab` (not built by the hook) gets the lab at the end of `<body>`.
///
/// First the module's labels: the page holds those of its language as text in
/// `#ui-text` (the module carries none). A page without them (not written by the
/// build's hook) gets no lab: `<html class="no-lab">` shows the line that says so.
pub fn mount() {
    let text = document().get_element_by_id("ui-text").and_then(|el| {
        el.remove();
        el.text_content()
    });
    if !text.is_some_and(|t| crate::lesson::load(page_lang(), t)) {
        if let Some(html) = document().document_element() {
            let _ = html.class_list().add_1("no-lab");
        }
        return;
    }
    let place = document().get_element_by_id("lab").or_else(|| {
        let el = document().create_element("section").ok()?;
        let _ = el.set_attribute("class", "lab");
        document().body()?.append_with_node_1(&el).ok()?;
        Some(el)
    });
    let Some(place) = place else { return };
    // The page's own content of the lab's place (the no-script text) goes.
    place.set_text_content(None);
    // The lab is markup written once ([`grid`]): it mounts no view of Leptos's, so not
    // through Leptos's mount (its view machinery), only what that mount does for the
    // reactive system: start the executor that runs the effects, and give the page a
    // root owner, for the page's life.
    let _ = any_spawner::Executor::init_wasm_bindgen();
    let owner = Owner::new();
    owner.with(move || app(place));
    std::mem::forget(owner);
    if let Some(page) = document().get_element_by_id("page") {
        let _ = page.set_attribute("data-testid", "app-ready");
    }
}

/// The lab, mounted into the page's `#lab` (`place`), and the page around it kept in
/// the reader's language.
fn app(place: web_sys::Element) {
    let start = read_start();
    let to_lab = start.to_lab;
    // A link to the lab opens scrolled to it: what the link got wrong is said there.
    if to_lab {
        controls::near(controls::Near::Head);
    }
    let lab = Lab::new(start);
    crate::ui::provide(lab);
    let learn = Learn::new(lab, to_lab);
    crate::ui::provide(learn);
    listen::install(lab, learn);
    sync_url(lab);
    play_timer(lab, learn);
    // The lab's core is built in this task; its controls' state, notices, topology,
    // narration, panes, diagram and the lesson's parts in a task after the next frame
    // (`Lab::whole`), so the core answers first (at once where the lab is on screen from
    // the start: `Lab::new`). The stored progress is read then (`Learn::load`), the scenario's text
    // fetched, and the address bar written (`sync_url`).
    request_animation_frame(move || {
        Timeout::new(0, move || {
            lab.finish();
            learn.load(lab);
            // Not again where it was whole at once: that would draw it all twice.
            if !lab.whole.get_untracked() {
                lab.whole.set(true);
            }
            learn.opened(lab, true);
        })
        .forget();
    });
    if lab.embed {
        // Only the lab: the prerendered header and prose go (`boot.js` hid them at once).
        for sel in [
            "#page-header",
            "[data-testid=prose-before]",
            "[data-testid=prose-after]",
        ] {
            if let Ok(Some(el)) = document().query_selector(sel) {
                el.remove();
            }
        }
    }
    // The page arrives in its language with its title (and `boot.js` marked an embedded
    // page): written again from the lab's second stage on (`Lab::whole`), not while its
    // core mounts.
    crate::ui::staged(lab, move || {
        let lang = lab.lang.get();
        document().set_title(ui(lang).title());
        if let Some(html) = document().document_element() {
            let _ = html.set_attribute("lang", lang.code());
            let _ = html.class_list().toggle_with_force("embed", lab.embed);
        }
    });
    let notices = notices();
    // The lab is written anew when the language changes, so every label is plain text,
    // and for each scenario (which panes and controls exist is fixed per scenario). The
    // effects [`grid`] makes are this effect's: each writing ends those of the one before.
    // (An effect as the others, where Leptos's `RenderEffect` was machinery of its own.)
    let el = notices.clone();
    crate::ui::effect(move || {
        lab.lang.track();
        // Another scenario comes only with `Lab::open`, which counts in `opened`.
        lab.opened.track();
        untrack(|| grid(lab, learn, &place, &el));
    });
    follow_notices(lab, notices);
}

/// The lab for the current scenario, written into `place` at once: the topology and
/// controls, the state panes, the diagram, the lesson's parts; then the effects that
/// keep each in step with the lab. The notices (`notices`) keep their place.
fn grid(lab: Lab, learn: Learn, place: &web_sys::Element, notices: &web_sys::Element) {
    let ui = lab.ui();
    let nodes = lab.run.with_untracked(|r| r.scenario.nodes());
    let offered: Vec<Toggle> = lab
        .run
        .with_untracked(|r| r.scenario.toggles.iter().map(|(t, _)| *t).collect());
    let id = lab.scenario();
    let client = nodes.contains(&NodeId::Client);
    // The client's policy as numbers, under the switches that preset it.
    let policy = if client {
        let n = lab
            .run
            .with_untracked(|r| r.scenario.retry_policy(r.config.toggles).numbers());
        controls::policy(ui, n)
    } else {
        Markup::default()
    };
    // One idea at a time: the scenario opens with playback and the one fault it is
    // about; the defences, the client's variants and policy, the other faults and
    // the explorer wait in sections the reader opens.
    let lead = lab
        .run
        .with_untracked(|r| controls::lead_fault(&r.scenario));
    let others: Vec<controls::Fault> = controls::offered_faults(&nodes)
        .into_iter()
        .filter(|f| *f != lead)
        .collect();
    let sections = [
        controls::section(
            controls::Sec::Defences,
            ui.sec_defences(),
            &controls::switches(ui, &offered, id, controls::defence_group(ui)),
        ),
        controls::section(
            controls::Sec::Client,
            if client {
                ui.sec_client()
            } else {
                ui.bugs_variants()
            },
            &(controls::switches(ui, &offered, id, controls::variant_group(ui)) + &policy),
        ),
        controls::section(
            controls::Sec::More,
            ui.explore_title(),
            &(controls::faults(ui, &others) + &crate::ui::explore::panel(ui, &offered, id)),
        ),
    ]
    .into_iter()
    .collect::<Markup>();
    let side: Vec<Pane> = [
        (NodeId::Client, Pane::Client),
        (NodeId::Redis, Pane::Redis),
        (NodeId::Postgres, Pane::Postgres),
        (NodeId::Processor, Pane::Processor),
        (NodeId::Broker, Pane::Broker),
    ]
    .into_iter()
    .filter(|(n, p)| *p == Pane::Postgres || nodes.contains(n))
    .map(|(_, p)| p)
    .collect();
    // Static markup, written once; its state is kept by `controls::patch`.
    let controls = |h: &mut Html, m: &Markup| {
        h.open("div", &[("class", "contents")]);
        h.markup(m).close("div");
    };
    // The words beside the picture: the step's narration right under the topology
    // (above playback), the sequence diagram beside them from 1280 px; the outcome at
    // the top of the last column (on a phone, a compact line that sticks to the
    // bottom edge under the narration and playback).
    let mut h = Html::new();
    controls(
        &mut h,
        &controls::lab_head(ui, lab.lang.get_untracked(), id),
    );
    // Two sets of defences side by side (`explore::follow`): the sentence that names
    // both and where they part (the comparison's worker writes it) over both runs.
    h.el("div", &[("id", "xc"), ("class", "compare__said")], "");
    h.open("div", &[("class", "lab__grid")]);
    h.open("div", &[("class", "lab__main")]);
    topology::frame(&mut h, ui);
    Pane::Narration.frame(&mut h, ui);
    controls(&mut h, &controls::playback(ui));
    Part::Predict.frame(&mut h);
    controls(&mut h, &(controls::faults(ui, &[lead]) + &sections));
    h.close("div");
    h.open("div", &[("class", "lab__side")]);
    Pane::Outcome.frame(&mut h, ui);
    for p in &side {
        p.frame(&mut h, ui);
    }
    h.close("div");
    h.open("div", &[("class", "lab__seq")]);
    panes::sequence_frame(&mut h, ui);
    Part::Code.frame(&mut h);
    h.close("div").close("div");
    // On a phone the two runs take turns: this switch flips between them (style/main.css).
    h.open("label", &[("class", "switch compare__flip")]);
    h.void(
        "input",
        &[("type", "checkbox"), ("data-testid", "compare-flip")],
    );
    h.el("span", &[], ui.cmp_flip());
    h.close("label");
    h.el(
        "div",
        &[
            ("class", "compare"),
            ("id", "xv"),
            ("data-testid", "compare"),
        ],
        "",
    );
    h.open("div", &[("class", "lab__text")]);
    Part::About.frame(&mut h);
    Part::Progress.frame(&mut h);
    h.close("div");
    // The notices stay where they are, unless they were in the lab written over: then
    // they go first in it (where they start).
    let first = notices.parent_node().is_none() || place.contains(Some(notices));
    crate::ui::set_inner(place, &h.finish());
    if first {
        let _ = place.prepend_with_node_1(notices);
    }
    controls::patch(lab);
    // A search of the lab this one replaces would fill its panel; its comparison ends.
    crate::ui::explore::reset(lab);
    topology::follow(lab, place);
    let mut all = vec![Pane::Narration, Pane::Outcome];
    all.extend(side);
    panes::follow(lab, place, all);
    panes::sequence(lab, place);
    for part in [Part::Predict, Part::Code, Part::About, Part::Progress] {
        lesson::follow_part(lab, learn, part, place);
    }
}

/// Notices (fallbacks of the link, refused commands, "Link copied"), dismissable.
/// One element, moved beside the control the reader last used
/// ([`controls::place_notices`]), so they appear where the reader is.
fn notices() -> web_sys::Element {
    let el = document()
        .create_element("div")
        .expect("a document makes elements");
    let _ = el.set_attribute("role", "status");
    let _ = el.set_attribute("id", "notices");
    el
}

/// Keeps the notices' element (`node`, [`notices`]) in step with the lab's notices: made
/// after the lab's own effect, so the lab is written before they are placed in it. From
/// the lab's second stage on (`Lab::whole`), as the rest of what the lab shows.
fn follow_notices(lab: Lab, node: web_sys::Element) {
    crate::ui::staged(lab, move || {
        lab.lang.track();
        let ui = lab.ui();
        let m = lab.notices.with(|list| {
            if list.is_empty() {
                return Markup::default();
            }
            let mut h = crate::html::Html::new();
            h.open("div", &[("class", "notices"), ("data-testid", "notice")]);
            for n in list {
                h.el("p", &[], n);
            }
            if let Some(link) = controls::share_link(false) {
                h.markup(&controls::share_input(ui, &link));
            }
            h.el(
                "button",
                &[
                    ("type", "button"),
                    ("class", "link"),
                    ("data-act", Act::Dismiss.name()),
                    ("aria-label", ui.dismiss()),
                ],
                "×",
            );
            h.close("div");
            h.finish()
        });
        crate::ui::set_inner(&node, &m);
        controls::place_notices(&node);
    });
}

/// Reads the URL and the browser once, at start-up.
fn read_start() -> Start {
    let search = window().location().search().unwrap_or_default();
    // The lesson's own address has no query: then the parser is not called, so not
    // compiled in the start task either (the browser compiles a function of the module
    // on its first call; `Params::parse` was 4.4 KB of the 74.6 KB compiled there).
    let seed = random_seed();
    let (p, notices) = if search.is_empty() {
        (Params::plain(seed), Vec::new())
    } else {
        Params::parse(&search, seed)
    };
    // Without `lang=`, the page's own (`boot.js` chose the page by the browser's language).
    // (The other language's labels arrive only with a switch: `boot.js` sends a link
    // with `lang=` to the page of that language, so this is its own.)
    let lang = p
        .lang
        .filter(|l| crate::lesson::loaded(*l))
        .unwrap_or_else(page_lang);
    let ui = ui(lang);
    // Where the lab is out of view as the page opens (no link to it, not embedded: its
    // first stage, `Lab::whole`), the run is computed only as far as the step shown, and
    // the rest before the second stage draws it or the reader acts (`Lab::finish`).
    let (run, dropped) = p.run_to(if p.lab_link || p.embed || p.decisive {
        idem_sim::run::MAX_STEPS
    } else {
        p.step.unwrap_or(0)
    });
    // Values from the URL are quoted shortened (`echo`); the markup writer escapes them.
    let mut texts: Vec<String> = notices
        .iter()
        .map(|n| {
            // Most name the value they refused, and nothing else: one `fill` for them.
            let (t, v) = match n {
                Notice::UnknownScenario(v) => (ui.unknown_scenario(), v),
                Notice::BadStep(v) => (ui.unknown_step(), v),
                Notice::BadSeed(v) => {
                    return fill(ui.bad_seed(), &[&echo(v), &p.seed.to_string()]);
                }
                Notice::UnknownLang(v) => (ui.unknown_lang(), v),
                Notice::BadSpeed(v) => (ui.bad_speed(), v),
                Notice::UnknownToggle(v) => (ui.unknown_toggle(), v),
                Notice::ToggleNotOffered(v) => (ui.toggle_not_offered(), v),
                Notice::BadCommand(v) => (ui.bad_command(), v),
                Notice::BadEmbed(v) => (ui.bad_embed(), v),
                Notice::BadRetry(v) => (ui.retry_bad(), v),
                Notice::RetryRange { i, typed, used } => {
                    return controls::retry_range(ui, *i, typed, *used);
                }
            };
            fill(t, &[&echo(v)])
        })
        .collect();
    // The reader's commands from the link were replayed, in order, each at its step.
    for d in dropped {
        let text = crate::params::dropped_text(&d);
        texts.push(fill(ui.bad_command(), &[&echo(&text)]));
    }
    let len = run.len();
    let step = match p.step {
        _ if p.decisive => run.decisive_step().unwrap_or(0),
        Some(k) if k > len => {
            texts.push(fill(ui.unknown_step(), &[&k.to_string()]));
            0
        }
        Some(k) => k,
        None => 0,
    };
    let (mut texts, more) = first_notices(texts);
    if more > 0 {
        texts.push(count(ui.more_notices(), more, &[]));
    }
    Start {
        lang,
        run,
        seed: p.seed,
        step,
        speed: p.speed,
        embed: p.embed,
        to_lab: p.lab_link && !p.embed,
        reduced_motion: media("(prefers-reduced-motion: reduce)"),
        tall: listen::is_narrow(),
        notices: texts,
    }
}

fn media(query: &str) -> bool {
    window()
        .match_media(query)
        .ok()
        .flatten()
        .is_some_and(|m| m.matches())
}

/// A seed for a run the URL did not pin, from the browser's random source.
fn random_seed() -> u64 {
    let mut b = [0u8; 4];
    match getrandom::fill(&mut b) {
        Ok(()) => u64::from(u32::from_le_bytes(b) % 1_000_000),
        Err(_) => 1,
    }
}

/// Keeps the address bar in step with what the reader sees, so a copied link restores it:
/// from the lab's second stage on (`Lab::whole`), not in the task that mounts its core
/// (the history's `replaceState` and the query's text are not the core's).
fn sync_url(lab: Lab) {
    crate::ui::staged(lab, move || {
        let id = lab.scenario();
        let k = lab.cursor.get();
        let lang = lab.lang.get();
        let p = Params {
            scenario: id,
            step: (k > 0).then_some(k),
            decisive: false,
            seed: lab.seed,
            lang: Some(lang),
            speed: lab.speed.get(),
            embed: lab.embed,
            lab_link: true,
            on: Vec::new(),
            off: Vec::new(),
            retry: None,
            commands: lab.run.with(idem_sim::Run::commands),
        };
        let q = lab.run.with(|r| p.to_query(&r.scenario, r.config.toggles));
        // After a switch of language, the address names that language's page, so a
        // reload or a copied link opens on its text with no detour through `boot.js`.
        let path = window().location().pathname().unwrap_or_default();
        let on_ru = path.ends_with(page_file(Lang::Ru));
        let q = if on_ru == (lang == Lang::Ru) {
            q
        } else {
            format!("{}{q}", page_file(lang))
        };
        if let Ok(h) = window().history() {
            let _ = h.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&q));
        }
    });
}

/// Advances the run while playing, at the chosen speed. Replacing the stored
/// interval drops (and so cancels) the previous one: pausing or a new speed
/// never leaves a timer behind. After each step the lesson follows (`Learn::moved`).
fn play_timer(lab: Lab, learn: Learn) {
    // The effect's own (not a `StoredValue`: that brought Leptos's arena machinery for one value).
    let timer = std::cell::Cell::new(None::<Interval>);
    crate::ui::effect(move || {
        let next = lab.playing.get().then(|| {
            let every = (STEP_MS / lab.speed.get()) as u32;
            Interval::new(every, move || {
                lab.tick();
                learn.moved(lab);
            })
        });
        // The interval before, dropped, stops.
        drop(timer.replace(next));
    });
}
