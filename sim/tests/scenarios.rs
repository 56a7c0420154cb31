//! One test per scenario of the seeds (and per important toggle or variant):
//! each reproduces the narrative and asserts the exact end state, the client's
//! final belief, every invariant's final status, and the step at which an
//! invariant breaks, located by what the narrative says happens there (the
//! second fresh charge, the crash, the second committed debit…), never by a
//! hard-coded step number. Snapshot tests of the text trace come last.
//!
//! Every run here uses seed 1 and no random faults: the scenario's own
//! default fault (the lost ack, the scripted crash…) drives the story.

use idem_sim::http::ErrorCode;
use idem_sim::scenario::{self, Handler, OpSpec, Scenario, Toggle};
use idem_sim::trace::{Cause, Happening};
use idem_sim::world::Belief;
use idem_sim::{Command, Config, Invariant, Millis, NodeId, Run};
use std::collections::BTreeSet;

const DAY_MS: u64 = 86_400_000;
const WEEK_MS: u64 = 7 * DAY_MS;

// ---------------------------------------------------------------- helpers

/// Runs scenario `id` at seed 1 with its default toggles changed by `set`.
fn run(id: &str, set: &[(Toggle, bool)]) -> Run {
    let s = scenario::by_id(id).unwrap_or_else(|| panic!("no scenario {id}"));
    run_scenario(s, set)
}

fn run_scenario(s: Scenario, set: &[(Toggle, bool)]) -> Run {
    for (t, _) in set {
        assert!(s.offers(*t), "{} does not offer {t:?}", s.id);
    }
    let toggles = set
        .iter()
        .fold(s.default_toggles(), |acc, (t, on)| acc.with(*t, *on));
    Run::new(
        s,
        Config {
            toggles,
            seed: 1,
            random: Default::default(),
        },
    )
}

/// The step whose happenings contain the `n`-th (1-based) happening that satisfies `f`.
fn nth_step(run: &Run, n: usize, f: impl Fn(&Happening) -> bool) -> usize {
    run.trace
        .iter()
        .flat_map(|r| r.happenings.iter().map(move |h| (r.index, h)))
        .filter(|(_, h)| f(h))
        .nth(n - 1)
        .map(|(i, _)| i)
        .unwrap_or_else(|| panic!("fewer than {n} matching happenings in\n{}", run.text()))
}

fn fresh_charge(h: &Happening) -> bool {
    matches!(
        h,
        Happening::Charged {
            replayed: false,
            ..
        }
    )
}

fn crashed(node: NodeId) -> impl Fn(&Happening) -> bool {
    move |h| *h == Happening::Crashed(node)
}

/// A `COMMIT` that made a change to `table` visible.
fn commit_touching(table: &'static str) -> impl Fn(&Happening) -> bool {
    move |h| {
        matches!(h, Happening::Sql { stmt: sql, outcome, touched, .. }
            if sql.to_string() == "COMMIT" && outcome.to_string() == "COMMIT" && touched.iter().any(|(t, _)| *t == table))
    }
}

/// Every SQL statement starting with `prefix`, as `sql → outcome`, in order.
fn sql_log(run: &Run, prefix: &str) -> Vec<String> {
    happenings(run)
        .filter_map(|h| match h {
            Happening::Sql {
                stmt: sql, outcome, ..
            } if sql.to_string().starts_with(prefix) => Some(format!("{sql} → {outcome}")),
            _ => None,
        })
        .collect()
}

/// Every Redis command, as `cmd → reply`, in order.
fn redis_log(run: &Run) -> Vec<String> {
    happenings(run)
        .filter_map(|h| match h {
            Happening::Redis { cmd, reply } => Some(format!("{cmd} → {reply}")),
            _ => None,
        })
        .collect()
}

/// Labels of the responses that reached the client, in order.
fn client_got(run: &Run) -> Vec<String> {
    got(run, NodeId::Client)
}

/// Labels of the messages that reached `node`, in order.
fn got(run: &Run, node: NodeId) -> Vec<String> {
    happenings(run)
        .filter_map(|h| match h {
            Happening::Delivered { to, label, .. } if *to == node => Some(label.clone()),
            _ => None,
        })
        .collect()
}

/// Labels of the responses to the client that were lost, in order.
fn client_lost(run: &Run) -> Vec<String> {
    happenings(run)
        .filter_map(|h| match h {
            Happening::Lost {
                to: NodeId::Client,
                label,
                ..
            } => Some(label.clone()),
            _ => None,
        })
        .collect()
}

/// The keys the client sent, attempt by attempt.
fn keys_sent(run: &Run) -> Vec<Option<String>> {
    happenings(run)
        .filter_map(|h| match h {
            Happening::ClientSent { key, .. } => Some(key.clone()),
            _ => None,
        })
        .collect()
}

fn happenings(run: &Run) -> impl Iterator<Item = &Happening> {
    run.trace.iter().flat_map(|r| r.happenings.iter())
}

fn ok(p: &str) -> Belief {
    Belief::Succeeded(p.into())
}

/// The end state a narrative promises.
#[derive(Default)]
struct Expect {
    /// Charges at the card processor (each a distinct charge id).
    charges: usize,
    /// What the customer paid in all.
    total: i64,
    /// Committed ledger rows (`payments.id`), in order.
    ledger: &'static [&'static str],
    /// The Redis keys left, each with the TTL (ms) it was last written with.
    redis: &'static [(&'static str, u64)],
    /// The client's final belief, per operation.
    beliefs: Vec<Belief>,
    /// Invariants that break at this step and are still broken at the end.
    broken: Vec<(Invariant, usize)>,
    /// Invariants that break at this step and hold again at the end.
    recovered: Vec<(Invariant, usize)>,
}

/// Asserts `e` on the end of `run`; every invariant of the scenario not named
/// in `broken` or `recovered` must never break.
fn check(run: &Run, e: Expect) {
    let end = run.end();
    let why = || format!("scenario {}\n{}", run.scenario.id, run.text());
    assert!(
        end.clone().step().is_empty(),
        "the run did not end: {}",
        why()
    );
    assert_eq!(end.processor.charges.len(), e.charges, "charges; {}", why());
    let ids: BTreeSet<&str> = end
        .processor
        .charges
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(ids.len(), e.charges, "charge ids are distinct");
    assert_eq!(end.processor.total(), e.total, "customer total; {}", why());
    let ledger: Vec<String> = end
        .db
        .table("payments")
        .map(|t| t.committed_rows().map(|r| r[0].to_string()).collect())
        .unwrap_or_default();
    assert_eq!(ledger, e.ledger, "committed ledger rows; {}", why());

    // Redis: exactly these keys, each expiring TTL after the SET that last wrote it.
    let keys: Vec<&str> = end.redis.keys.keys().map(String::as_str).collect();
    let want: Vec<&str> = e.redis.iter().map(|(k, _)| *k).collect();
    assert_eq!(keys, want, "Redis keys; {}", why());
    for (k, ttl) in e.redis {
        let set = run
            .trace
            .iter()
            .rev()
            .find(|r| {
                r.happenings.iter().any(|h| {
                    matches!(h, Happening::Redis { cmd: cmd @ idem_sim::redis::Cmd::Set { .. }, reply }
                    if cmd.key() == *k && reply.to_string() == "OK")
                })
            })
            .unwrap_or_else(|| panic!("no SET of {k}"));
        let cmd = set.command().expect("a command").0;
        assert!(cmd.ends_with(&format!(" PX {ttl}")), "{cmd}");
        assert_eq!(
            end.redis.keys[*k].expires_at,
            Some(set.time + Millis(*ttl)),
            "{k} expires {ttl} ms after step {}",
            set.index
        );
        let elapsed = end.now - set.time;
        assert_eq!(
            end.redis.ttl(k, end.now),
            Some(Millis(ttl - elapsed.0)),
            "TTL of {k} at the end: {ttl} ms minus the {elapsed} elapsed"
        );
    }

    let beliefs: Vec<Belief> = end.client.ops.iter().map(|o| o.belief.clone()).collect();
    assert_eq!(beliefs, e.beliefs, "client beliefs; {}", why());

    for inv in run.scenario.invariants {
        let broken = e.broken.iter().find(|(i, _)| i == inv).map(|(_, s)| *s);
        let recovered = e.recovered.iter().find(|(i, _)| i == inv).map(|(_, s)| *s);
        let first = run.first_violation(*inv);
        assert_eq!(
            first,
            broken.or(recovered),
            "{inv:?} first violation; {}",
            why()
        );
        assert_eq!(
            end.invariants.get(inv).copied(),
            Some(broken.is_none()),
            "{inv:?} at the end; {}",
            why()
        );
    }
    for (inv, _) in e.broken.iter().chain(&e.recovered) {
        assert!(
            run.scenario.invariants.contains(inv),
            "{} does not watch {inv:?}",
            run.scenario.id
        );
    }
}

fn account(run: &Run) -> (i64, i64) {
    let end = run.end();
    (
        end.balance().expect("balance"),
        end.observables().version.expect("version"),
    )
}

fn committed(run: &Run, table: &str) -> Vec<Vec<String>> {
    run.end()
        .db
        .table(table)
        .unwrap_or_else(|| panic!("no table {table}"))
        .committed_rows()
        .map(|r| r.iter().map(ToString::to_string).collect())
        .collect()
}

// ---------------------------------------------------------------- 1. naive-post

