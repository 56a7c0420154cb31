//! Narration: what a step did, in the reader's language. The simulation's
//! trace says what happened as data; this turns it into sentences using the
//! templates of the lesson's [`Ui`] text. It decides nothing about the run.

use crate::lesson::{Template, Ui};
use idem_sim::http::ErrorCode;
use idem_sim::net::{LossCause, Payload};
use idem_sim::scenario::{Phase, Scenario, EMAILS};

use idem_sim::timing::{SESSION_TIMEOUT, STATEMENT_TIMEOUT};
use idem_sim::trace::{Cause, Happening, StepRecord};
use idem_sim::world::{Belief, Command, CommandError, World};
use idem_sim::{Invariant, Millis, NodeId};

/// The labels' templates are filled here as everywhere: [`crate::template`].
pub use crate::template::{count, fill};

/// Money in the reader's notation, the lab's one formatter for it: `$100.00` in
/// English, `$100,00` in Russian (the decimal separator of the times beside it).
pub fn money(ui: &Ui, dollars: i64) -> String {
    format!("${dollars}{}00", ui.decimal_sep())
}

#[cfg(test)]
mod money_tests {
    use super::money;
    use crate::lesson::{ui, Lang};

    /// The lab's money follows the page's language, as its times do ("1,5 с"):
    /// Russian showed "$100.00" beside «1,5 с».
    #[test]
    fn money_is_written_in_the_readers_notation() {
        assert_eq!(money(ui(Lang::En), 100), "$100.00");
        assert_eq!(money(ui(Lang::Ru), 100), "$100,00");
    }
}

/// A virtual time or duration in the reader's units: `2.339 s`, `25 h 0 min 3.100 s`.
pub fn duration(ui: &Ui, t: Millis) -> String {
    let ms = t.0;
    let (h, m, s, milli) = (
        ms / 3_600_000,
        (ms / 60_000) % 60,
        (ms / 1000) % 60,
        ms % 1000,
    );
    let secs = format!("{s}{}{milli:03} {}", ui.decimal_sep(), ui.unit_s());
    match (h, m) {
        (0, 0) => secs,
        (0, m) => format!("{m} {} {secs}", ui.unit_min()),
        (h, m) => format!("{h} {} {m} {} {secs}", ui.unit_h(), ui.unit_min()),
    }
}

/// A setting's duration, short: `12 h`, `1 min`, `1.5 s` (to a tenth), `200 ms`.
/// One `format!` at the end: a branch each cost WebAssembly.
pub fn short_duration(ui: &Ui, t: Millis) -> String {
    let ms = t.0;
    let (n, unit) = if ms >= 60_000 && ms.is_multiple_of(3_600_000) {
        ((ms / 3_600_000).to_string(), ui.unit_h())
    } else if ms >= 60_000 && ms.is_multiple_of(60_000) {
        ((ms / 60_000).to_string(), ui.unit_min())
    } else if ms < 1000 {
        (ms.to_string(), ui.unit_ms())
    } else {
        let tenth = (ms % 1000) / 100;
        let s = (ms / 1000).to_string();
        let n = if tenth == 0 {
            s
        } else {
            s + ui.decimal_sep() + &tenth.to_string()
        };
        (n, ui.unit_s())
    };
    format!("{n} {unit}")
}

/// Why a command was refused, in the reader's language (the core's `Display` of
/// `CommandError` is English, for its own text trace); `s` names its nodes.
pub fn refusal(ui: &Ui, s: &Scenario, e: &CommandError) -> String {
    let one = |t: Template<1>, a: &str| fill(t, &[a]);
    match e {
        CommandError::NoSuchMessage(m) => one(ui.cmd_no_message(), &m.0.to_string()),
        CommandError::NotCrashable(n) => one(ui.cmd_not_crashable(), &node_name(ui, s, *n)),
        CommandError::AlreadyDown(n) => one(ui.cmd_already_down(), &node_name(ui, s, *n)),
        CommandError::AlreadyUp(n) => one(ui.cmd_already_up(), &node_name(ui, s, *n)),
        CommandError::BadCount(c) => count(
            ui.cmd_bad_count(),
            *c as usize,
            &[
                &Command::PARALLEL.start().to_string(),
                &Command::PARALLEL.end().to_string(),
            ],
        ),
        CommandError::NoClient => ui.cmd_no_client().into(),
        CommandError::BadDuration(d) => one(ui.cmd_bad_duration(), &duration(ui, *d)),
        CommandError::NoAccount => ui.cmd_no_account().into(),
        CommandError::NothingToLose => ui.cmd_nothing_to_lose().into(),
        CommandError::BeyondTheEnd(k) => one(ui.cmd_beyond_end(), &k.to_string()),
    }
}

