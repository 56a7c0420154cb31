//! The state panes: what Redis, Postgres, the card processor, the broker and
//! the phone hold at the current step. They read the simulation's world.

use super::state::Lab;
use crate::narrate::{belief_text, fill};
use idem_sim::db::Value;
use idem_sim::net::dollars;
use idem_sim::scenario::OpSpec;
use idem_sim::trace::Happening;
use idem_sim::world::Belief;
use idem_sim::{Millis, NodeId};
use leptos::prelude::*;

/// Redis keys with their values and TTL, counting down on the virtual clock.
#[component]
pub fn RedisPane() -> impl IntoView {
    let lab = expect_context::<Lab>();
    let ui = lab.ui();
    let rows = move || {
        lab.world.with(|w| {
            w.redis
                .keys
                .iter()
                .map(|(k, e)| (k.clone(), e.value.clone(), w.redis.ttl(k, w.now)))
                .collect::<Vec<_>>()
        })
    };
    let touched = move || {
        lab.record.with(|r| {
            r.iter()
                .flat_map(|r| r.happenings.iter())
                .filter_map(|h| match h {
                    Happening::Redis { cmd, .. } => {
                        cmd.split_whitespace().nth(1).map(str::to_string)
                    }
                    _ => None,
                })
                .collect::<Vec<_>>()
        })
    };
    view! {
        <section class="pane pane--redis" data-testid="pane-redis">
            <h3>
                {ui.pane_redis}
                <span class="count" data-testid="redis-keys">
                    {move || lab.world.with(|w| w.redis.keys.len())}
                </span>
            </h3>
            {move || {
                let rows = rows();
                if rows.is_empty() {
                    view! { <p class="empty">{ui.no_keys}</p> }.into_any()
                } else {
                    let t = touched();
                    view! {
                        <ul class="kv">
                            {rows
                                .into_iter()
                                .map(|(k, v, ttl)| {
                                    let changed = t.contains(&k);
                                    view! {
                                        <li class:changed=changed>
                                            <code class="kv__key">{k}</code>
                                            <code class="kv__value">{v}</code>
                                            <span class="kv__ttl">
                                                {ttl.map(|t| format!("{} {}", ui.ttl, short_duration(t)))}
                                            </span>
                                        </li>
                                    }
                                })
                                .collect_view()}
                        </ul>
                    }
                        .into_any()
                }
            }}
        </section>
    }
}

/// `23 h 59 min`, `59 s`: a TTL at a glance.
fn short_duration(t: Millis) -> String {
    let s = t.0 / 1000;
    match (s / 3600, (s / 60) % 60, s % 60) {
        (0, 0, s) => format!("{s} s"),
        (0, m, s) => format!("{m} min {s} s"),
        (h, m, _) => format!("{h} h {m} min"),
    }
}