#[test]
fn naive_post_charges_twice_after_the_lost_ack() {
    let r = run("naive-post", &[]);
    check(
        &r,
        Expect {
            charges: 2,
            total: 200,
            ledger: &["pay_1", "pay_2"],
            beliefs: vec![ok("pay_2")],
            broken: vec![(Invariant::AtMostOnceCharge, nth_step(&r, 2, fresh_charge))],
            ..Expect::default()
        },
    );
    // No key at all; the ack of the first charge is lost; the retry is a new charge.
    assert_eq!(keys_sent(&r), [None, None]);
    assert_eq!(client_lost(&r), ["201 pay_1"]);
    assert_eq!(client_got(&r), ["201 pay_2"]);
    // The retry reaches the API after the client's timeout, then the second charge follows.
    let timeout = nth_step(&r, 1, |h| matches!(h, Happening::ClientTimeout { .. }));
    let decisive = r.decisive_step().expect("the retry arrives");
    assert!(timeout < decisive && decisive < nth_step(&r, 2, fresh_charge));
    assert!(r.trace[timeout - 1].time >= r.scenario.retry.timeout);
    assert_eq!(
        committed(&r, "payments"),
        [
            ["pay_1", "42", "100", "NULL"],
            ["pay_2", "42", "100", "NULL"]
        ]
    );
}

// ---------------------------------------------------------------- 2. idempotency-key

#[test]
fn idempotency_key_replays_the_stored_response() {
    // Default: the key is claimed atomically with SET NX.
    let r = run("idempotency-key", &[]);
    check(
        &r,
        Expect {
            charges: 1,
            total: 100,
            ledger: &["pay_1"],
            redis: &[("idem:u42:K1", DAY_MS)],
            beliefs: vec![ok("pay_1")],
            ..Expect::default()
        },
    );
    assert_eq!(keys_sent(&r), [Some("K1".into()), Some("K1".into())]);
    assert_eq!(client_lost(&r), ["201 pay_1"]);
    assert_eq!(client_got(&r), ["201 pay_1 (replay)"]);
    let redis = redis_log(&r);
    let stored = r#"'{"status":201,"payment_id":"pay_1","amount":100,"request_hash":"191922c9"}'"#;
    assert_eq!(redis.len(), 4, "{redis:#?}");
    assert!(redis[0].starts_with("SET idem:u42:K1 '{\"status\":\"processing\""));
    // The claim holds a short lease; the stored answer keeps the key for 24 h.
    assert!(redis[0].ends_with(" NX PX 3000 → OK"), "{}", redis[0]);
    assert_eq!(
        redis[1],
        format!("SET idem:u42:K1 {stored} PX 86400000 → OK")
    );
    assert!(redis[2].ends_with(" NX PX 3000 → (nil)"), "{}", redis[2]);
    assert_eq!(
        redis[3],
        format!("GET idem:u42:K1 → \"{}\"", stored.trim_matches('\''))
    );
    // The ledger row carries the key; the key is a UUID v4 made once.
    assert_eq!(committed(&r, "payments"), [["pay_1", "42", "100", "K1"]]);
    let keys = &r.end().client.keys;
    assert_eq!(keys.len(), 1);
    assert_eq!(keys[0].len(), 36);
    assert_eq!(keys[0].as_bytes()[14], b'4');
}

#[test]
fn idempotency_key_as_the_seed_tells_it_get_misses_then_hits() {
    // The seed's wording: "API проверяет Redis: MISS … HIT → cached response".
    let r = run("idempotency-key", &[(Toggle::AtomicClaim, false)]);
    check(
        &r,
        Expect {
            charges: 1,
            total: 100,
            ledger: &["pay_1"],
            redis: &[("idem:u42:K1", DAY_MS)],
            beliefs: vec![ok("pay_1")],
            ..Expect::default()
        },
    );
    let redis = redis_log(&r);
    assert_eq!(redis.len(), 3, "{redis:#?}");
    assert_eq!(redis[0], "GET idem:u42:K1 → (nil)");
    assert!(redis[1].starts_with("SET idem:u42:K1 '{\"status\":201,\"payment_id\":\"pay_1\""));
    assert!(redis[2].starts_with("GET idem:u42:K1 → \"{\"status\":201"));
    // The miss comes before the charge, the hit after the retry, and no charge follows it.
    let hit = nth_step(
        &r,
        2,
        |h| matches!(h, Happening::Redis { cmd, .. } if cmd.to_string().starts_with("GET")),
    );
    assert!(r.trace[hit..]
        .iter()
        .all(|s| !s.happenings.iter().any(fresh_charge)));
    assert_eq!(client_got(&r), ["201 pay_1 (replay)"]);
}

#[test]
fn idempotency_key_with_a_new_key_per_retry_charges_twice() {
    let r = run("idempotency-key", &[(Toggle::NewKeyPerRetry, true)]);
    check(
        &r,
        Expect {
            charges: 2,
            total: 200,
            ledger: &["pay_1", "pay_2"],
            redis: &[("idem:u42:K1", DAY_MS), ("idem:u42:K2", DAY_MS)],
            beliefs: vec![ok("pay_2")],
            broken: vec![(Invariant::AtMostOnceCharge, nth_step(&r, 2, fresh_charge))],
            ..Expect::default()
        },
    );
}

// ------------------------------------- 2b. idempotency-key: what is stored on an error

/// idempotency-key with the processor's answer lost (the handler times out after
/// the charge), under the design `design` of what is stored on an error.
fn timeout_run(design: Option<Toggle>, key_to_processor: bool) -> Run {
    let mut set = vec![
        (Toggle::ProcessorTimeout, true),
        (Toggle::KeyToProcessor, key_to_processor),
    ];
    set.extend(design.map(|t| (t, true)));
    run("idempotency-key", &set)
}

/// The handler's answers with their status and whether they were replays.
fn responses(run: &Run) -> Vec<(u16, bool)> {
    happenings(run)
        .filter_map(|h| match h {
            Happening::Responded {
                status, replayed, ..
            } => Some((*status, *replayed)),
            _ => None,
        })
        .collect()
}

/// The step where the ledger first falls out of step with the charges while
/// nothing is in flight: the 503 after the lost answer leaves the charge alone.
fn first_rest_without_a_row(r: &Run) -> usize {
    r.first_violation(Invariant::LedgerMatchesCharges)
        .expect("a charge without a ledger row at rest")
}

/// One charge and one ledger row: the run again asked the processor with the key
/// and got the same charge. The ledger lagged only while nothing was in flight.
fn resumed_once(r: &Run) {
    let rest = first_rest_without_a_row(r);
    check(
        r,
        Expect {
            charges: 1,
            total: 100,
            ledger: &["pay_1"],
            redis: &[("idem:u42:K1", DAY_MS)],
            beliefs: vec![ok("pay_1")],
            recovered: vec![(Invariant::LedgerMatchesCharges, rest)],
            ..Expect::default()
        },
    );
    assert!(happenings(r).any(|h| matches!(h, Happening::Charged { replayed: true, .. })));
}

#[test]
fn idempotency_key_processor_timeout_the_adr_resumes_and_charges_once() {
    // IETF draft / the lab's ADR: the timeout is an unknown outcome. The handler
    // answers 503 and stores nothing; the claim's lease runs out; a retry takes
    // it over and asks the processor again with the key: the same charge.
    let r = timeout_run(None, true);
    resumed_once(&r);
    assert!(responses(&r).contains(&(503, false)));
    assert!(!redis_log(&r).iter().any(|c| c.contains("\"status\":503")));
    assert!(!redis_log(&r).iter().any(|c| c.starts_with("DEL")));
    assert_eq!(client_got(&r).last().map(String::as_str), Some("201 pay_1"));
}

#[test]
fn idempotency_key_processor_timeout_stripe_replays_the_503_until_the_status_read_books_the_row() {
    // Stripe: the 503 is stored under the key as its final answer and replayed
    // to every retry. The card is charged, the ledger has no row, and the app,
    // out of attempts, says it is checking; a minute later it asks by the key,
    // and the API, finding no row, asks the processor and books its charge.
    let r = timeout_run(Some(Toggle::ErrorsReplayed), true);
    let rest = first_rest_without_a_row(&r);
    check(
        &r,
        Expect {
            charges: 1,
            total: 100,
            ledger: &["pay_1"],
            redis: &[("idem:u42:K1", DAY_MS)],
            beliefs: vec![ok("pay_1")],
            recovered: vec![(Invariant::LedgerMatchesCharges, rest)],
            ..Expect::default()
        },
    );
    assert!(happenings(&r).any(|h| matches!(h, Happening::ClientChecks { .. })));
    let stored = redis_log(&r)
        .into_iter()
        .find(|c| c.contains("\"status\":503"))
        .expect("the error stored");
    assert!(
        stored.starts_with("SET idem:u42:K1 '{\"status\":503,\"error\":\"upstream_timeout\"")
            && stored.ends_with(" PX 86400000 → OK"),
        "{stored}"
    );
    assert!(responses(&r).contains(&(503, true)), "the 503 replayed");
    let attempts = r.scenario.retry.max_attempts as usize;
    let posts = happenings(&r).filter(|h| matches!(h, Happening::ClientSent { .. }));
    assert_eq!(posts.count(), attempts);
    assert!(!happenings(&r).any(|h| matches!(h, Happening::Charged { replayed: true, .. })));
}

#[test]
fn idempotency_key_processor_timeout_powertools_deletes_the_key_and_the_retry_runs_again() {
    // AWS Lambda Powertools: the error deletes the key's record; the next retry
    // runs the handler afresh. With the key passed to the processor the second
    // charge request gets the first charge back: one charge, one row.
    let r = timeout_run(Some(Toggle::DeleteOnError), true);
    resumed_once(&r);
    assert!(redis_log(&r)
        .iter()
        .any(|c| c.starts_with("DEL idem:u42:K1")));
}