/// A node's name in the reader's language, as scenario `s` uses it: a payment's
/// API and ledger, or an API and a database (`Scenario::takes_payments`).
pub fn node_name(ui: &Ui, s: &Scenario, n: NodeId) -> String {
    let pay = s.takes_payments();
    match n {
        NodeId::Client => ui.node_mobile_app().into(),
        // Not a payment: just an API, as the diagram's lane names it.
        NodeId::Api(i) => fill(
            if pay {
                ui.node_api_instance()
            } else {
                ui.short_api()
            },
            &[&((b'A' + i) as char).to_string()],
        ),
        NodeId::Redis => ui.node_redis().into(),
        NodeId::Postgres if pay => ui.node_postgres().into(),
        NodeId::Postgres => ui.node_database().into(),
        NodeId::Processor => ui.node_processor().into(),
        NodeId::Broker => ui.node_kafka().into(),
        NodeId::Consumer => ui.node_consumer().into(),
        NodeId::Mail => ui.node_mail().into(),
        NodeId::Reconciler => ui.node_reconciler().into(),
    }
}

/// A short node name for the diagram lanes.
pub fn node_short(ui: &Ui, n: NodeId) -> String {
    match n {
        NodeId::Client => ui.short_client().into(),
        NodeId::Api(i) => fill(ui.short_api(), &[&((b'A' + i) as char).to_string()]),
        NodeId::Redis => "Redis".into(),
        NodeId::Postgres => "Postgres".into(),
        NodeId::Processor => ui.short_processor().into(),
        NodeId::Broker => "Kafka".into(),
        NodeId::Consumer => ui.node_consumer().into(),
        NodeId::Mail => "Mail".into(),
        NodeId::Reconciler => ui.short_reconciler().into(),
    }
}

pub fn invariant_name(ui: &Ui, inv: Invariant) -> &'static str {
    match inv {
        Invariant::AtMostOnceCharge => ui.inv_at_most_once_charge(),
        Invariant::LedgerMatchesCharges => ui.inv_ledger_matches_charges(),
        Invariant::LikesMatchOps => ui.inv_likes_equal_ops(),
        Invariant::BalanceMatches => ui.inv_balance_matches_debits(),
        Invariant::DefiniteAnswer => ui.inv_definite_answer(),
        Invariant::ResponseMatchesRequest => ui.inv_replay_same_request(),
        Invariant::OneReceipt => ui.inv_one_receipt(),
        Invariant::NewerWriteKept => ui.inv_newer_write_kept(),
        Invariant::RefundMade => ui.inv_refund_made(),
        Invariant::AppShowsWhatHappened => ui.inv_app_shows_what_happened(),
    }
}

