//! What the current step means: narration with the exact command that ran,
//! the outcome so far, and each invariant's status.

use super::state::Lab;
use crate::narrate::{invariant_name, narrate};
use idem_sim::net::{dollars, Payload};
use idem_sim::trace::Happening;
use leptos::prelude::*;

/// The step explained in a sentence or two, and the command it ran with its result.
#[component]
pub fn Narration() -> impl IntoView {
    let lab = expect_context::<Lab>();
    let ui = lab.ui();
    let lines = move || {
        lab.record.with(|r| match r {
            Some(r) => narrate(ui, r),
            None => vec![ui.n_start.to_string()],
        })
    };
    // The exact command: SQL or Redis with its result, else the HTTP request sent.
    let command = move || {
        lab.record.with(|r| {
            let r = r.as_ref()?;
            if let Some((cmd, result)) = r.command() {
                return Some(format!("{cmd}\n→ {result}"));
            }
            r.happenings.iter().find_map(|h| match h {
                Happening::Sent {
                    msg,
                    kind: "request",
                    ..
                } => lab.world.with(|w| {
                    w.msgs.get(msg).and_then(|m| match &m.payload {
                        p @ Payload::Request(_) => p.command(),
                        _ => None,
                    })
                }),
                _ => None,
            })
        })
    };
    let time = move || lab.world.with(|w| w.now.to_string());
    view! {
        <section class="pane pane--narration" data-testid="narration">
            <h3>
                {ui.pane_narration}
                <span class="muted clock" data-testid="clock">
                    {time}
                </span>
            </h3>
            <div class="narration" aria-live="polite" aria-atomic="true" data-testid="narration-text">
                {move || lines().into_iter().map(|l| view! { <p>{l}</p> }).collect_view()}
            </div>
            {move || {
                command()
                    .map(|c| {
                        view! {
                            <pre class="command" data-testid="step-command">
                                <code>{c}</code>
                            </pre>
                        }
                    })
            }}
        </section>
    }
}

/// The numbers that matter for this scenario, and the invariants.
#[component]
pub fn Outcome() -> impl IntoView {
    let lab = expect_context::<Lab>();
    let ui = lab.ui();
    let has_table = move |t: &'static str| lab.world.with(|w| w.db.table(t).is_some());
    let has_processor = move || lab.run.with(|r| r.scenario.expected_charge.is_some());
    let expected = move || lab.run.with(|r| r.scenario.expected_charge.unwrap_or(0));
    let total = move || lab.world.with(|w| w.processor.total());
    let int =
        move |t: &'static str, c: &'static str| lab.world.with(|w| w.int_cell(t, c).unwrap_or(0));
    let all_hold = move || lab.world.with(|w| w.all_hold());
    view! {
        <section class="pane pane--outcome" data-testid="outcome">
            <h3>{ui.pane_outcome}</h3>
            <Show when=has_processor>
                <p class="summary" class:bad=move || { total() > expected() }>
                    {ui.customer_charged}
                    ": "
                    <strong data-testid="customer-charged">{move || format!("${}", dollars(total()))}</strong>
                    " — "
                    {ui.expected.to_lowercase()}
                    " "
                    {move || format!("${}", dollars(expected()))}
                </p>
            </Show>
            <dl class="numbers">
                <Show when=has_processor>
                    <dt>{ui.charges_at_processor}</dt>
                    <dd data-testid="charge-count">{move || lab.world.with(|w| w.processor.charges.len())}</dd>
                </Show>
                <Show when=move || has_table("payments")>
                    <dt>{ui.ledger_rows}</dt>
                    <dd data-testid="ledger-rows">
                        {move || lab.world.with(|w| w.db.table("payments").map_or(0, |t| t.committed_count()))}
                    </dd>
                </Show>
                <Show when=move || has_table("accounts")>
                    <dt>{ui.balance}</dt>
                    <dd data-testid="account-balance">{move || int("accounts", "balance")}</dd>
                    <dt>{ui.version}</dt>
                    <dd data-testid="account-version">{move || int("accounts", "version")}</dd>
                </Show>
                <Show when=move || has_table("posts")>
                    <dt>{ui.likes}</dt>
                    <dd data-testid="post-likes">{move || int("posts", "likes")}</dd>
                </Show>
                <Show when=move || has_table("orders")>
                    <dt>{ui.order_status}</dt>
                    <dd data-testid="order-status">
                        {move || {
                            lab.world
                                .with(|w| {
                                    w.db
                                        .table("orders")
                                        .and_then(|t| t.committed_rows().next().map(|r| r[1].to_string()))
                                        .unwrap_or_default()
                                })
                        }}
                    </dd>
                </Show>
            </dl>
            <h4>
                {ui.pane_invariants}
                " "
                <span
                    class="status"
                    class:bad=move || !all_hold()
                    data-testid="invariant-status"
                    data-status=move || if all_hold() { "holds" } else { "violated" }
                >
                    {move || if all_hold() { ui.holds } else { ui.violated }}
                </span>
            </h4>
            <ul class="invariants">
                {move || {
                    lab.world
                        .with(|w| {
                            w.invariants
                                .iter()
                                .map(|(inv, holds)| {
                                    let holds = *holds;
                                    view! {
                                        <li class:bad=!holds data-testid=format!("inv-{}", inv.id())>
                                            <span class="dot" aria-hidden="true"></span>
                                            {invariant_name(ui, *inv)}
                                            ": "
                                            <strong>{if holds { ui.holds } else { ui.violated }}</strong>
                                        </li>
                                    }
                                })
                                .collect_view()
                        })
                }}
            </ul>
        </section>
    }
}