#[test]
fn idempotency_key_processor_timeout_without_the_processor_key_charges_twice_unless_stripe() {
    // Without the key at the processor, running the handler again charges again:
    // Powertools' retry after the delete, and the ADR's takeover alike. Stripe's
    // replay charges once and leaves that charge without a ledger row.
    for design in [None, Some(Toggle::DeleteOnError)] {
        let r = timeout_run(design, false);
        let rest = first_rest_without_a_row(&r);
        check(
            &r,
            Expect {
                charges: 2,
                total: 200,
                ledger: &["pay_1"],
                redis: &[("idem:u42:K1", DAY_MS)],
                beliefs: vec![ok("pay_1")],
                broken: vec![
                    (Invariant::AtMostOnceCharge, nth_step(&r, 2, fresh_charge)),
                    (Invariant::LedgerMatchesCharges, rest),
                ],
                ..Expect::default()
            },
        );
    }
    let r = timeout_run(Some(Toggle::ErrorsReplayed), false);
    let end = r.end();
    assert_eq!(end.processor.charges.len(), 1);
    assert_eq!(
        end.db.table("payments").unwrap().committed_rows().count(),
        0
    );
    assert_eq!(end.client.ops[0].belief, Belief::GaveUp);
}

#[test]
fn stripe_and_powertools_exclude_each_other() {
    use idem_sim::scenario::Toggles;
    let t = Toggles::default().with(Toggle::ErrorsReplayed, true);
    let t = t.with(Toggle::DeleteOnError, true);
    assert!(t.has(Toggle::DeleteOnError) && !t.has(Toggle::ErrorsReplayed));
    let t = t.with(Toggle::ErrorsReplayed, true);
    assert!(t.has(Toggle::ErrorsReplayed) && !t.has(Toggle::DeleteOnError));
}

// ---------------------------------------------------------------- 3. conditional-update

#[test]
fn conditional_update_retry_updates_zero_rows() {
    let r = run("conditional-update", &[]);
    check(
        &r,
        Expect {
            beliefs: vec![Belief::Reread {
                balance: 80,
                version: 6,
            }],
            ..Expect::default()
        },
    );
    assert_eq!(account(&r), (80, 6));
    let upd = "UPDATE accounts SET balance = balance - 20, version = version + 1 WHERE id = 1 AND version = 5";
    assert_eq!(
        sql_log(&r, "UPDATE accounts"),
        [format!("{upd} → UPDATE 1"), format!("{upd} → UPDATE 0")]
    );
    // The lost ack carried the new balance; the retry's no-op answers 409 and the client re-reads.
    assert_eq!(client_lost(&r), ["200 balance=80 v6"]);
    assert_eq!(
        client_got(&r),
        ["409 version_mismatch", "200 balance=80 v6"]
    );
    assert_eq!(r.end().intended_debits, 20);
}

#[test]
fn conditional_update_after_another_writer_the_client_must_reread() {
    let r = run("conditional-update", &[(Toggle::OtherWriter, true)]);
    check(
        &r,
        Expect {
            beliefs: vec![Belief::Reread {
                balance: 70,
                version: 6,
            }],
            ..Expect::default()
        },
    );
    assert_eq!(account(&r), (70, 6));
    // The other writer moved the version first; both of the client's UPDATEs find nothing.
    let updates = sql_log(&r, "UPDATE accounts");
    assert_eq!(
        updates,
        [
            "UPDATE accounts SET balance = balance - 30, version = version + 1 WHERE id = 1 → UPDATE 1",
            "UPDATE accounts SET balance = balance - 20, version = version + 1 WHERE id = 1 AND version = 5 → UPDATE 0",
            "UPDATE accounts SET balance = balance - 20, version = version + 1 WHERE id = 1 AND version = 5 → UPDATE 0",
        ]
    );
    let external = nth_step(&r, 1, |h| {
        matches!(h, Happening::Command(Command::ExternalDebit { amount: 30 }))
    });
    let first_client_update = nth_step(
        &r,
        2,
        |h| matches!(h, Happening::Sql { stmt: sql, .. } if sql.to_string().starts_with("UPDATE")),
    );
    assert!(external < first_client_update);
    assert!(client_got(&r).ends_with(&["200 balance=70 v6".to_string()]));
}

#[test]
fn conditional_update_without_the_version_check_debits_twice() {
    let r = run("conditional-update", &[(Toggle::VersionCheck, false)]);
    let second_debit = nth_step(
        &r,
        2,
        |h| matches!(h, Happening::Sql { stmt: sql, outcome, .. } if sql.to_string().starts_with("UPDATE accounts") && outcome.to_string() == "UPDATE 1"),
    );
    check(
        &r,
        Expect {
            beliefs: vec![ok("200 balance=60 v7")],
            broken: vec![(Invariant::BalanceMatches, second_debit)],
            ..Expect::default()
        },
    );
    assert_eq!(account(&r), (60, 7));
}

// ---------------------------------------------------------------- 4. counter-increment

#[test]
fn counter_increment_naive_doubles_the_like() {
    let r = run("counter-increment", &[]);
    let second_inc = nth_step(
        &r,
        2,
        |h| matches!(h, Happening::Sql { stmt: sql, outcome, .. } if sql.to_string().starts_with("UPDATE posts") && outcome.to_string() == "UPDATE 1"),
    );
    check(
        &r,
        Expect {
            beliefs: vec![ok("200 liked")],
            broken: vec![(Invariant::LikesMatchOps, second_inc)],
            ..Expect::default()
        },
    );
    assert_eq!(r.end().likes(), Some(102));
    assert!(committed(&r, "like_ops").is_empty());
}

#[test]
fn counter_increment_with_op_dedup_counts_once() {
    let r = run("counter-increment", &[(Toggle::OpDedup, true)]);
    check(
        &r,
        Expect {
            beliefs: vec![ok("200 liked")],
            ..Expect::default()
        },
    );
    assert_eq!(r.end().likes(), Some(101));
    assert_eq!(committed(&r, "like_ops"), [["op_7f3a"]]);
    let ins = "INSERT INTO like_ops (op_id) VALUES ('op_7f3a') ON CONFLICT DO NOTHING";
    assert_eq!(
        sql_log(&r, "INSERT INTO like_ops"),
        [format!("{ins} → INSERT 0 1"), format!("{ins} → INSERT 0 0")]
    );
    // INSERT 0 0: the increment is skipped.
    assert_eq!(sql_log(&r, "UPDATE posts").len(), 1);
}

#[test]
fn counter_increment_on_conflict_without_a_unique_index_doubles_again() {
    let r = run(
        "counter-increment",
        &[(Toggle::OpDedup, true), (Toggle::UniqueConstraint, false)],
    );
    check(
        &r,
        Expect {
            beliefs: vec![ok("200 liked")],
            broken: vec![(
                Invariant::LikesMatchOps,
                nth_step(&r, 2, commit_touching("posts")),
            )],
            ..Expect::default()
        },
    );
    assert_eq!(r.end().likes(), Some(102));
    assert_eq!(committed(&r, "like_ops"), [["op_7f3a"], ["op_7f3a"]]);
    let ins = "INSERT INTO like_ops (op_id) VALUES ('op_7f3a') ON CONFLICT DO NOTHING";
    assert_eq!(
        sql_log(&r, "INSERT INTO like_ops"),
        [format!("{ins} → INSERT 0 1"), format!("{ins} → INSERT 0 1")]
    );
}

// ---------------------------------------------------------------- 5. concurrent-duplicates

fn key_rows(r: &Run) -> Vec<(String, String)> {
    committed(r, "idempotency_keys")
        .into_iter()
        .map(|row| (row[1].clone(), row[3].clone()))
        .collect()
}

