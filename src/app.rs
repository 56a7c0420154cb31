//! The root component. It reads the outside world once (the URL, the
//! browser's language, a random seed, motion and width preferences), builds
//! the lab's state from it, and keeps the URL in step with the reader.

use crate::lesson::{names, ui, Lang};
use crate::narrate::fill;
use crate::params::{Notice, Params};
use crate::ui::controls::{Faults, Picker, Playback, Switches};
use crate::ui::lesson::{Learn, LessonPart, Part};
use crate::ui::panes::{Pane, Sequence, StatePane};
use crate::ui::state::{Lab, Start, STEP_MS};
use crate::ui::topology::Topology;
use gloo_timers::callback::Interval;
use idem_sim::scenario::{self, Toggle};
use idem_sim::NodeId;
use leptos::ev;
use leptos::prelude::*;

/// Below this width the topology is drawn in portrait.
const NARROW_PX: f64 = 700.0;

/// The page. `data-testid="app-ready"` appears once the wasm app has mounted.
#[component]
pub fn App() -> impl IntoView {
    let lab = Lab::new(read_start());
    provide_context(lab);
    provide_context(Learn::new(lab));
    sync_url(lab);
    play_timer(lab);
    keyboard(lab);
    let on_resize = window_event_listener(ev::resize, move |_| lab.tall.set(is_narrow()));
    on_cleanup(move || on_resize.remove());
    Effect::new(move |_| {
        let lang = lab.lang.get();
        document().set_title(ui(lang).title);
        if let Some(html) = document().document_element() {
            let _ = html.set_attribute("lang", lang.code());
        }
    });
    // The page is built anew when the language changes, so every label is plain text.
    move || {
        lab.lang.track();
        untrack(|| view! { <Page/> })
    }
}

/// Everything on the page, in the current language.
#[component]
fn Page() -> impl IntoView {
    let lab = expect_context::<Lab>();
    let ui = lab.ui();
    let name = move || {
        names(lab.lang.get_untracked())
            .iter()
            .find(|n| n.id == lab.scenario.get())
    };
    let header = (!lab.embed).then(|| {
        view! {
            <header class="page__header">
                <div class="page__title">
                    <h1>{ui.title}</h1>
                    <LangSwitch/>
                </div>
                <p class="lead">{ui.subtitle}</p>
            </header>
        }
    });
    let prose = move |part| (!lab.embed).then(|| view! { <LessonPart part=part/> });
    view! {
        <main class="page" class:embed=lab.embed data-testid="app-ready">
            {(!lab.embed).then(|| view! { <a class="skip" href="#lab">{ui.skip_to_lab}</a> })}
            {header}
            <Notices/>
            {prose(Part::Before)}
            <section class="lab" id="lab" aria-labelledby="lab-title">
                <div class="lab__head">
                    <h2 id="lab-title" data-testid="scenario-title">
                        {move || name().map(|s| s.title).unwrap_or(lab.scenario.get())}
                    </h2>
                    <Picker/>
                </div>
                <p class="summary-line">{move || name().map(|s| s.summary).unwrap_or("")}</p>
                // Built anew for each scenario: which panes and controls exist is fixed per scenario.
                {move || {
                    lab.scenario.track();
                    untrack(|| view! { <LabGrid/> })
                }}
                <p class="hint muted">{ui.keyboard_hint}</p>
            </section>
            {prose(Part::After)}
        </main>
    }
}

/// The lab for the current scenario: the topology and controls, the state panes, the diagram.
#[component]
fn LabGrid() -> impl IntoView {
    let lab = expect_context::<Lab>();
    let nodes = lab.run.with_untracked(|r| r.scenario.nodes());
    let pane = |n: NodeId, p: Pane| nodes.contains(&n).then(|| view! { <StatePane pane=p/> });
    view! {
        <div class="lab__grid">
            <div class="lab__main">
                <Topology/>
                <Playback/>
                <LessonPart part=Part::Predict/>
                <StatePane pane=Pane::Narration/>
                <LessonPart part=Part::Code/>
                <Faults/>
                <Switches/>
            </div>
            <div class="lab__side">
                <StatePane pane=Pane::Outcome/>
                {pane(NodeId::Client, Pane::Client)}
                {pane(NodeId::Redis, Pane::Redis)}
                <StatePane pane=Pane::Postgres/>
                {pane(NodeId::Processor, Pane::Processor)}
                {pane(NodeId::Broker, Pane::Broker)}
            </div>
            <div class="lab__seq">
                <Sequence/>
            </div>
        </div>
        <div class="lab__text">
            <LessonPart part=Part::About/>
            <LessonPart part=Part::Progress/>
        </div>
    }
}

/// RU / EN buttons.
#[component]
fn LangSwitch() -> impl IntoView {
    let lab = expect_context::<Lab>();
    let ui = lab.ui();
    view! {
        <div class="lang" role="group" aria-label=ui.lang_switch>
            {Lang::ALL
                .into_iter()
                .map(|l| {
                    view! {
                        <button
                            data-testid=format!("lang-{}", l.code())
                            aria-pressed=move || (lab.lang.get() == l).to_string()
                            on:click=move |_| lab.lang.set(l)
                            title=move || match l {
                                Lang::Ru => ui.lang_ru_name,
                                Lang::En => ui.lang_en_name,
                            }
                        >
                            {move || match l {
                                Lang::Ru => ui.lang_ru_short,
                                Lang::En => ui.lang_en_short,
                            }}
                        </button>
                    }
                })
                .collect_view()}
        </div>
    }
}