/// Postgres: every table with its rows and unique indexes; rows written at
/// this step are highlighted, uncommitted ones marked with their transaction.
#[component]
pub fn PostgresPane() -> impl IntoView {
    let lab = expect_context::<Lab>();
    let ui = lab.ui();
    let touched = move || {
        lab.record.with(|r| {
            r.iter()
                .flat_map(|r| r.happenings.iter())
                .flat_map(|h| match h {
                    Happening::Sql { touched, .. } => touched.clone(),
                    _ => Vec::new(),
                })
                .collect::<Vec<_>>()
        })
    };
    let open_txs = move || {
        lab.world.with(|w| {
            w.db.open_transactions()
                .map(|(_, tx)| fill(ui.open_tx, &[&tx.to_string()]))
                .collect::<Vec<_>>()
        })
    };
    view! {
        <section class="pane pane--postgres" data-testid="pane-postgres">
            <h3>{ui.pane_postgres}</h3>
            <ul class="txs">{move || open_txs().into_iter().map(|t| view! { <li>{t}</li> }).collect_view()}</ul>
            {move || {
                let touched = touched();
                lab.world
                    .with(|w| {
                        w.db
                            .tables
                            .iter()
                            .map(|t| {
                                let head = t.columns.iter().map(|c| view! { <th>{*c}</th> }).collect_view();
                                let indexes = t
                                    .unique
                                    .iter()
                                    .map(|ix| {
                                        let cols: Vec<&str> = ix.columns.iter().map(|c| t.columns[*c]).collect();
                                        let text = format!("{} ({})", ui.unique_index, cols.join(", "));
                                        view! {
                                            <li class:absent=!ix.present>
                                                {text}
                                                {(!ix.present).then(|| format!(" — {}", ui.index_absent))}
                                            </li>
                                        }
                                    })
                                    .collect_view();
                                let rows = t
                                    .rows
                                    .iter()
                                    .map(|r| {
                                        let (vals, pending) = match (&r.pending, &r.committed) {
                                            (Some(p), c) => (p.values.clone().or_else(|| c.clone()), Some(p.tx)),
                                            (None, c) => (c.clone(), None),
                                        };
                                        let deleted = r.pending.as_ref().is_some_and(|p| p.values.is_none());
                                        let changed = touched.contains(&(t.name, r.id));
                                        let cells = vals
                                            .unwrap_or_default()
                                            .into_iter()
                                            .map(|v| view! { <td>{cell(&v)}</td> })
                                            .collect_view();
                                        view! {
                                            <tr
                                                class:changed=changed
                                                class:pending=pending.is_some()
                                                class:deleted=deleted
                                                title=pending.map(|tx| format!("{} ({tx})", ui.uncommitted))
                                            >
                                                {cells}
                                            </tr>
                                        }
                                    })
                                    .collect_view();
                                let empty = t.rows.is_empty();
                                view! {
                                    <div class="table" data-table=t.name>
                                        <div class="table__name">
                                            <code>{t.name}</code>
                                            <ul class="indexes">{indexes}</ul>
                                        </div>
                                        <div class="table__scroll">
                                            <table>
                                                <thead>
                                                    <tr>{head}</tr>
                                                </thead>
                                                <tbody>{rows}</tbody>
                                            </table>
                                            {empty.then(|| view! { <p class="empty">{ui.no_rows}</p> })}
                                        </div>
                                    </div>
                                }
                            })
                            .collect_view()
                    })
            }}
        </section>
    }
}

fn cell(v: &Value) -> String {
    match v {
        // created_at is kept in virtual milliseconds.
        Value::Text(s) if s.len() > 40 => format!("{}…", &s[..40]),
        v => v.to_string(),
    }
}

/// The card processor: every charge, and the customer's statement.
#[component]
pub fn ProcessorPane() -> impl IntoView {
    let lab = expect_context::<Lab>();
    let ui = lab.ui();
    view! {
        <section class="pane pane--processor" data-testid="pane-processor">
            <h3>{ui.pane_processor}</h3>
            {move || {
                lab.world
                    .with(|w| {
                        if w.processor.charges.is_empty() {
                            return view! { <p class="empty">{ui.no_charges}</p> }.into_any();
                        }
                        let items = w
                            .processor
                            .charges
                            .iter()
                            .map(|c| {
                                let fresh = w.now == c.at;
                                view! {
                                    <li class:changed=fresh>
                                        <code>{c.id.clone()}</code>
                                        <span class="amount">{format!("−${}", dollars(c.amount))}</span>
                                        {c.key.clone().map(|k| view! { <code class="muted">{k}</code> })}
                                    </li>
                                }
                            })
                            .collect_view();
                        view! {
                            <p class="statement__title">{ui.statement}</p>
                            <ul class="statement">{items}</ul>
                        }
                            .into_any()
                    })
            }}
        </section>
    }
}

/// The broker's log and the consumer group's offset.
#[component]
pub fn BrokerPane() -> impl IntoView {
    let lab = expect_context::<Lab>();
    let ui = lab.ui();
    view! {
        <section class="pane pane--broker" data-testid="pane-broker">
            <h3>{ui.pane_broker}</h3>
            {move || {
                lab.world
                    .with(|w| {
                        let items = w
                            .broker
                            .log
                            .iter()
                            .map(|r| {
                                let done = r.offset < w.broker.committed;
                                view! {
                                    <li class:done=done>
                                        <span class="muted">{format!("{} {}", ui.record_offset, r.offset)}</span>
                                        <code>{r.msg_id.clone()}</code>
                                        <span>{format!("−${}", dollars(r.amount))}</span>
                                    </li>
                                }
                            })
                            .collect_view();
                        view! {
                            <p class="statement__title">{ui.broker_log}</p>
                            <ul class="statement">{items}</ul>
                            <p class="muted">{fill(ui.committed_offset, &[&w.broker.committed.to_string()])}</p>
                        }
                    })
            }}
        </section>
    }
}