#[test]
fn concurrent_duplicates_check_then_act_charges_twice() {
    let r = run("concurrent-duplicates", &[]);
    check(
        &r,
        Expect {
            charges: 2,
            total: 200,
            ledger: &["pay_1", "pay_2"],
            beliefs: vec![ok("pay_1")],
            broken: vec![(Invariant::AtMostOnceCharge, nth_step(&r, 2, fresh_charge))],
            ..Expect::default()
        },
    );
    // Two identical requests, two instances, at once.
    let sent: Vec<(NodeId, String)> = r.trace[0]
        .sent()
        .map(|h| match h {
            Happening::Sent { to, label, .. } => (*to, label.clone()),
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(
        sent,
        [
            (NodeId::Api(0), "POST /charges K1".to_string()),
            (NodeId::Api(1), "POST /charges K1".to_string())
        ]
    );
    // Both SELECTs miss before either INSERT: check-then-act.
    let log = sql_log(&r, "");
    let sel = "SELECT * FROM idempotency_keys WHERE user_id = 42 AND key = 'K1' ORDER BY locked_at → SELECT 0";
    assert_eq!(log[..2], [sel, sel]);
    assert!(log[2].starts_with("INSERT INTO idempotency_keys") && log[2].ends_with("INSERT 0 1"));
    assert!(log[3].starts_with("INSERT INTO idempotency_keys") && log[3].ends_with("INSERT 0 1"));
    assert_eq!(
        key_rows(&r),
        [
            ("K1".into(), "completed".into()),
            ("K1".into(), "completed".into())
        ]
    );
    assert_eq!(client_got(&r), ["201 pay_1", "201 pay_2"]);
}

/// With the unique constraint, the second request is refused with 409 while
/// the first runs, and its retry gets the stored response.
fn assert_409_then_replay(r: &Run) {
    check(
        r,
        Expect {
            charges: 1,
            total: 100,
            ledger: &["pay_1"],
            beliefs: vec![ok("pay_1")],
            ..Expect::default()
        },
    );
    let refused = nth_step(r, 1, |h| {
        matches!(h, Happening::Responded { status: 409, .. })
    });
    let first_done = nth_step(r, 1, |h| {
        matches!(
            h,
            Happening::Responded {
                status: 201,
                replayed: false,
                ..
            }
        )
    });
    let charge = nth_step(r, 1, fresh_charge);
    assert!(refused < first_done, "409 while the first request runs");
    // The first was still at work when the 409 left: its charge had not even happened yet.
    assert!(refused < charge);
    let replay = nth_step(r, 1, |h| {
        matches!(
            h,
            Happening::Responded {
                status: 201,
                replayed: true,
                ..
            }
        )
    });
    assert!(first_done < replay);
    assert_eq!(
        client_got(r),
        [
            "409 idempotency_key_in_use",
            "201 pay_1",
            "201 pay_1 (replay)"
        ]
    );
    assert_eq!(key_rows(r), [("K1".into(), "completed".into())]);
}

#[test]
fn concurrent_duplicates_unique_constraint_gives_409_then_the_stored_response() {
    let r = run("concurrent-duplicates", &[(Toggle::UniqueConstraint, true)]);
    assert_409_then_replay(&r);
    let violations: Vec<String> = sql_log(&r, "INSERT INTO idempotency_keys")
        .into_iter()
        .filter(|s| s.ends_with("violates unique constraint \"idempotency_keys_user_id_key_key\""))
        .collect();
    assert_eq!(violations.len(), 1);
}

#[test]
fn concurrent_duplicates_atomic_claim_and_unique_constraint() {
    let r = run(
        "concurrent-duplicates",
        &[
            (Toggle::UniqueConstraint, true),
            (Toggle::AtomicClaim, true),
        ],
    );
    assert_409_then_replay(&r);
    let claims: Vec<String> = sql_log(&r, "INSERT INTO idempotency_keys")
        .into_iter()
        .map(|s| s.rsplit(" → ").next().unwrap().to_string())
        .collect();
    assert_eq!(claims[..2], ["INSERT 0 1", "INSERT 0 0"]);
}

#[test]
fn concurrent_duplicates_on_conflict_without_a_unique_constraint_charges_twice() {
    // Both claims insert a row (no unique index to conflict with), both charge;
    // the first completes the key, and the second's completion, fenced by its
    // claim's token, finds the key completed already: it rolls its ledger row
    // back and answers with the first payment. The card was charged twice.
    let r = run("concurrent-duplicates", &[(Toggle::AtomicClaim, true)]);
    check(
        &r,
        Expect {
            charges: 2,
            total: 200,
            ledger: &["pay_1"],
            beliefs: vec![ok("pay_1")],
            broken: vec![
                (Invariant::AtMostOnceCharge, nth_step(&r, 2, fresh_charge)),
                (
                    Invariant::LedgerMatchesCharges,
                    nth_step(&r, 1, |h| {
                        matches!(h, Happening::Responded { replayed: true, .. })
                    }),
                ),
            ],
            ..Expect::default()
        },
    );
    assert_eq!(client_got(&r), ["201 pay_1", "201 pay_1 (replay)"]);
    let claims = sql_log(&r, "INSERT INTO idempotency_keys");
    assert_eq!(claims.len(), 2);
    assert!(claims
        .iter()
        .all(|c| c.contains("ON CONFLICT DO NOTHING") && c.ends_with("INSERT 0 1")));
}

// ---------------------------------------------------------------- 6. in-memory-store

#[test]
fn in_memory_store_retry_on_instance_b_charges_again() {
    let r = run("in-memory-store", &[]);
    check(
        &r,
        Expect {
            charges: 2,
            total: 200,
            ledger: &["pay_1", "pay_2"],
            beliefs: vec![ok("pay_2")],
            broken: vec![(Invariant::AtMostOnceCharge, nth_step(&r, 2, fresh_charge))],
            ..Expect::default()
        },
    );
    // The first request went to A, the retry to B, whose map has never seen K1.
    let to: Vec<NodeId> = happenings(&r)
        .filter_map(|h| match h {
            Happening::Delivered { to, label, .. } if label == "POST /charges K1" => Some(*to),
            _ => None,
        })
        .collect();
    assert_eq!(to, [NodeId::Api(0), NodeId::Api(1)]);
    let lookups: Vec<(NodeId, Option<bool>)> = happenings(&r)
        .filter_map(|h| match h {
            Happening::Memory { node, hit, .. } => Some((*node, *hit)),
            _ => None,
        })
        .collect();
    assert_eq!(
        lookups,
        [
            (NodeId::Api(0), Some(false)),
            (NodeId::Api(0), None),
            (NodeId::Api(1), Some(false)),
            (NodeId::Api(1), None)
        ]
    );
    for api in &r.end().apis {
        assert_eq!(api.memory.keys().collect::<Vec<_>>(), ["K1"]);
    }
}

#[test]
fn in_memory_store_with_a_shared_store_charges_once() {
    let r = run("in-memory-store", &[(Toggle::SharedStore, true)]);
    check(
        &r,
        Expect {
            charges: 1,
            total: 100,
            ledger: &["pay_1"],
            redis: &[("idem:u42:K1", DAY_MS)],
            beliefs: vec![ok("pay_1")],
            ..Expect::default()
        },
    );
    assert!(r.end().apis.iter().all(|a| a.memory.is_empty()));
    assert_eq!(client_got(&r), ["201 pay_1 (replay)"]);
}

/// The step at which API instance A wrote K1 into its map.
fn stored_in_a(r: &Run) -> usize {
    nth_step(r, 1, |h| {
        matches!(
            h,
            Happening::Memory {
                node: NodeId::Api(0),
                hit: None,
                ..
            }
        )
    })
}

#[test]
fn in_memory_store_restart_of_a_empties_its_map() {
    let mut r = run("in-memory-store", &[]);
    let k = stored_in_a(&r);
    assert_eq!(
        r.state_at(k).apis[0].memory.keys().collect::<Vec<_>>(),
        ["K1"]
    );
    r.apply_at(k, Command::Crash(NodeId::Api(0))).unwrap();
    r.apply_at(k + 1, Command::Restart(NodeId::Api(0))).unwrap();
    assert_eq!(
        r.trace[k].cause,
        Cause::Command(Command::Crash(NodeId::Api(0)))
    );
    assert_eq!(
        r.trace[k + 1].cause,
        Cause::Command(Command::Restart(NodeId::Api(0)))
    );
    let after = r.state_at(k + 2);
    assert!(after.apis[0].up);
    assert!(
        after.apis[0].memory.is_empty(),
        "the restart forgot every key"
    );
    // The rest of the story is unchanged: B does not know K1 either.
    check(
        &r,
        Expect {
            charges: 2,
            total: 200,
            ledger: &["pay_1", "pay_2"],
            beliefs: vec![ok("pay_2")],
            broken: vec![(Invariant::AtMostOnceCharge, nth_step(&r, 2, fresh_charge))],
            ..Expect::default()
        },
    );
}

#[test]
fn in_memory_store_one_instance_remembers_until_it_restarts() {
    let single = || Scenario {
        apis: 1,
        ..scenario::by_id("in-memory-store").unwrap()
    };
    // One instance: the retry lands on A, whose map has K1 → the stored response.
    let r = run_scenario(single(), &[]);
    check(
        &r,
        Expect {
            charges: 1,
            total: 100,
            ledger: &["pay_1"],
            beliefs: vec![ok("pay_1")],
            ..Expect::default()
        },
    );
    assert_eq!(client_got(&r), ["201 pay_1 (replay)"]);
    // The same, but A restarts between the lost ack and the retry: it forgot K1.
    let mut r = run_scenario(single(), &[]);
    let k = stored_in_a(&r);
    r.apply_at(k, Command::Crash(NodeId::Api(0))).unwrap();
    r.apply_at(k + 1, Command::Restart(NodeId::Api(0))).unwrap();
    check(
        &r,
        Expect {
            charges: 2,
            total: 200,
            ledger: &["pay_1", "pay_2"],
            beliefs: vec![ok("pay_2")],
            broken: vec![(Invariant::AtMostOnceCharge, nth_step(&r, 2, fresh_charge))],
            ..Expect::default()
        },
    );
}

// ---------------------------------------------------------------- 7. key-reuse-different-body

/// Where the scenario watches refunds (key-scope) and none is made: its
/// `RefundMade` breaks when the app gets its answer to the refund.
fn no_refund_made(r: &Run) -> Option<(Invariant, usize)> {
    let answered =
        |h: &Happening| matches!(h, Happening::Belief { op: 1, belief } if belief.is_definite());
    let watched = r.scenario.invariants.contains(&Invariant::RefundMade);
    watched.then(|| (Invariant::RefundMade, nth_step(r, 1, answered)))
}

/// The second operation reused the first one's key and got its stored answer
/// (`201 pay_1`): one charge, one row, and the app believes both succeeded;
/// `ResponseMatchesRequest` breaks when it says so (and, in key-scope,
/// `RefundMade` at the end).
/// The phone says the second operation, a payment, is paid, and nothing was
/// taken for it (the replay of the first's answer): the app does not show
/// what happened, from the step it is told (`wrong`).
fn paid_for_nothing(r: &Run, wrong: usize) -> Option<(Invariant, usize)> {
    let payment = matches!(r.scenario.ops[1].spec, OpSpec::Charge(_));
    (payment
        && r.scenario
            .invariants
            .contains(&Invariant::AppShowsWhatHappened))
    .then_some((Invariant::AppShowsWhatHappened, wrong))
}

fn gets_the_first_operations_answer(r: &Run) {
    let wrong = nth_step(r, 1, |h| {
        matches!(
            h,
            Happening::Belief {
                op: 1,
                belief: Belief::Succeeded(_)
            }
        )
    });
    check(
        r,
        Expect {
            charges: 1,
            total: 100,
            ledger: &["pay_1"],
            redis: &[("idem:u42:K1", DAY_MS)],
            beliefs: vec![ok("pay_1"), ok("pay_1")],
            broken: [(Invariant::ResponseMatchesRequest, wrong)]
                .into_iter()
                .chain(no_refund_made(r))
                .chain(paid_for_nothing(r, wrong))
                .collect(),
            ..Expect::default()
        },
    );
    assert_eq!(client_got(r), ["201 pay_1", "201 pay_1 (replay)"]);
}

#[test]
fn key_reuse_without_fingerprint_returns_the_wrong_stored_response() {
    let r = run("key-reuse-different-body", &[]);
    gets_the_first_operations_answer(&r);
    // The $150 request reused K1 and got the $100 response: nothing failed, the answer is wrong.
    assert_eq!(keys_sent(&r), [Some("K1".into()), Some("K1".into())]);
    assert!(!happenings(&r).any(|h| matches!(h, Happening::Charged { amount: 150, .. })));
    let end = r.end();
    assert!(!end.client.ops[0].wrong_answer);
    assert!(end.client.ops[1].wrong_answer);
}

/// With the fingerprint a key reused for another request gets 422: another
/// amount, or another endpoint (key-scope's refund: its method, path and body
/// differ from the payment's). The mistake is caught; nothing else is charged
/// or refunded, and key-scope says the refund was not made.
#[test]
fn key_reuse_with_fingerprint_gets_422() {
    for id in ["key-reuse-different-body", "key-scope"] {
        let r = run(id, &[(Toggle::Fingerprint, true)]);
        check(
            &r,
            Expect {
                charges: 1,
                total: 100,
                ledger: &["pay_1"],
                redis: &[("idem:u42:K1", DAY_MS)],
                beliefs: vec![
                    ok("pay_1"),
                    Belief::Failed(422, ErrorCode::IdempotencyKeyReused),
                ],
                broken: no_refund_made(&r).into_iter().collect(),
                ..Expect::default()
            },
        );
        assert_eq!(client_got(&r), ["201 pay_1", "422 idempotency_key_reused"]);
    }
}

// ---------------------------------------------------------------- 8. ttl-expiry

#[test]
fn ttl_expiry_after_25_hours_charges_again() {
    let r = run("ttl-expiry", &[]);
    check(
        &r,
        Expect {
            charges: 2,
            total: 200,
            ledger: &["pay_1", "pay_2"],
            redis: &[("idem:u42:K1", DAY_MS)],
            beliefs: vec![ok("pay_2")],
            broken: vec![(Invariant::AtMostOnceCharge, nth_step(&r, 2, fresh_charge))],
            ..Expect::default()
        },
    );
    // The clock jumps 25 h when the first attempt times out, and the key expires in that step.
    let jump = nth_step(&r, 1, |h| *h == Happening::ClockAdvanced(Millis::hours(25)));
    assert!(r.trace[jump - 1]
        .happenings
        .contains(&Happening::KeyExpired("idem:u42:K1".into())));
    assert!(r.trace[jump - 1]
        .happenings
        .iter()
        .any(|h| matches!(h, Happening::ClientTimeout { op: 0, attempt: 1 })));
    let gets: Vec<String> = redis_log(&r)
        .into_iter()
        .filter(|c| c.starts_with("GET"))
        .collect();
    assert_eq!(gets, ["GET idem:u42:K1 → (nil)", "GET idem:u42:K1 → (nil)"]);
    assert!(r.end().now > Millis::hours(25));
}

#[test]
fn ttl_expiry_with_a_long_ttl_still_replays() {
    let r = run("ttl-expiry", &[(Toggle::LongTtl, true)]);
    check(
        &r,
        Expect {
            charges: 1,
            total: 100,
            ledger: &["pay_1"],
            // 7 days minus the 25 h (and a little) that passed since the SET.
            redis: &[("idem:u42:K1", WEEK_MS)],
            beliefs: vec![ok("pay_1")],
            ..Expect::default()
        },
    );
    assert!(!happenings(&r).any(|h| matches!(h, Happening::KeyExpired(_))));
    let end = r.end();
    let left = end.redis.ttl("idem:u42:K1", end.now).unwrap();
    assert!(left < Millis(WEEK_MS - Millis::hours(25).0));
}

// ---------------------------------------------------------------- 9. crash-after-charge

/// Runs crash-after-charge with the three switches.
fn crash_run(same_tx: bool, key_to_processor: bool, crash_before_commit: bool) -> Run {
    let r = run(
        "crash-after-charge",
        &[
            (Toggle::SameTransaction, same_tx),
            (Toggle::KeyToProcessor, key_to_processor),
            (Toggle::CrashBeforeCommit, crash_before_commit),
        ],
    );
    // The scripted crash of A happens exactly once, where the variant says.
    let crash = nth_step(&r, 1, crashed(NodeId::Api(0)));
    let before: Vec<String> = r.trace[..crash - 1]
        .iter()
        .flat_map(|s| s.happenings.iter())
        .filter_map(|h| match h {
            Happening::Phase {
                node: NodeId::Api(0),
                phase,
                ..
            } => Some(format!("{phase:?}")),
            _ => None,
        })
        .collect();
    let last = before.last().unwrap().as_str();
    assert_eq!(
        last,
        if crash_before_commit {
            "Charge"
        } else {
            "Commit"
        }
    );
    assert_eq!(
        happenings(&r)
            .filter(|h| matches!(h, Happening::Crashed(_)))
            .count(),
        1
    );
    assert!(happenings(&r).any(|h| *h == Happening::Restarted(NodeId::Api(0))));
    r
}

#[test]
fn crash_after_commit_with_redis_outside_the_transaction_charges_twice() {
    let r = crash_run(false, false, false);
    check(
        &r,
        Expect {
            charges: 2,
            total: 200,
            ledger: &["pay_1", "pay_2"],
            redis: &[("idem:u42:K1", DAY_MS)],
            beliefs: vec![ok("pay_2")],
            broken: vec![(Invariant::AtMostOnceCharge, nth_step(&r, 2, fresh_charge))],
            ..Expect::default()
        },
    );
    // The ledger committed, the Redis write never came: the retry's GET misses.
    let gets: Vec<String> = redis_log(&r)
        .into_iter()
        .filter(|c| c.starts_with("GET"))
        .collect();
    assert_eq!(gets, ["GET idem:u42:K1 → (nil)", "GET idem:u42:K1 → (nil)"]);
}

#[test]
fn crash_before_commit_with_redis_outside_the_transaction_charges_twice() {
    let r = crash_run(false, false, true);
    check(
        &r,
        Expect {
            charges: 2,
            total: 200,
            ledger: &["pay_1"],
            redis: &[("idem:u42:K1", DAY_MS)],
            beliefs: vec![ok("pay_1")],
            broken: vec![
                (Invariant::AtMostOnceCharge, nth_step(&r, 2, fresh_charge)),
                (
                    Invariant::LedgerMatchesCharges,
                    nth_step(&r, 1, crashed(NodeId::Api(0))),
                ),
            ],
            ..Expect::default()
        },
    );
}

#[test]
fn crash_after_commit_key_to_processor_alone_charges_once_but_doubles_the_ledger() {
    // The processor deduplicates the charge; the API, which lost its key, writes a second row.
    let r = crash_run(false, true, false);
    let retry_reply = nth_step(&r, 1, |h| {
        matches!(h, Happening::Responded { status: 201, .. })
    });
    check(
        &r,
        Expect {
            charges: 1,
            total: 100,
            ledger: &["pay_1", "pay_2"],
            redis: &[("idem:u42:K1", DAY_MS)],
            beliefs: vec![ok("pay_2")],
            broken: vec![(Invariant::LedgerMatchesCharges, retry_reply)],
            ..Expect::default()
        },
    );
    assert_eq!(
        happenings(&r)
            .filter(|h| matches!(h, Happening::Charged { replayed: true, charge, .. } if charge == "ch_1"))
            .count(),
        1
    );
    // The second ledger row committed before the retry's reply, while the request was still in flight.
    assert!(nth_step(&r, 2, commit_touching("payments")) < retry_reply);
}

#[test]
fn crash_before_commit_key_to_processor_alone_charges_once() {
    let r = crash_run(false, true, true);
    check(
        &r,
        Expect {
            charges: 1,
            total: 100,
            ledger: &["pay_1"],
            redis: &[("idem:u42:K1", DAY_MS)],
            beliefs: vec![ok("pay_1")],
            recovered: vec![(
                Invariant::LedgerMatchesCharges,
                nth_step(&r, 1, crashed(NodeId::Api(0))),
            )],
            ..Expect::default()
        },
    );
    assert!(happenings(&r).any(|h| matches!(h, Happening::Charged { replayed: true, .. })));
}

#[test]
fn crash_after_commit_with_the_key_in_the_same_transaction_replays() {
    for key_to_processor in [false, true] {
        let r = crash_run(true, key_to_processor, false);
        check(
            &r,
            Expect {
                charges: 1,
                total: 100,
                ledger: &["pay_1"],
                beliefs: vec![ok("pay_1")],
                ..Expect::default()
            },
        );
        assert_eq!(key_rows(&r), [("K1".into(), "completed".into())]);
        assert_eq!(client_got(&r), ["201 pay_1 (replay)"]);
        assert!(redis_log(&r).is_empty());
    }
}

#[test]
fn crash_before_commit_same_transaction_without_processor_key_charges_twice() {
    let r = crash_run(true, false, true);
    check(
        &r,
        Expect {
            charges: 2,
            total: 200,
            ledger: &["pay_1"],
            beliefs: vec![ok("pay_1")],
            broken: vec![
                (Invariant::AtMostOnceCharge, nth_step(&r, 2, fresh_charge)),
                (
                    Invariant::LedgerMatchesCharges,
                    nth_step(&r, 1, crashed(NodeId::Api(0))),
                ),
            ],
            ..Expect::default()
        },
    );
    // The claim stayed 'processing': 409 until its lease ran out, then a takeover charged again.
    let takeover = nth_step(&r, 1, |h| {
        matches!(h, Happening::Sql { stmt: sql, outcome, .. }
            if sql.to_string().starts_with("UPDATE idempotency_keys SET status = 'processing'") && outcome.to_string() == "UPDATE 1")
    });
    let refused = nth_step(&r, 1, |h| {
        matches!(h, Happening::Responded { status: 409, .. })
    });
    assert!(refused < takeover && takeover < nth_step(&r, 2, fresh_charge));
    assert_eq!(key_rows(&r), [("K1".into(), "completed".into())]);
}

#[test]
fn crash_before_commit_same_transaction_and_processor_key_charges_once() {
    let r = crash_run(true, true, true);
    check(
        &r,
        Expect {
            charges: 1,
            total: 100,
            ledger: &["pay_1"],
            beliefs: vec![ok("pay_1")],
            recovered: vec![(
                Invariant::LedgerMatchesCharges,
                nth_step(&r, 1, crashed(NodeId::Api(0))),
            )],
            ..Expect::default()
        },
    );
    let charged: Vec<(String, Option<String>, bool)> = happenings(&r)
        .filter_map(|h| match h {
            Happening::Charged {
                charge,
                key,
                replayed,
                ..
            } => Some((charge.clone(), key.clone(), *replayed)),
            _ => None,
        })
        .collect();
    assert_eq!(
        charged,
        [
            ("ch_1".into(), Some("K1".into()), false),
            ("ch_1".into(), Some("K1".into()), true)
        ]
    );
    assert_eq!(key_rows(&r), [("K1".into(), "completed".into())]);
}

// ---------------------------------------------------------------- 10. transaction-is-not-idempotency

#[test]
fn transaction_is_not_idempotency_a_successful_retry_runs_twice() {
    let r = run("transaction-is-not-idempotency", &[]);
    check(
        &r,
        Expect {
            charges: 2,
            total: 200,
            ledger: &["pay_1", "pay_2"],
            beliefs: vec![ok("pay_2")],
            broken: vec![(Invariant::AtMostOnceCharge, nth_step(&r, 2, fresh_charge))],
            ..Expect::default()
        },
    );
    // Both attempts ran in their own transaction, and both committed.
    assert_eq!(
        happenings(&r)
            .filter(|h| matches!(h, Happening::TxCommit(_)))
            .count(),
        2
    );
    assert!(!happenings(&r).any(|h| matches!(h, Happening::TxRollback { .. })));
}

#[test]
fn transaction_is_not_idempotency_with_a_key_charges_once() {
    let r = run(
        "transaction-is-not-idempotency",
        &[(Toggle::IdempotencyKey, true)],
    );
    check(
        &r,
        Expect {
            charges: 1,
            total: 100,
            ledger: &["pay_1"],
            beliefs: vec![ok("pay_1")],
            ..Expect::default()
        },
    );
    assert_eq!(key_rows(&r), [("K1".into(), "completed".into())]);
    assert_eq!(client_got(&r), ["201 pay_1 (replay)"]);
}

#[test]
fn transaction_rolls_back_the_ledger_row_but_not_the_charge() {
    // A failure inside the transaction: the API dies after its INSERT, before COMMIT.
    let mut r = run("transaction-is-not-idempotency", &[]);
    let insert = nth_step(
        &r,
        1,
        |h| matches!(h, Happening::Sql { stmt: sql, .. } if sql.to_string().starts_with("INSERT INTO payments")),
    );
    r.apply_at(insert, Command::Crash(NodeId::Api(0))).unwrap();
    let rolled_back = r.state_at(insert + 1);
    assert!(r.trace[insert]
        .happenings
        .iter()
        .any(|h| matches!(h, Happening::TxRollback { crash: true, .. })));
    assert_eq!(
        rolled_back.db.table("payments").unwrap().committed_count(),
        0
    );
    assert_eq!(
        rolled_back.processor.charges.len(),
        1,
        "the card stays charged"
    );
    // Nothing restarts A in this scenario: the client's retries are lost and it gives up.
    let end = r.end();
    assert_eq!(end.client.ops[0].belief, Belief::GaveUp);
    assert!(!end.invariants[&Invariant::LedgerMatchesCharges]);
    assert!(!end.invariants[&Invariant::DefiniteAnswer]);
}

// ---------------------------------------------------------------- 11. consumer-redelivery

fn consumer_run(consumer_dedup: bool, idempotent_producer: bool) -> Run {
    run(
        "consumer-redelivery",
        &[
            (Toggle::ConsumerDedup, consumer_dedup),
            (Toggle::IdempotentProducer, idempotent_producer),
        ],
    )
}

/// Asserts the pipeline's end: balance, records in the topic, processed ids.
fn check_pipeline(
    r: &Run,
    balance: i64,
    records: usize,
    processed: usize,
    broken_at: Option<usize>,
) {
    check(
        r,
        Expect {
            broken: broken_at
                .map(|s| vec![(Invariant::BalanceMatches, s)])
                .unwrap_or_default(),
            ..Expect::default()
        },
    );
    let end = r.end();
    assert_eq!(end.balance(), Some(balance));
    assert_eq!(end.broker.log.len(), records);
    assert!(end.broker.log.iter().all(|rec| rec.msg_id == "evt_1"));
    assert_eq!(
        end.broker.committed, records as u64,
        "every record consumed"
    );
    assert_eq!(committed(r, "processed_messages").len(), processed);
    // The consumer died once, after its COMMIT and before committing the offset: a redelivery.
    assert_eq!(end.broker.delivered[..2], [0, 0]);
    assert!(r.decisive_step().is_some());
    assert_eq!(
        end.pipeline.producer.attempts, 2,
        "the lost ack made the producer retry"
    );
}

#[test]
fn consumer_redelivery_without_dedup_debits_three_times() {
    let r = consumer_run(false, false);
    check_pipeline(
        &r,
        200,
        2,
        0,
        Some(nth_step(&r, 2, commit_touching("accounts"))),
    );
    assert_eq!(
        happenings(&r)
            .filter(|h| matches!(
                h,
                Happening::Appended {
                    duplicate: false,
                    ..
                }
            ))
            .count(),
        2
    );
}

#[test]
fn consumer_redelivery_with_consumer_dedup_debits_once() {
    let r = consumer_run(true, false);
    check_pipeline(&r, 400, 2, 1, None);
    let ins = "INSERT INTO processed_messages (message_id) VALUES ('evt_1') ON CONFLICT DO NOTHING";
    assert_eq!(
        sql_log(&r, "INSERT INTO processed_messages"),
        [
            format!("{ins} → INSERT 0 1"),
            format!("{ins} → INSERT 0 0"),
            format!("{ins} → INSERT 0 0")
        ]
    );
}

#[test]
fn consumer_redelivery_idempotent_producer_alone_removes_only_the_producer_duplicate() {
    let r = consumer_run(false, true);
    check_pipeline(
        &r,
        300,
        1,
        0,
        Some(nth_step(&r, 2, commit_touching("accounts"))),
    );
    assert!(happenings(&r).any(|h| matches!(
        h,
        Happening::Appended {
            duplicate: true,
            ..
        }
    )));
}

#[test]
fn consumer_redelivery_with_both_defences_debits_once() {
    let r = consumer_run(true, true);
    check_pipeline(&r, 400, 1, 1, None);
}

#[test]
fn consumer_dedup_without_a_unique_index_debits_three_times() {
    let r = run(
        "consumer-redelivery",
        &[
            (Toggle::ConsumerDedup, true),
            (Toggle::UniqueConstraint, false),
        ],
    );
    check_pipeline(
        &r,
        200,
        2,
        3,
        Some(nth_step(&r, 2, commit_touching("accounts"))),
    );
}

// ---------------------------------------------------------------- 12. new-key-per-retry

#[test]
fn new_key_per_retry_never_deduplicates() {
    let r = run("new-key-per-retry", &[]);
    check(
        &r,
        Expect {
            charges: 2,
            total: 200,
            ledger: &["pay_1", "pay_2"],
            redis: &[("idem:u42:K1", DAY_MS), ("idem:u42:K2", DAY_MS)],
            beliefs: vec![ok("pay_2")],
            broken: vec![(Invariant::AtMostOnceCharge, nth_step(&r, 2, fresh_charge))],
            ..Expect::default()
        },
    );
    assert_eq!(keys_sent(&r), [Some("K1".into()), Some("K2".into())]);
    let keys = &r.end().client.keys;
    assert_eq!(keys.len(), 2);
    assert_ne!(keys[0], keys[1]);
}

#[test]
fn new_key_per_retry_fixed_charges_once() {
    let r = run("new-key-per-retry", &[(Toggle::NewKeyPerRetry, false)]);
    check(
        &r,
        Expect {
            charges: 1,
            total: 100,
            ledger: &["pay_1"],
            redis: &[("idem:u42:K1", DAY_MS)],
            beliefs: vec![ok("pay_1")],
            ..Expect::default()
        },
    );
    assert_eq!(keys_sent(&r), [Some("K1".into()), Some("K1".into())]);
}

// ---------------------------------------------------------------- 13. status-transition

#[test]
fn status_transition_retry_updates_zero_rows_and_charges_once() {
    let r = run("status-transition", &[]);
    check(
        &r,
        Expect {
            charges: 1,
            total: 100,
            ledger: &["pay_1"],
            beliefs: vec![ok("200 PAID")],
            ..Expect::default()
        },
    );
    let upd = "UPDATE orders SET status = 'PAID' WHERE id = 42 AND status = 'NEW'";
    assert_eq!(
        sql_log(&r, "UPDATE orders"),
        [format!("{upd} → UPDATE 1"), format!("{upd} → UPDATE 0")]
    );
    assert_eq!(committed(&r, "orders"), [["42", "PAID"]]);
    assert_eq!(keys_sent(&r), [None, None], "no key needed");
}

#[test]
fn status_transition_without_the_row_count_check_charges_twice() {
    let r = run("status-transition", &[(Toggle::RowCountCheck, false)]);
    check(
        &r,
        Expect {
            charges: 2,
            total: 200,
            ledger: &["pay_1", "pay_2"],
            beliefs: vec![ok("200 PAID")],
            broken: vec![(Invariant::AtMostOnceCharge, nth_step(&r, 2, fresh_charge))],
            ..Expect::default()
        },
    );
    assert_eq!(committed(&r, "orders"), [["42", "PAID"]]);
    // The second charge follows the UPDATE that changed nothing.
    let zero = nth_step(
        &r,
        1,
        |h| matches!(h, Happening::Sql { stmt: sql, outcome, .. } if sql.to_string().starts_with("UPDATE orders") && outcome.to_string() == "UPDATE 0"),
    );
    assert!(zero < nth_step(&r, 2, fresh_charge));
}

// ---------------------------------------------------------------- 14. receipt-email

fn emailed(duplicate: bool) -> impl Fn(&Happening) -> bool {
    move |h| matches!(h, Happening::Emailed { duplicate: d, .. } if *d == duplicate)
}

/// The receipts the customer received, by payment, and every send the mail
/// service answered as a duplicate.
fn receipts(run: &Run) -> (Vec<String>, usize) {
    let end = run.end();
    let got = end.mail.sent.clone();
    (got, happenings(run).filter(|h| emailed(true)(h)).count())
}

/// The ADR's handler, safe for the charge, emails the receipt after the commit;
/// the mail service's answer is lost. The handler times out (503, nothing
/// stored), the retry resumes the key, finds the payment in the ledger — and
/// emails the receipt again.
#[test]
fn receipt_email_a_lost_mail_answer_sends_two_receipts_and_charges_once() {
    let r = run("receipt-email", &[]);
    check(
        &r,
        Expect {
            charges: 1,
            total: 100,
            ledger: &["pay_1"],
            redis: &[("idem:u42:K1", DAY_MS)],
            beliefs: vec![ok("pay_1")],
            broken: vec![(Invariant::OneReceipt, nth_step(&r, 2, emailed(false)))],
            ..Expect::default()
        },
    );
    assert_eq!(receipts(&r), (vec!["pay_1".into(), "pay_1".into()], 0));
    let lost = nth_step(&r, 1, |h| {
        matches!(
            h,
            Happening::Lost {
                from: NodeId::Mail,
                ..
            }
        )
    });
    assert!(nth_step(&r, 1, emailed(false)) < lost);
    // The retry's charge is the processor's replay; its INSERT finds the row.
    assert!(happenings(&r).any(|h| matches!(h, Happening::Charged { replayed: true, .. })));
    let ins = sql_log(&r, "INSERT INTO payments");
    assert!(
        ins[0].ends_with("INSERT 0 1") && ins[1].ends_with("INSERT 0 0"),
        "{ins:?}"
    );
    assert!(client_got(&r).contains(&"201 pay_1 (replay)".to_string()));
}

/// The transactional outbox: the receipt is a row written in the ledger row's
/// transaction; the relay sends it after the commit, its answer is lost, and it
/// sends it again with the same id, which the mail service drops.
#[test]
fn receipt_email_with_the_outbox_sends_one_receipt() {
    let r = run("receipt-email", &[(Toggle::Outbox, true)]);
    check(
        &r,
        Expect {
            charges: 1,
            total: 100,
            ledger: &["pay_1"],
            redis: &[("idem:u42:K1", DAY_MS)],
            beliefs: vec![ok("pay_1")],
            ..Expect::default()
        },
    );
    assert_eq!(receipts(&r), (vec!["pay_1".into()], 1));
    assert_eq!(committed(&r, "outbox"), [["rcpt_pay_1", "pay_1", "sent"]]);
    // The app has its answer before the receipt is sent: the relay works after the commit.
    let answered = nth_step(&r, 1, |h| {
        matches!(h, Happening::Responded { status: 201, .. })
    });
    assert!(answered < nth_step(&r, 1, emailed(false)));
    assert_eq!(client_got(&r), ["201 pay_1"]);
    assert_eq!(
        sql_log(&r, "UPDATE outbox"),
        ["UPDATE outbox SET status = 'sent' WHERE id = 'rcpt_pay_1' → UPDATE 1"]
    );
}

/// The other single fault: the API crashes right after the mail service has
/// the receipt. Without the outbox the retry sends it again; with it, the
/// restarted relay sends it again with the same id, and it is dropped.
#[test]
fn receipt_email_a_crash_after_sending_sends_two_without_the_outbox_and_one_with_it() {
    for (outbox, want) in [(false, 2), (true, 1)] {
        let mut r = run("receipt-email", &[(Toggle::Outbox, outbox)]);
        let at = nth_step(&r, 1, emailed(false));
        r.apply_at(at, Command::Crash(NodeId::Api(0))).unwrap();
        let end = r.end();
        assert_eq!(end.mail.sent.len(), want, "outbox {outbox}\n{}", r.text());
        assert_eq!(end.processor.charges.len(), 1);
        assert_eq!(end.ledger_rows(), Some(1));
        assert_eq!(end.invariants[&Invariant::OneReceipt], outbox);
        assert!(end.invariants[&Invariant::DefiniteAnswer]);
    }
}
// ---------------------------------------------------------------- 15. late-put

/// The profile's committed (email, version).
fn profile(run: &Run) -> (String, i64) {
    let end = run.end();
    let version = end.db.first_int("profiles", "version");
    (end.email().expect("email"), version.expect("version"))
}

#[test]
fn late_put_retry_overwrites_the_newer_write_of_the_web_version() {
    let r = run("late-put", &[]);
    let upd = |email: &str| {
        format!(
            "UPDATE profiles SET email = '{email}', version = version + 1 WHERE id = 42 → UPDATE 1"
        )
    };
    // The app's PUT lands (its answer is lost), the web version writes a newer
    // email, and the app's retry of the old PUT writes the old one back.
    assert_eq!(
        sql_log(&r, "UPDATE profiles"),
        [upd("ann@app.io"), upd("ann@web.io"), upd("ann@app.io")]
    );
    let web = nth_step(&r, 1, |h| *h == Happening::Command(Command::ExternalPut));
    let stale = nth_step(
        &r,
        2,
        |h| matches!(h, Happening::Sql { stmt, .. } if stmt.to_string().contains("SET email = 'ann@app.io'")),
    );
    assert!(web < stale);
    check(
        &r,
        Expect {
            beliefs: vec![ok("200 ann@app.io")],
            broken: vec![(Invariant::NewerWriteKept, stale)],
            ..Expect::default()
        },
    );
    assert_eq!(profile(&r), ("ann@app.io".into(), 8));
    assert_eq!(client_lost(&r), ["200 ann@app.io"]);
    assert_eq!(r.end().seldom.newest, Some("ann@web.io"));
}

#[test]
fn late_put_with_if_match_gets_412_and_the_app_rereads() {
    let r = run("late-put", &[(Toggle::IfMatch, true)]);
    let upd = "UPDATE profiles SET email = 'ann@app.io', version = version + 1 WHERE id = 42 AND version = 5";
    assert_eq!(
        sql_log(&r, "UPDATE profiles SET email = 'ann@app.io'"),
        [format!("{upd} → UPDATE 1"), format!("{upd} → UPDATE 0")]
    );
    check(
        &r,
        Expect {
            beliefs: vec![Belief::ChangedElsewhere],
            ..Expect::default()
        },
    );
    assert_eq!(profile(&r), ("ann@web.io".into(), 7));
    // The retry is refused, and the app re-reads the profile to tell the user.
    assert_eq!(
        client_got(&r),
        ["412 precondition_failed", "200 ann@web.io"]
    );
}

#[test]
fn late_put_with_if_match_a_parallel_copy_rereads_its_own_value() {
    // Two copies of the PUT at once, before the web version writes: one writes,
    // the other gets 412 and re-reads the app's own value: the app knows it saved.
    let mut r = run("late-put", &[(Toggle::IfMatch, true)]);
    r.apply_at(0, Command::ParallelRetries(2))
        .expect("the copies leave");
    assert_eq!(
        client_got(&r),
        ["412 precondition_failed", "200 ann@app.io"]
    );
    assert_eq!(
        r.end().client.ops[0].belief,
        ok("200 ann@app.io"),
        "{}",
        r.text()
    );
    // The web version's write comes later, and nothing overwrites it.
    assert_eq!(profile(&r), ("ann@web.io".into(), 7));
    assert!(r.end().all_hold(), "{}", r.text());
}

// ---------------------------------------------------------------- 16. key-scope

/// The app derives the key from the order (`order-42`) and sends it to pay, then
/// to refund. The store keys it by user and key only: the refund finds the
/// payment's stored answer and gets it back; nothing is refunded, and the app
/// believes the refund went through.
#[test]
fn key_scope_the_refund_gets_the_payments_answer_and_nothing_is_refunded() {
    let r = run("key-scope", &[]);
    gets_the_first_operations_answer(&r);
    assert_eq!(r.end().client.keys, ["order-42"], "one key, from the order");
    assert_eq!(keys_sent(&r), [Some("K1".into()), Some("K1".into())]);
    // The refund is the decisive moment: the order's key is on its way again.
    let refund = nth_step(&r, 2, |h| matches!(h, Happening::ClientSent { .. }));
    assert_eq!(r.decisive_step(), Some(refund));
    assert!(r.end().client.ops[1].wrong_answer);
}

/// Scoped by method and path, the refund's key is another key: it runs.
#[test]
fn key_scope_scoped_by_method_and_path_the_refund_runs() {
    let r = run("key-scope", &[(Toggle::ScopedKey, true)]);
    check(
        &r,
        Expect {
            charges: 2,
            total: 0,
            // The refund's ledger row is a refund, as at the processor.
            ledger: &["pay_1", "re_2"],
            redis: &[
                ("idem:u42:POST /charges:K1", DAY_MS),
                ("idem:u42:POST /refunds:K1", DAY_MS),
            ],
            beliefs: vec![ok("pay_1"), ok("re_2")],
            ..Expect::default()
        },
    );
    let end = r.end();
    assert_eq!(end.processor.charges[1].id, "re_2");
    assert_eq!(end.processor.charges[1].amount, -100);
    assert_eq!(client_got(&r), ["201 pay_1", "201 re_2"]);
    // The diagram's arrow to the processor is a refund, not a charge of $-100.
    assert_eq!(
        got(&r, NodeId::Processor),
        [
            "charge $100.00 POST /charges:K1",
            "refund $100.00 POST /refunds:K1"
        ]
    );
}

/// Regression: with the fingerprint alone every invariant held and the outcome
/// was green, though the refund the app asked for was never made (it got 422).
/// `RefundMade` says so once the run is quiet; scoped keys make it hold.
#[test]
fn key_scope_a_refused_refund_is_not_made_and_the_outcome_says_so() {
    let r = run("key-scope", &[(Toggle::Fingerprint, true)]);
    let end = r.end();
    assert_eq!(end.invariants.get(&Invariant::RefundMade), Some(&false));
    assert!(!end.all_hold(), "{}", r.text());
    for set in [
        &[(Toggle::ScopedKey, true)][..],
        &[(Toggle::ScopedKey, true), (Toggle::Fingerprint, true)],
    ] {
        let r = run("key-scope", set);
        assert_eq!(r.end().invariants.get(&Invariant::RefundMade), Some(&true));
        assert!(r.end().all_hold(), "{set:?}: {}", r.text());
    }
}

/// Regression: the customer's expected total counted the refund from the run's
/// start, so the outcome read "$100.00 — expected $0.00" in red from the
/// payment on. A payment counts from its first attempt, a refund once the app
/// is told it is made: the replay's 201 is the first moment money is missing.
#[test]
fn key_scope_expects_the_refund_only_once_the_app_is_told_it_is_made() {
    let r = run("key-scope", &[]);
    let told = nth_step(&r, 1, |h| {
        matches!(
            h,
            Happening::Belief {
                op: 1,
                belief: Belief::Succeeded(_)
            }
        )
    });
    for k in 0..=r.len() {
        let w = r.state_at(k);
        let (expected, charged) = (w.expected_charge(), w.processor.total());
        let paying = w.client.ops[0].attempts > 0 && k < told;
        let want = if paying { 100 } else { 0 };
        assert_eq!(expected, Some(want), "step {k}\n{}", r.text());
        assert_eq!(charged > want, k >= told, "step {k}\n{}", r.text());
    }
    // Scoped, the refund is made before the app is told: never more than expected.
    let r = run("key-scope", &[(Toggle::ScopedKey, true)]);
    for k in 0..=r.len() {
        let w = r.state_at(k);
        assert!(
            w.processor.total() <= w.expected_charge().unwrap(),
            "step {k}"
        );
    }
    assert_eq!(r.end().expected_charge(), Some(0));
}

// ---------------------------------------------------------------- every scenario is covered

#[test]
fn every_scenario_has_a_test_here() {
    let src = include_str!("scenarios.rs");
    for id in scenario::ids() {
        assert!(
            src.contains(&format!("\"{id}\"")),
            "scenario {id} has no test in scenarios.rs"
        );
    }
}

/// The topology draws every node some choice of the scenario's switches sends a
/// message to; a scenario that is not a payment draws nothing else (late-put: no
/// Redis, no card processor), a payment draws the whole payment system.
#[test]
fn every_scenario_draws_the_nodes_its_runs_reach() {
    for s in scenario::all() {
        let offered: Vec<(Toggle, bool)> = s.toggles.to_vec();
        let mut reached: Vec<NodeId> = Vec::new();
        for bits in 0..1u32 << offered.len() {
            let set: Vec<(Toggle, bool)> = offered
                .iter()
                .enumerate()
                .map(|(i, (t, _))| (*t, bits >> i & 1 == 1))
                .collect();
            let r = run_scenario(s.clone(), &set);
            for h in happenings(&r) {
                if let Happening::Sent { from, to, .. } = h {
                    for n in [*from, *to] {
                        if !reached.contains(&n) {
                            reached.push(n);
                        }
                    }
                }
            }
        }
        let drawn = s.nodes();
        for n in &reached {
            assert!(
                drawn.contains(n),
                "{}: {n:?} is reached but not drawn",
                s.id
            );
        }
        let payment = matches!(s.handler, Handler::Charge { .. } | Handler::PayOrder);
        for n in drawn.iter().filter(|_| !payment) {
            assert!(
                reached.contains(n),
                "{}: {n:?} is drawn but never reached",
                s.id
            );
        }
    }
    let drawn = |id: &str| scenario::by_id(id).unwrap().nodes();
    for id in ["late-put", "conditional-update", "counter-increment"] {
        assert_eq!(
            drawn(id),
            [NodeId::Client, NodeId::Api(0), NodeId::Postgres],
            "{id}"
        );
    }
    assert!(drawn("naive-post").contains(&NodeId::Redis));
    // `has_node` answers as the list does, for every node of any topology.
    let every = [
        NodeId::Client,
        NodeId::Api(0),
        NodeId::Api(1),
        NodeId::Api(2),
        NodeId::Redis,
        NodeId::Postgres,
        NodeId::Processor,
        NodeId::Broker,
        NodeId::Consumer,
        NodeId::Mail,
        NodeId::Reconciler,
    ];
    for s in scenario::all() {
        for n in every {
            assert_eq!(s.has_node(n), s.nodes().contains(&n), "{}: {n:?}", s.id);
        }
    }
}

// ---------------------------------------------------------------- snapshots of the text trace

/// Compares `actual` with `tests/snapshots/<name>.txt`; with `UPDATE_SNAPSHOTS=1`
/// it rewrites the file instead.
fn assert_snapshot(name: &str, actual: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(format!("{name}.txt"));
    if std::env::var("UPDATE_SNAPSHOTS").as_deref() == Ok("1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!(
            "no snapshot {}; run with UPDATE_SNAPSHOTS=1 to create it",
            path.display()
        )
    });
    if expected != actual {
        let diff = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(expected.lines().count().min(actual.lines().count()));
        panic!(
            "snapshot {name} differs from line {}:\n- {}\n+ {}\n\
             (run with UPDATE_SNAPSHOTS=1 to accept the new trace)\n--- new trace:\n{actual}",
            diff + 1,
            expected.lines().nth(diff).unwrap_or("<end>"),
            actual.lines().nth(diff).unwrap_or("<end>"),
        );
    }
}

