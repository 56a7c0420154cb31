//! The reader's controls: the scenario picker, playback, faults and defences.
//! Each control sends the lab a command; none decides anything itself.

use super::state::Lab;
use crate::lesson::{names, Ui, SCENARIO_IDS, SEED_SCENARIOS};
use crate::narrate::{fill, node_name};
use crate::params::{speed_factor, SPEEDS};
use idem_sim::scenario::{Toggle, ToggleKind};
use idem_sim::{Command, Millis, NodeId};
use leptos::prelude::*;

/// The picker: the four scenarios, then the pitfalls, each with a one-line summary.
#[component]
pub fn Picker() -> impl IntoView {
    let lab = expect_context::<Lab>();
    let ui = lab.ui();
    let group = move |ids: &'static [&'static str]| {
        ids.iter()
            .map(|id| {
                let id: &'static str = id;
                view! {
                    <option value=id selected=move || lab.scenario.get() == id>
                        {names(lab.lang.get_untracked()).iter().find(|n| n.id == id).map(|n| n.title).unwrap_or(id)}
                    </option>
                }
            })
            .collect_view()
    };
    let on_change = move |ev| {
        let v = event_target_value(&ev);
        if let Some(id) = SCENARIO_IDS.iter().find(|i| **i == v) {
            lab.open(id, 0);
        }
    };
    view! {
        <label class="picker">
            <span class="picker__label">{ui.scenario_picker}</span>
            <select data-testid="scenario-picker" on:change=on_change>
                <optgroup label=ui.scenario_picker_seed_group>
                    {group(&SCENARIO_IDS[..SEED_SCENARIOS])}
                </optgroup>
                <optgroup label=ui.scenario_picker_pitfalls_group>
                    {group(&SCENARIO_IDS[SEED_SCENARIOS..])}
                </optgroup>
            </select>
        </label>
    }
}

/// Play, pause, step, back, to the end, restart, the timeline and the speed.
#[component]
pub fn Playback() -> impl IntoView {
    let lab = expect_context::<Lab>();
    let ui = lab.ui();
    let counter = move || format!("{} / {}", lab.cursor.get(), lab.steps());
    view! {
        <div class="playback" role="toolbar" aria-label=ui.lab_title>
            <button
                data-testid="btn-back"
                on:click=move |_| lab.step_back()
                disabled=move || lab.cursor.get() == 0
                aria-label=ui.back
                title=ui.back
            >
                "◀"
            </button>
            <button
                class="primary"
                data-testid="btn-play"
                on:click=move |_| lab.toggle_play()
                aria-pressed=move || lab.playing.get().to_string()
                aria-label=move || if lab.playing.get() { ui.pause } else { ui.play }
            >
                {move || if lab.playing.get() { format!("❚❚ {}", ui.pause) } else { format!("▶ {}", ui.play) }}
            </button>
            <button
                data-testid="btn-step"
                on:click=move |_| {
                    lab.playing.set(false);
                    lab.step_forward();
                }
                disabled=move || lab.at_end()
                aria-label=ui.step
                title=ui.step
            >
                {format!("{} ▶", ui.step)}
            </button>
            <button
                data-testid="btn-end"
                on:click=move |_| lab.to_end()
                disabled=move || lab.at_end()
                aria-label=ui.to_end
                title=ui.to_end
            >
                "⇥"
            </button>
            <button
                data-testid="btn-restart"
                on:click=move |_| lab.restart()
                aria-label=ui.restart
                title=ui.restart
            >
                "↺"
            </button>
            <span class="counter" data-testid="step-counter" aria-live="off">
                {counter}
            </span>
            <label class="speed">
                <span>{ui.speed}</span>
                <select
                    data-testid="speed"
                    on:change=move |ev| {
                        if let Some(s) = speed_factor(&event_target_value(&ev)) {
                            lab.speed.set(s);
                        }
                    }
                >
                    {SPEEDS
                        .iter()
                        .map(|(text, f)| {
                            let f = *f;
                            view! {
                                <option value=*text selected=move || lab.speed.get() == f>
                                    {format!("{text}×")}
                                </option>
                            }
                        })
                        .collect_view()}
                </select>
            </label>
        </div>
        <input
            class="scrubber"
            type="range"
            data-testid="scrubber"
            min="0"
            max=move || lab.steps().to_string()
            prop:value=move || lab.cursor.get().to_string()
            aria-label=ui.timeline
            on:input=move |ev| {
                if let Ok(k) = event_target_value(&ev).parse::<usize>() {
                    lab.playing.set(false);
                    lab.go(k);
                }
            }
        />
    }
}