pub fn phase_text(ui: &Ui, p: Phase) -> &'static str {
    match p {
        Phase::Receive => ui.ph_receive(),
        Phase::CheckKey => ui.ph_check_key(),
        Phase::Claim => ui.ph_claim(),
        Phase::Lookup => ui.ph_lookup(),
        Phase::Takeover => ui.ph_takeover(),
        Phase::Charge => ui.ph_charge(),
        Phase::Begin => ui.ph_begin(),
        Phase::InsertPayment => ui.ph_insert_payment(),
        Phase::FindPayment => ui.ph_find_payment(),
        Phase::CompleteKey => ui.ph_complete_key(),
        Phase::Commit => ui.ph_commit(),
        Phase::StoreResponse => ui.ph_store_response(),
        Phase::Rollback => ui.ph_rollback(),
        Phase::Reply => ui.ph_reply(),
        Phase::UpdateRow => ui.ph_update_row(),
        Phase::ReadAccount => ui.ph_read_account(),
        Phase::InsertOp => ui.ph_insert_op(),
        Phase::Increment => ui.ph_increment(),
        Phase::UpdateStatus => ui.ph_update_status(),
        Phase::ClaimOrder => ui.ph_claim_order(),
        Phase::ReadOrder => ui.ph_read_order(),
        Phase::MarkPaid => ui.ph_mark_paid(),
        Phase::Publish => ui.ph_publish(),
        Phase::Consume => ui.ph_consume(),
        Phase::Dedup => ui.ph_dedup(),
        Phase::Apply => ui.ph_apply(),
        Phase::CommitOffset => ui.ph_commit_offset(),
        Phase::Outbox => ui.ph_outbox(),
        Phase::SendEmail => ui.ph_send_email(),
        Phase::Poll => ui.ph_poll(),
        Phase::MarkSent => ui.ph_mark_sent(),
        Phase::RelaySend => ui.ph_relay_send(),
        Phase::Status => ui.ph_status(),
        Phase::Reconcile => ui.ph_reconcile(),
        Phase::ListCharges => ui.ph_list_charges(),
        Phase::MatchLedger => ui.ph_match_ledger(),
    }
}

/// What the client believes, in words.
pub fn belief_text(ui: &Ui, b: &Belief) -> String {
    match b {
        Belief::NotStarted => ui.belief_not_started().into(),
        Belief::Waiting => ui.belief_waiting().into(),
        Belief::Unknown => ui.belief_unknown().into(),
        Belief::Succeeded(what) => format!("{} ({what})", ui.belief_succeeded()),
        Belief::Failed(status, code) => format!("{} ({status} {code})", ui.belief_failed()),
        Belief::Conflict => ui.belief_conflict().into(),
        Belief::Reread { balance, version } => fill(
            ui.belief_reread(),
            &[&balance.to_string(), &version.to_string()],
        ),
        Belief::ChangedElsewhere => ui.belief_elsewhere().into(),
        Belief::GaveUp => ui.belief_gave_up().into(),
    }
}

/// The longest reply the words repeat (`INSERT 0 1`, `OK`, `(nil)`, a payment id); a
/// longer one, a stored JSON answer, is left to the command's box under the words,
/// where it does not push the playback controls down a phone's screen.
const REPLY_IN_WORDS: usize = 24;

/// "`store` runs the command below", with its reply where the reply is short.
fn executed(ui: &Ui, store: &str, reply: &str) -> String {
    if reply.chars().count() > REPLY_IN_WORDS {
        fill(ui.n_executed_long(), &[store])
    } else {
        fill(ui.n_executed(), &[store, reply])
    }
}