/// Fallback notices and refused commands, each dismissable.
#[component]
fn Notices() -> impl IntoView {
    let lab = expect_context::<Lab>();
    move || {
        let notices = lab.notices.get();
        (!notices.is_empty()).then(|| {
            view! {
                <div class="notices" role="status" data-testid="notice">
                    {notices.into_iter().map(|n| view! { <p>{n}</p> }).collect_view()}
                    <button class="link" on:click=move |_| lab.notices.set(Vec::new())>
                        "×"
                    </button>
                </div>
            }
        })
    }
}

/// Reads the URL and the browser once, at start-up.
fn read_start() -> Start {
    let search = window().location().search().unwrap_or_default();
    let (p, notices) = Params::parse(&search, random_seed());
    let browser = window()
        .navigator()
        .language()
        .and_then(|l| Lang::parse(&l))
        .unwrap_or(Lang::En);
    let lang = p.lang.unwrap_or(browser);
    let ui = ui(lang);
    let s = scenario::by_id(p.scenario).unwrap_or_else(|| scenario::all().remove(0));
    let toggles = p.toggles(s.default_toggles());
    let mut run = crate::ui::state::new_run(p.scenario, toggles, p.seed);
    let mut texts: Vec<String> = notices
        .iter()
        .map(|n| match n {
            Notice::UnknownScenario(v) => fill(ui.unknown_scenario, &[v]),
            Notice::BadStep(v) => fill(ui.unknown_step, &[v]),
            Notice::BadSeed(v) => fill(ui.bad_seed, &[v, &p.seed.to_string()]),
            Notice::UnknownLang(v) => fill(ui.unknown_lang, &[v]),
            Notice::BadSpeed(v) => fill(ui.bad_speed, &[v]),
            Notice::UnknownToggle(v) => fill(ui.unknown_toggle, &[v]),
            Notice::ToggleNotOffered(v) => fill(ui.toggle_not_offered, &[v]),
            Notice::BadCommand(v) => fill(ui.bad_command, &[v]),
        })
        .collect();
    // Replay the reader's commands from the link, in order, each at its step.
    for (k, cmd) in &p.commands {
        let text = format!("{k}:{}", crate::params::command_text(cmd));
        if *k > run.len() || run.apply_at(*k, cmd.clone()).is_err() {
            texts.push(fill(ui.bad_command, &[&text]));
        }
    }
    let len = run.len();
    let step = match p.step {
        _ if p.decisive => run.decisive_step().unwrap_or(0),
        Some(k) if k > len => {
            texts.push(fill(ui.unknown_step, &[&k.to_string()]));
            0
        }
        Some(k) => k,
        None => 0,
    };
    Start {
        lang,
        scenario: p.scenario,
        toggles,
        run,
        seed: p.seed,
        step,
        speed: p.speed,
        embed: p.embed,
        reduced_motion: media("(prefers-reduced-motion: reduce)"),
        tall: is_narrow(),
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

fn is_narrow() -> bool {
    window()
        .inner_width()
        .ok()
        .and_then(|w| w.as_f64())
        .is_some_and(|w| w < NARROW_PX)
}

/// A seed for a run the URL did not pin, from the browser's random source.
fn random_seed() -> u64 {
    let mut b = [0u8; 4];
    match getrandom::fill(&mut b) {
        Ok(()) => u64::from(u32::from_le_bytes(b) % 1_000_000),
        Err(_) => 1,
    }
}

/// Keeps the address bar in step with what the reader sees, so a copied link restores it.
fn sync_url(lab: Lab) {
    Effect::new(move |_| {
        let id = lab.scenario.get();
        let (offered, defaults): (Vec<Toggle>, _) = lab.run.with(|r| {
            (
                r.scenario.toggles.iter().map(|(t, _)| *t).collect(),
                r.scenario.default_toggles(),
            )
        });
        let k = lab.cursor.get();
        let p = Params {
            scenario: id,
            step: (k > 0).then_some(k),
            decisive: false,
            seed: lab.seed,
            lang: Some(lab.lang.get()),
            speed: lab.speed.get(),
            embed: lab.embed,
            on: Vec::new(),
            off: Vec::new(),
            commands: lab.run.with(Params::commands_of),
        };
        let q = p.to_query(lab.toggles.get(), defaults, &offered);
        if let Ok(h) = window().history() {
            let _ = h.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&q));
        }
    });
}

/// Advances the run while playing, at the chosen speed. Replacing the stored
/// interval drops (and so cancels) the previous one: pausing or a new speed
/// never leaves a timer behind.
fn play_timer(lab: Lab) {
    let timer = StoredValue::new_local(None::<Interval>);
    Effect::new(move |_| {
        let next = lab.playing.get().then(|| {
            let every = (STEP_MS / lab.speed.get()) as u32;
            Interval::new(every, move || lab.tick())
        });
        timer.set_value(next);
    });
}

/// Space plays or pauses; the arrow keys step. Keys typed into a control are left alone.
fn keyboard(lab: Lab) {
    let handle = window_event_listener(ev::keydown, move |e| {
        let tag = e
            .target()
            .and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::Element>(t).ok())
            .map(|el| el.tag_name().to_ascii_lowercase())
            .unwrap_or_default();
        let native = matches!(tag.as_str(), "input" | "select" | "textarea")
            || (tag == "button" && e.key() == " ")
            || e.alt_key()
            || e.ctrl_key()
            || e.meta_key();
        if native {
            return;
        }
        match e.key().as_str() {
            " " => {
                e.prevent_default();
                lab.toggle_play();
            }
            "ArrowRight" => {
                e.prevent_default();
                lab.playing.set(false);
                lab.step_forward();
            }
            "ArrowLeft" => {
                e.prevent_default();
                lab.step_back();
            }
            _ => {}
        }
    });
    on_cleanup(move || handle.remove());
}