/// Faults the reader can inject: a lost ack, parallel retries, crashes, the clock.
#[component]
pub fn Faults() -> impl IntoView {
    let lab = expect_context::<Lab>();
    let ui = lab.ui();
    // Fixed per scenario: the lab is built anew when the scenario changes.
    let nodes = lab.run.with_untracked(|r| r.scenario.nodes());
    let has_client = nodes.contains(&NodeId::Client);
    let crashable: Vec<NodeId> = nodes.into_iter().filter(|n| n.can_crash()).collect();
    view! {
        <fieldset class="faults">
            <legend>{ui.faults}</legend>
            {has_client.then(|| view! {
                <button data-testid="btn-drop-ack" on:click=move |_| lab.command(Command::LoseNextResponse)>
                    {ui.lose_next_ack}
                </button>
                <span class="group">
                    <label>
                        <span class="sr-only">{ui.parallel_count}</span>
                        <input
                            type="number"
                            min="2"
                            max="10"
                            data-testid="parallel-n"
                            aria-label=ui.parallel_count
                            prop:value=move || lab.parallel_n.get().to_string()
                            on:change=move |ev| {
                                let n = event_target_value(&ev).parse::<u32>().unwrap_or(3).clamp(2, 10);
                                lab.parallel_n.set(n);
                            }
                        />
                    </label>
                    <button
                        data-testid="btn-parallel-retries"
                        on:click=move |_| lab.command(Command::ParallelRetries(lab.parallel_n.get_untracked()))
                    >
                        {move || parallel_label(ui, lab.parallel_n.get())}
                    </button>
                </span>
            })}
            {
                crashable
                    .into_iter()
                    .map(|n| {
                        let up = move || lab.world.with(|w| w.is_up(n));
                        view! {
                            <button
                                data-testid=move || {
                                    format!("btn-{}-{}", if up() { "crash" } else { "restart" }, n.slug())
                                }
                                class:danger=up
                                on:click=move |_| {
                                    lab.command(if up() { Command::Crash(n) } else { Command::Restart(n) })
                                }
                            >
                                {move || {
                                    let verb = if up() { ui.crash } else { ui.restart_node };
                                    format!("{verb}: {}", node_name(ui, n))
                                }}
                            </button>
                        }
                    })
                    .collect_view()
            }
            <button data-testid="btn-advance-1h" on:click=move |_| lab.command(Command::AdvanceClock(Millis::HOUR))>
                {ui.advance_1h}
            </button>
            <button
                data-testid="btn-advance-25h"
                on:click=move |_| lab.command(Command::AdvanceClock(Millis::hours(25)))
            >
                {ui.advance_25h}
            </button>
            <button data-testid="btn-copy-link" on:click=move |_| copy_link(lab)>
                {ui.copy_link}
            </button>
        </fieldset>
    }
}

fn parallel_label(ui: &Ui, n: u32) -> String {
    fill(ui.parallel_n_retries, &[&n.to_string()])
}

/// Copies the page's address (kept in step with the state) to the clipboard.
fn copy_link(lab: Lab) {
    use wasm_bindgen::closure::Closure;
    let ui = lab.ui();
    let href = window().location().href().unwrap_or_default();
    let say = move |msg: &'static str| {
        Closure::<dyn FnMut(wasm_bindgen::JsValue)>::new(move |_| {
            lab.notices.update(|n| n.push(msg.to_string()))
        })
    };
    let (ok, failed) = (say(ui.link_copied), say(ui.copy_failed));
    let _ = window()
        .navigator()
        .clipboard()
        .write_text(&href)
        .then2(&ok, &failed);
    // Each runs at most once, after this function returns; the page keeps them.
    ok.forget();
    failed.forget();
}

/// The scenario's switches: defences, and the bugs and variants of its story.
#[component]
pub fn Switches() -> impl IntoView {
    let lab = expect_context::<Lab>();
    let ui = lab.ui();
    // Fixed per scenario: the lab is built anew when the scenario changes.
    let offered: Vec<Toggle> = lab
        .run
        .with_untracked(|r| r.scenario.toggles.iter().map(|(t, _)| *t).collect());
    let scenario = lab.scenario.get_untracked();
    let group = |legend: &'static str, testid: &'static str, kinds: &[ToggleKind]| {
        let ts: Vec<Toggle> = offered
            .iter()
            .copied()
            .filter(|t| kinds.contains(&t.kind()))
            .collect();
        (!ts.is_empty()).then(|| {
            let items = ts
                .into_iter()
                .map(|t| {
                    view! {
                        <label class="switch">
                            <input
                                type="checkbox"
                                data-testid=format!("toggle-{}", t.id())
                                prop:checked=move || lab.toggles.get().has(t)
                                on:change=move |ev| lab.set_toggle(t, event_target_checked(&ev))
                            />
                            <span>{toggle_label(ui, t, scenario)}</span>
                        </label>
                    }
                })
                .collect_view();
            view! {
                <fieldset class="switches" data-testid=testid>
                    <legend>{legend}</legend>
                    {items}
                </fieldset>
            }
        })
    };
    view! {
        {group(ui.defences, "defences", &[ToggleKind::Defence])}
        {group(ui.bugs_variants, "variants", &[ToggleKind::Bug, ToggleKind::Variant])}
    }
}

/// A toggle's name in the reader's language.
pub fn toggle_label(ui: &Ui, t: Toggle, scenario: &str) -> &'static str {
    match t {
        Toggle::UniqueConstraint if scenario == "counter-increment" => ui.def_unique_op_id,
        Toggle::IdempotencyKey => ui.def_idempotency_key,
        Toggle::UniqueConstraint => ui.def_unique_constraint,
        Toggle::AtomicClaim => ui.def_atomic_claim,
        Toggle::Fingerprint => ui.def_fingerprint,
        Toggle::SameTransaction => ui.def_key_in_tx,
        Toggle::KeyToProcessor => ui.def_key_to_processor,
        Toggle::SharedStore => ui.def_shared_store,
        Toggle::LongTtl => ui.def_long_ttl,
        Toggle::VersionCheck => ui.def_version_check,
        Toggle::OpDedup => ui.def_op_id_dedup,
        Toggle::RowCountCheck => ui.def_row_count,
        Toggle::ConsumerDedup => ui.def_processed_messages,
        Toggle::IdempotentProducer => ui.def_idempotent_producer,
        Toggle::NewKeyPerRetry => ui.def_new_key_bug,
        Toggle::OtherWriter => ui.var_other_writer,
        Toggle::CrashBeforeCommit => ui.var_crash_before_commit,
    }
}

/// Shows a step count like "Step 3 of 9" for screen readers.
pub fn step_of(ui: &Ui, k: usize, n: usize) -> String {
    fill(ui.step_of, &[&k.to_string(), &n.to_string()])
}