fn snapshot(id: &str, set: &[(Toggle, bool)], name: &str) {
    let r = run(id, set);
    assert_snapshot(name, &r.text());
}

#[test]
fn snapshot_naive_post() {
    snapshot("naive-post", &[], "naive-post");
}

#[test]
fn snapshot_idempotency_key() {
    snapshot("idempotency-key", &[], "idempotency-key");
}

#[test]
fn snapshot_conditional_update() {
    snapshot("conditional-update", &[], "conditional-update");
}

#[test]
fn snapshot_late_put() {
    snapshot("late-put", &[], "late-put");
}

#[test]
fn snapshot_key_scope() {
    snapshot("key-scope", &[], "key-scope");
}

#[test]
fn snapshot_counter_increment() {
    snapshot("counter-increment", &[], "counter-increment");
}

#[test]
fn snapshot_counter_increment_with_op_dedup() {
    snapshot(
        "counter-increment",
        &[(Toggle::OpDedup, true)],
        "counter-increment.op-dedup",
    );
}

#[test]
fn ttl_expiry_with_a_deadline_under_the_ttl_gives_up_and_charges_once() {
    // The app stops retrying an hour after its first attempt: the retry the story
    // plans 25 h later is never sent. One charge; the app learns it by a status
    // read by its key, not by a second POST.
    let r = run("ttl-expiry", &[(Toggle::ShortDeadline, true)]);
    let end = r.end();
    assert!(end.clone().step().is_empty(), "{}", r.text());
    assert_eq!(end.processor.charges.len(), 1, "{}", r.text());
    assert!(matches!(end.client.ops[0].belief, Belief::Succeeded(_)));
    assert!(
        end.client.ops[0].lanes[1..].iter().all(|l| l.check),
        "no retry after the deadline, only status reads"
    );
    let posts = happenings(&r)
        .filter(|h| matches!(h, Happening::ClientSent { .. }))
        .count();
    assert_eq!(posts, 1);
    assert!(Invariant::AtMostOnceCharge.holds(end));
    assert!(Invariant::DefiniteAnswer.holds(end));
}