/// The phone: what the user sees, beside what the app believes and what really happened.
#[component]
pub fn ClientPane() -> impl IntoView {
    let lab = expect_context::<Lab>();
    let ui = lab.ui();
    let op = move || {
        lab.world.with(|w| {
            let i = w
                .client
                .current
                .unwrap_or(0)
                .min(w.client.ops.len().saturating_sub(1));
            w.client
                .ops
                .get(i)
                .map(|o| (i, o.spec, o.belief.clone(), o.key))
        })
    };
    let screen = move || match op() {
        None => (String::new(), "idle"),
        Some((_, spec, belief, _)) => match belief {
            Belief::NotStarted => (String::new(), "idle"),
            Belief::Waiting | Belief::Unknown | Belief::Conflict => {
                (ui.screen_spinner.to_string(), "spinner")
            }
            Belief::Succeeded(what) => match spec {
                OpSpec::Charge(a) | OpSpec::PayOrder { amount: a, .. } => {
                    (ui.screen_receipt.replace("100.00", &dollars(a)), "receipt")
                }
                _ => (format!("✓ {what}"), "receipt"),
            },
            Belief::Reread { balance, version } => (format!("{balance} · v{version}"), "receipt"),
            Belief::Failed(..) | Belief::GaveUp => (ui.screen_failed.to_string(), "failed"),
        },
    };
    let truth = move || {
        lab.world.with(|w| {
            let i = w.client.current.unwrap_or(0);
            let charges: Vec<i64> = w
                .processor
                .charges
                .iter()
                .filter(|c| c.op == i)
                .map(|c| c.amount)
                .collect();
            (charges.len(), charges.iter().sum::<i64>())
        })
    };
    let has_processor = move || {
        lab.run
            .with(|r| r.scenario.nodes().contains(&NodeId::Processor))
    };
    view! {
        <section class="pane pane--client" data-testid="pane-client">
            <h3>{ui.pane_client}</h3>
            <div class="phone" data-screen=move || screen().1>
                <div class="phone__screen">
                    <span class="phone__spinner" aria-hidden="true"></span>
                    <span data-testid="phone-screen">{move || screen().0}</span>
                </div>
            </div>
            <dl class="facts">
                <dt>{ui.client_belief}</dt>
                <dd
                    data-testid="client-belief"
                    data-belief=move || op().map(|(_, _, b, _)| belief_id(&b)).unwrap_or("none")
                >
                    {move || op().map(|(_, _, b, _)| belief_text(ui, &b)).unwrap_or_default()}
                </dd>
                {move || {
                    op()
                        .and_then(|(_, _, _, k)| k)
                        .map(|k| {
                            let uuid = lab.world.with(|w| w.client.keys.get(k.0).cloned().unwrap_or_default());
                            view! {
                                <dt>"Idempotency-Key"</dt>
                                <dd>
                                    <code title=uuid.clone()>{format!("{k} = {uuid}")}</code>
                                </dd>
                            }
                        })
                }}
                <Show when=has_processor>
                    <dt>{ui.truth_title}</dt>
                    <dd class:bad=move || { truth().0 > 1 }>
                        {move || {
                            let (n, total) = truth();
                            fill(ui.truth_charges, &[&n.to_string(), &dollars(total)])
                        }}
                    </dd>
                </Show>
            </dl>
        </section>
    }
}

/// A stable, language-neutral name for a belief (for tests and styling).
pub fn belief_id(b: &Belief) -> &'static str {
    match b {
        Belief::NotStarted => "not-started",
        Belief::Waiting => "waiting",
        Belief::Unknown => "unknown",
        Belief::Succeeded(_) => "succeeded",
        Belief::Failed(..) => "failed",
        Belief::Conflict => "conflict",
        Belief::Reread { .. } => "reread",
        Belief::GaveUp => "gave-up",
    }
}