/// The sentences that explain a step, most important first. `w` is the world
/// after the step: its scenario names the nodes, and it still holds the
/// messages the step sent (a call to the processor of money going back is a
/// refund).
pub fn narrate(ui: &Ui, w: &World, rec: &StepRecord) -> Vec<String> {
    let s = &*w.scenario;
    let refund = rec.happenings.iter().any(|h| match h {
        Happening::Sent { msg, .. } => w
            .msgs
            .get(msg)
            .is_some_and(|m| matches!(m.payload, Payload::Charge { amount, .. } if amount < 0)),
        _ => false,
    });
    let mut out = Vec::new();
    if let Cause::Command(c) = &rec.cause {
        match c {
            Command::LoseNextResponse => out.push(ui.n_cmd_lose_next().to_string()),
            Command::Lose(m) => out.push(fill(ui.n_cmd_lose(), &[&m.0.to_string()])),
            Command::ParallelRetries(n) => out.push(count(ui.n_cmd_parallel(), *n as usize, &[])),
            // Told from the trace below, whoever sent it: the reader or the script.
            Command::ExternalDebit { .. } | Command::ExternalPut => {}
            Command::Crash(_) | Command::Restart(_) | Command::AdvanceClock(_) => {}
        }
    }
    let mut retry_said = false;
    for h in &rec.happenings {
        let line = match h {
            Happening::Decisive => Some(ui.n_decisive().to_string()),
            Happening::Command(Command::ExternalDebit { amount }) => {
                Some(fill(ui.n_cmd_external(), &[&money(ui, *amount)]))
            }
            Happening::Command(Command::ExternalPut) => {
                Some(fill(ui.n_cmd_external_put(), &[EMAILS[2]]))
            }
            Happening::ClientSent { attempt, key, .. } => {
                let key = key.clone().unwrap_or_else(|| ui.n_no_key().into());
                if *attempt > 1 && !retry_said && !matches!(rec.cause, Cause::Command(_)) {
                    retry_said = true;
                    Some(fill(ui.n_client_retry(), &[&attempt.to_string(), &key]))
                } else if *attempt == 1 {
                    Some(fill(ui.n_client_sends(), &[&key]))
                } else {
                    None
                }
            }
            Happening::ClientTimeout { attempt, .. } => {
                Some(fill(ui.n_client_timeout(), &[&attempt.to_string()]))
            }
            Happening::ClientChecks { .. } => Some(ui.n_client_checks().to_string()),
            Happening::Lost {
                label,
                cause: LossCause::NodeDown,
                ..
            } => Some(fill(ui.n_lost_down(), &[label])),
            Happening::Lost {
                label,
                to,
                cause: LossCause::ConnClosed,
                ..
            } => Some(fill(
                if *to == NodeId::Client {
                    ui.n_lost_closed()
                } else {
                    ui.n_lost_conn()
                },
                &[label],
            )),
            Happening::Lost { label, to, .. } => {
                if *to == NodeId::Client {
                    Some(fill(ui.n_lost_ack(), &[label]))
                } else {
                    Some(fill(ui.n_lost(), &[label]))
                }
            }
            Happening::Delivered {
                to: NodeId::Client,
                label,
                ..
            } => Some(fill(ui.n_client_got(), &[label])),
            Happening::Duplicated { .. } => Some(ui.n_duplicated().to_string()),
            Happening::Phase { node, phase, .. } if *phase != Phase::Reply => Some(format!(
                "{} — {}.",
                node_name(ui, s, *node),
                match phase {
                    Phase::Charge if refund => ui.ph_refund(),
                    _ => phase_text(ui, *phase),
                }
            )),
            Happening::SqlWaits { on, .. } => Some(fill(ui.n_sql_waits(), &[&on.to_string()])),
            // The statement itself is shown under the narration; say that it ran.
            Happening::Sql { outcome, .. } => Some(executed(ui, "Postgres", &outcome.to_string())),
            Happening::Redis { reply, .. } => Some(executed(ui, "Redis", &reply.to_string())),
            Happening::TxRollback { tx, crash: true } => {
                Some(fill(ui.n_rollback_crash(), &[&tx.to_string()]))
            }
            Happening::Charged {
                charge,
                amount,
                replayed: false,
                ..
            } => Some(fill(
                if *amount < 0 {
                    ui.n_refunded()
                } else {
                    ui.n_charged()
                },
                &[&money(ui, amount.abs()), charge],
            )),
            Happening::Charged {
                charge,
                key,
                replayed: true,
                ..
            } => Some(fill(
                ui.n_charge_replayed(),
                &[key.as_deref().unwrap_or(""), charge],
            )),
            Happening::Responded {
                node,
                status,
                replayed,
                error,
            } => {
                let why = match (status, replayed) {
                    (_, true) => ui.n_status_replay(),
                    (400, _) => ui.n_status_400(),
                    // A conditional write's 409 is the same refusal as a 412.
                    (409, _) if *error == Some(ErrorCode::VersionMismatch) => ui.n_status_412(),
                    (409, _) => ui.n_status_409(),
                    (422, _) => ui.n_status_422(),
                    (412, _) => ui.n_status_412(),
                    (500..=599, _) => ui.n_status_5xx(),
                    _ => ui.n_status_ok(),
                };
                Some(fill(
                    ui.n_respond(),
                    &[&node_name(ui, s, *node), &status.to_string(), why],
                ))
            }
            Happening::Belief { belief, .. } if !matches!(belief, Belief::Waiting) => {
                Some(fill(ui.n_belief(), &[&belief_text(ui, belief)]))
            }
            Happening::Crashed(n) => Some(fill(ui.n_crashed(), &[&node_name(ui, s, *n)])),
            Happening::Restarted(n) => Some(fill(ui.n_restarted(), &[&node_name(ui, s, *n)])),
            Happening::ClockAdvanced(d) => Some(fill(ui.n_clock(), &[&duration(ui, *d)])),
            Happening::KeyExpired(k) => Some(fill(ui.n_key_expired(), &[k])),
            Happening::Appended {
                msg_id,
                duplicate: true,
                ..
            } => Some(fill(ui.n_append_dup(), &[msg_id])),
            Happening::Appended { msg_id, offset, .. } => {
                Some(fill(ui.n_appended(), &[msg_id, &offset.to_string()]))
            }
            Happening::OffsetCommitted(o) => Some(fill(ui.n_offset(), &[&o.to_string()])),
            Happening::SessionExpired { offset } => {
                let after = short_duration(ui, SESSION_TIMEOUT);
                Some(fill(ui.n_session_expired(), &[&offset.to_string(), &after]))
            }
            Happening::StatementTimedOut { offset } => {
                let after = short_duration(ui, STATEMENT_TIMEOUT);
                Some(fill(
                    ui.n_statement_timeout(),
                    &[&offset.to_string(), &after],
                ))
            }
            Happening::Emailed { payment, duplicate } => Some(fill(
                if *duplicate {
                    ui.n_email_dup()
                } else {
                    ui.n_emailed()
                },
                &[payment],
            )),
            Happening::Invariant { inv, holds } => {
                let t = if *holds {
                    ui.n_invariant_restored()
                } else {
                    ui.n_invariant_broken()
                };
                Some(fill(t, &[invariant_name(ui, *inv)]))
            }
            _ => None,
        };
        if let Some(line) = line {
            if !out.contains(&line) {
                out.push(line);
            }
        }
    }
    if out.is_empty() {
        out.push(ui.n_nothing().to_string());
    }
    out
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_setting_reads_as_short_as_it_is_exact() {
        let ui = ui(Lang::En);
        let d = |ms| short_duration(ui, Millis(ms));
        assert_eq!(d(Millis::hours(12).0), "12 h");
        assert_eq!(d(60_000), "1 min");
        assert_eq!(d(3_000), "3 s");
        assert_eq!(d(1_500), "1.5 s");
        assert_eq!(d(200), "200 ms");
        assert_eq!(d(0), "0 ms");
        assert_eq!(
            short_duration(crate::lesson::ui(Lang::Ru), Millis(1_500)),
            "1,5 с"
        );
    }

    use super::*;
    use crate::lesson::{ui, Lang};
    use idem_sim::db::{Outcome, Tag};
    use idem_sim::scenario::{self, Toggle};
    use idem_sim::{Config, Run};

    fn has_cyrillic(s: &str) -> bool {
        s.chars().any(|c| ('\u{400}'..='\u{4FF}').contains(&c))
    }

    /// Every step of every scenario, with every toggle flipped, narrates in
    /// both languages: English without Cyrillic, Russian with it.
    #[test]
    fn every_step_narrates_in_both_languages() {
        for s in scenario::all() {
            let mut configs = vec![s.default_toggles(), s.defended(), s.undefended()];
            for (t, _) in s.toggles {
                configs.push(s.default_toggles().with(*t, !s.default_toggles().has(*t)));
            }
            for toggles in configs {
                let run = Run::new(
                    s.clone(),
                    Config {
                        toggles,
                        seed: 3,
                        random: Default::default(),
                    },
                );
                for rec in &run.trace {
                    let w = run.state_at(rec.index);
                    let en = narrate(ui(Lang::En), &w, rec);
                    let ru = narrate(ui(Lang::Ru), &w, rec);
                    assert!(!en.is_empty() && !ru.is_empty());
                    for line in &en {
                        assert!(!has_cyrillic(line), "{}: {line}", s.id);
                        assert!(!line.contains("{}"), "{}: unfilled {line}", s.id);
                    }
                    assert!(ru.iter().any(|l| has_cyrillic(l)), "{}: {ru:?}", s.id);
                }
            }
        }
        let _ = Toggle::ALL;
    }

    #[test]
    fn the_lost_ack_and_the_second_charge_are_told() {
        let s = scenario::by_id("naive-post").unwrap();
        let run = Run::new(s.clone(), Config::defaults(&s, 1));
        let ui = ui(Lang::En);
        let all: Vec<String> = run
            .trace
            .iter()
            .flat_map(|r| narrate(ui, &run.state_at(r.index), r))
            .collect();
        assert!(
            all.iter()
                .any(|l| l.contains("201 pay_1")
                    && l.contains(&fill(ui.n_lost_ack(), &["201 pay_1"])))
        );
        assert_eq!(
            all.iter()
                .filter(|l| l.starts_with(&fill(ui.n_charged(), &["100.00", ""])[..20]))
                .count(),
            2
        );
        assert!(all.contains(&fill(
            ui.n_invariant_broken(),
            &[ui.inv_at_most_once_charge()]
        )));
    }

    /// The first step of `id`'s default run (seed 1) with a happening that `is`,
    /// and the world after it.
    fn first_step(id: &str, is: impl Fn(&Happening) -> bool) -> (World, StepRecord) {
        let s = scenario::by_id(id).unwrap();
        let run = Run::new(s.clone(), Config::defaults(&s, 1));
        let rec = run
            .trace
            .iter()
            .find(|r| r.happenings.iter().any(&is))
            .cloned()
            .unwrap_or_else(|| panic!("{id}: no such step"));
        (run.state_at(rec.index), rec)
    }

    /// Regression: the step where Postgres ran `INSERT … → INSERT 0 1` said "A message
    /// arrives; nothing else changes".
    #[test]
    fn a_step_that_runs_a_statement_says_so() {
        let (w, rec) = &first_step("naive-post", |h| {
            matches!(
                h,
                Happening::Sql {
                    outcome: Outcome::Ok {
                        tag: Tag::Insert(1),
                        ..
                    },
                    ..
                }
            )
        });
        for lang in crate::lesson::Lang::ALL {
            let ui = ui(lang);
            let lines = narrate(ui, w, rec);
            assert!(!lines.contains(&ui.n_nothing().to_string()), "{lines:?}");
            assert!(
                lines.contains(&fill(ui.n_executed(), &["Postgres", "INSERT 0 1"])),
                "{lines:?}"
            );
        }
    }

    /// Regression: on a phone, "Redis runs the command below: "{"status":201,…}"" ran
    /// past the narration's box and pushed the playback controls under the outcome bar.
    /// A stored JSON answer is left to the command's box; a short reply stays in words.
    #[test]
    fn a_stored_json_answer_is_left_to_the_command_box() {
        let long = |h: &Happening| matches!(h, Happening::Redis { reply, .. } if reply.to_string().starts_with("\"{"));
        let (w, rec) = &first_step("idempotency-key", long);
        for lang in crate::lesson::Lang::ALL {
            let ui = ui(lang);
            let lines = narrate(ui, w, rec);
            assert!(
                lines.contains(&fill(ui.n_executed_long(), &["Redis"])),
                "{lines:?}"
            );
            assert!(!lines.iter().any(|l| l.contains("status")), "{lines:?}");
        }
        let (w, rec) = &first_step("idempotency-key", |h| {
            matches!(h, Happening::Redis { .. }) && !long(h)
        });
        let lines = narrate(ui(crate::lesson::Lang::En), w, rec);
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("Redis runs the command below and answers ")),
            "{lines:?}"
        );
    }

    /// key-scope's refund (a charge of -$100) is narrated as a refund of $100: the
    /// processor's step, and the API's call to it (it said "to charge the card").
    #[test]
    fn a_refund_is_narrated_as_a_refund() {
        let s = scenario::by_id("key-scope").unwrap();
        let mut config = Config::defaults(&s, 1);
        config.toggles = config.toggles.with(Toggle::ScopedKey, true);
        let run = Run::new(s.clone(), config);
        let rec = run
            .trace
            .iter()
            .find(|r| {
                r.happenings.iter().any(|h| {
                    matches!(h, Happening::Charged { amount, replayed: false, .. } if *amount < 0)
                })
            })
            .expect("the scoped refund reaches the processor");
        let calls: Vec<&StepRecord> = run
            .trace
            .iter()
            .filter(|r| {
                r.happenings.iter().any(|h| {
                    matches!(
                        h,
                        Happening::Phase {
                            phase: Phase::Charge,
                            ..
                        }
                    )
                })
            })
            .collect();
        assert_eq!(calls.len(), 2, "the payment's call, then the refund's");
        for lang in crate::lesson::Lang::ALL {
            let ui = ui(lang);
            let said = |r: &StepRecord| narrate(ui, &run.state_at(r.index), r).join(" ");
            assert!(
                said(calls[0]).contains(ui.ph_charge()),
                "{}",
                said(calls[0])
            );
            assert!(
                said(calls[1]).contains(ui.ph_refund()),
                "{}",
                said(calls[1])
            );
            assert!(
                !said(calls[1]).contains(ui.ph_charge()),
                "{}",
                said(calls[1])
            );
            let lines = narrate(ui, &run.state_at(rec.index), rec);
            assert!(
                lines
                    .iter()
                    .any(|l| l.starts_with(&fill(ui.n_refunded(), &["100.00", ""])[..16])),
                "{lines:?}"
            );
            assert!(!lines.iter().any(|l| l.contains("-100")), "{lines:?}");
        }
    }

    /// Regression: a refused command's reason was the core's English text, inside the
    /// Russian notice ("Так нельзя: the run is over: …").
    #[test]
    fn a_refused_command_is_explained_in_the_readers_language() {
        use idem_sim::MsgId;
        let all = [
            CommandError::NoSuchMessage(MsgId(7)),
            CommandError::NotCrashable(NodeId::Redis),
            CommandError::AlreadyDown(NodeId::Api(0)),
            CommandError::AlreadyUp(NodeId::Postgres),
            CommandError::BadCount(11),
            CommandError::NoClient,
            CommandError::BadDuration(Millis::hours(24 * 31)),
            CommandError::NoAccount,
            CommandError::NothingToLose,
            CommandError::BeyondTheEnd(99),
        ];
        let ru = ui(Lang::Ru);
        let s = &scenario::by_id("naive-post").unwrap();
        for e in &all {
            let text = refusal(ru, s, e);
            // Latin letters only in a node's own name ("API A"), none in the sentence.
            let names: String = [NodeId::Redis, NodeId::Api(0), NodeId::Postgres]
                .iter()
                .fold(text.clone(), |t, n| t.replace(&node_name(ru, s, *n), ""));
            assert!(
                !names.chars().any(|c| c.is_ascii_alphabetic()),
                "{e:?}: {text}"
            );
            assert_ne!(text, refusal(ui(Lang::En), s, e), "{e:?}");
        }
        assert_eq!(
            refusal(ui(Lang::En), s, &CommandError::BadCount(11)),
            "11 parallel retries: choose 2 to 10"
        );
    }

    /// Regression: late-put's profile, conditional-update's account and
    /// counter-increment's likes were narrated as "Payment API A" and the
    /// "Payments Ledger": a scenario that takes no payment has an API and a
    /// database; a payment keeps its payment API and ledger.
    #[test]
    fn only_a_payment_has_a_payment_api_and_ledger() {
        for s in scenario::all() {
            let pay = s.takes_payments();
            for lang in Lang::ALL {
                let ui = ui(lang);
                let api = node_name(ui, s, NodeId::Api(0));
                let db = node_name(ui, s, NodeId::Postgres);
                assert_eq!(api == fill(ui.node_api_instance(), &["A"]), pay, "{}", s.id);
                assert_eq!(db == ui.node_postgres(), pay, "{}", s.id);
                assert_eq!(api == fill(ui.short_api(), &["A"]), !pay, "{}", s.id);
                assert_eq!(db == ui.node_database(), !pay, "{}", s.id);
            }
        }
        let s = scenario::by_id("late-put").unwrap();
        let run = Run::new(s.clone(), Config::defaults(&s, 1));
        let said: Vec<String> = run
            .trace
            .iter()
            .flat_map(|r| narrate(ui(Lang::En), &run.state_at(r.index), r))
            .collect();
        assert!(said.iter().any(|l| l.starts_with("API A — ")), "{said:?}");
        assert!(!said.iter().any(|l| l.contains("Payment")), "{said:?}");
    }

    /// Regression: conditional-update's `409 version_mismatch` was narrated as "a
    /// request with this key is still in progress"; it is the version refusal.
    #[test]
    fn a_version_mismatch_is_not_a_key_in_progress() {
        let (w, rec) = &first_step("conditional-update", |h| {
            matches!(
                h,
                Happening::Responded {
                    status: 409,
                    error: Some(ErrorCode::VersionMismatch),
                    ..
                }
            )
        });
        for lang in crate::lesson::Lang::ALL {
            let ui = ui(lang);
            let said = narrate(ui, w, rec).join(" ");
            assert!(said.contains(ui.n_status_412()), "{said}");
            assert!(!said.contains(ui.n_status_409()), "{said}");
        }
    }

    /// Regression: receipt-email's 503 to the attempt the app had timed out (its
    /// handler waited 3 s for the mail service) was "The app receives …"; the
    /// app closed that connection, and the answer is dropped unread.
    #[test]
    fn an_answer_to_a_timed_out_attempt_is_never_read() {
        let (w, rec) = &first_step("receipt-email", |h| {
            matches!(
                h,
                Happening::Lost {
                    to: NodeId::Client,
                    cause: LossCause::ConnClosed,
                    ..
                }
            )
        });
        for lang in crate::lesson::Lang::ALL {
            let ui = ui(lang);
            let lines = narrate(ui, w, rec);
            let label = "503 upstream_timeout";
            assert!(
                lines.contains(&fill(ui.n_lost_closed(), &[label])),
                "{lines:?}"
            );
            assert!(!lines.contains(&fill(ui.n_client_got(), &[label])));
        }
    }

    /// Regression: in receipt-email's outbox variant the relay's send was told with
    /// the handler's words ("asks the mail service to send the receipt"), as if the
    /// request's handler emailed it; the relay's steps are told as the relay's.
    #[test]
    fn the_relays_send_is_not_the_handlers() {
        let s = scenario::by_id("receipt-email").unwrap();
        let sends = |outbox: bool| {
            let mut config = Config::defaults(&s, 1);
            config.toggles = config.toggles.with(Toggle::Outbox, outbox);
            let run = Run::new(s.clone(), config);
            run.trace
                .iter()
                .find(|r| {
                    r.sent().any(|h| {
                        matches!(
                            h,
                            Happening::Sent {
                                to: NodeId::Mail,
                                ..
                            }
                        )
                    })
                })
                .map(|rec| (run.state_at(rec.index), rec.clone()))
                .expect("a receipt is sent")
        };
        let (handler, relay) = (sends(false), sends(true));
        for lang in crate::lesson::Lang::ALL {
            let ui = ui(lang);
            let (h, r) = (
                narrate(ui, &handler.0, &handler.1),
                narrate(ui, &relay.0, &relay.1),
            );
            assert!(
                !r.is_empty() && r.iter().all(|l| !h.contains(l)),
                "{h:?} {r:?}"
            );
            for p in [Phase::Poll, Phase::RelaySend, Phase::MarkSent] {
                assert!(phase_text(ui, p)
                    .starts_with(phase_text(ui, Phase::Poll).split(':').next().unwrap()));
            }
        }
    }

    /// Regression: late-put's web version writes by the scenario's script, not by
    /// a command of the reader's, and its step told only that Postgres ran an
    /// UPDATE: another writer's write is told whoever sent it.
    #[test]
    fn the_scripted_web_write_is_told() {
        let (w, rec) = &first_step("late-put", |h| {
            matches!(h, Happening::Command(Command::ExternalPut))
        });
        assert!(!matches!(rec.cause, Cause::Command(_)));
        for lang in crate::lesson::Lang::ALL {
            let ui = ui(lang);
            let lines = narrate(ui, w, rec);
            let told = fill(ui.n_cmd_external_put(), &[EMAILS[2]]);
            assert_eq!(lines.iter().filter(|l| **l == told).count(), 1, "{lines:?}");
        }
    }

    #[test]
    fn fill_replaces_in_order() {
        assert_eq!(fill(Template::new("{} of {}"), &["3", "9"]), "3 of 9");
    }
}
