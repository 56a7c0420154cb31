//! The handlers' listings: for each scenario, the code its handler runs under its
//! switches, written once (language-neutral), with a comment per language, each
//! line anchored ([`At`]) to what the core does when it runs that line: a
//! `Phase` the handler enters (from a given phase), the status it answers, or an
//! attempt the app sends. The fragment of a scenario carries its listing with the
//! anchors ([`lines`]); the code pane highlights from them (`codemap::current`).
//! The tests run every scenario under every combination of its switches and a few
//! seeds: every line runs in some run, and everything the handler runs has
//! exactly one line.

use super::codemap::{letter, FIRST, NEW_KEY, SAME_KEY};
use super::{Lang, ScenarioId};
use crate::html::esc_text as escaped;
use idem_sim::scenario::Phase::{self, *};
use idem_sim::scenario::Toggle::{self, DeleteOnError, ErrorsReplayed};

/// What runs a line of a listing.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum At {
    /// The handler enters the phase (from any other).
    In(Phase),
    /// The handler enters the second phase right after the first.
    After(Phase, Phase),
    /// The handler answers with the status right after the phase.
    Answer(Phase, u16),
    /// The app sends an operation's first attempt.
    Sent,
    /// The app retries: with a new key (`true`), or with the key it sent before.
    Retried(bool),
}

/// One line of a listing.
pub struct Line {
    /// What runs it; none: a declaration or a comment, not a step.
    pub at: &'static [At],
    /// The code, the same in every language; empty for a line that is only a comment.
    pub code: &'static str,
    /// The comment, in [`Lang`] order (Russian, English); empty for none.
    pub note: [&'static str; 2],
    /// The switches under which it is the code that runs (each on or off, as given);
    /// none: under any. The code pane shows only the lines of the run's switches.
    pub only: &'static [(Toggle, bool)],
}

const fn l(at: &'static [At], code: &'static str, ru: &'static str, en: &'static str) -> Line {
    Line {
        at,
        code,
        note: [ru, en],
        only: &[],
    }
}

/// `line`, shown only under the switches `only`.
const fn when(only: &'static [(Toggle, bool)], line: Line) -> Line {
    Line { only, ..line }
}

/// A line without a comment.
const fn c(at: &'static [At], code: &'static str) -> Line {
    l(at, code, "", "")
}

/// The anchor's word in a fragment (read back by `codemap::hit`).
fn word(a: At) -> String {
    let ch = |p| char::from(letter(p));
    match a {
        At::In(p) => ch(p).to_string(),
        At::After(p, q) => format!("{}{}", ch(p), ch(q)),
        At::Answer(p, s) => format!("{}{}{s}", ch(p), ch(Reply)),
        At::Sent => char::from(FIRST).to_string(),
        At::Retried(new) => char::from(if new { NEW_KEY } else { SAME_KEY }).to_string(),
    }
}

/// The line as the reader sees it in `lang`: the code and its comment.
pub fn text(line: &Line, lang: Lang) -> String {
    match (line.code, line.note[lang as usize]) {
        (code, "") => code.to_string(),
        ("", note) => format!("// {note}"),
        (code, note) => format!("{code}  // {note}"),
    }
}

/// The listing of `scenario` in `lang` as a fragment's `code` part: per line its
/// anchors (comma-separated), a space, the escaped line.
pub fn lines(scenario: ScenarioId, lang: Lang) -> String {
    let mut out = String::new();
    for line in of(scenario) {
        let mut words: Vec<String> = line.at.iter().map(|a| word(*a)).collect();
        // Its switches: `?id` on, `!id` off (`codemap::listing` reads them).
        words.extend(
            line.only
                .iter()
                .map(|(t, on)| format!("{}{}", if *on { '?' } else { '!' }, t.id())),
        );
        out.push_str(&words.join(","));
        out.push(' ');
        out.push_str(&escaped(&text(line, lang)));
        out.push('\n');
    }
    out
}

const CHARGE_K1: &str = "POST /charges {amount: 100}  Idempotency-Key: K1";
/// The app, past its deadline, asks by the key (its answer: [`STATUS_PAY`]).
const STATUS_READ: Line = l(
    &[After(Receive, Status)],
    "GET /payments?key=K1: SELECT * FROM payments WHERE user_id = 42 AND idempotency_key = 'K1'",
    "после своего срока приложение спрашивает по ключу",
    "past its deadline the app asks by the key",
);
const LEDGER: &str = "INSERT INTO payments VALUES ('pay_1', 42, 100, 'K1') ON CONFLICT DO NOTHING";
const LEDGER_TX: &str = "BEGIN; INSERT INTO payments VALUES ('pay_1', 42, 100, 'K1'); COMMIT";
const TX: &[At] = &[In(Begin), In(InsertPayment), In(FindPayment), In(Commit)];
const REDIS_GET: &str = "stored = redis.GET idem:u42:K1";
const REPLAY: &str = "if stored: return stored";
const CHARGE: &str = "charge = processor.charge(card, 100)";
const REDIS_SET: &str = "redis.SET idem:u42:K1 '{201, pay_1}' PX 86400000";
const RETURN_PAY: &str = "return 201 {payment_id: pay_1}";
/// The stored answer, and a status read's (found, or reconciled and booked).
const STATUS_PAY: &[At] = &[
    Answer(StoreResponse, 201),
    Answer(Status, 201),
    Answer(Commit, 201),
];
/// The ADR's claim in Redis, and the GET when it fails (or without it).
const CLAIM: Line = l(
    &[In(Claim)],
    "ok = redis.SET idem:u42:K1 '{processing}' NX PX 3000",
    "захват: аренда на 3 с",
    "the claim: a 3 s lease",
);
const CLAIM_GET: Line = l(
    &[In(CheckKey), In(Lookup)],
    "if not ok: stored = redis.GET idem:u42:K1",
    "без атомарного захвата — только GET",
    "no atomic claim: only the GET",
);

use At::*;

/// The listing of `scenario` (a scenario without one does not compile).
pub fn of(scenario: ScenarioId) -> &'static [Line] {
    match scenario {
        ScenarioId::NaivePost => {
            const L: &[Line] = &[
                l(
                    &[In(Receive)],
                    "POST /charges {amount: 100}",
                    "без Idempotency-Key",
                    "no Idempotency-Key",
                ),
                c(&[In(Charge)], CHARGE),
                l(
                    &[In(InsertPayment)],
                    "INSERT INTO payments VALUES ('pay_1', 42, 100, NULL)",
                    "без транзакции",
                    "no transaction",
                ),
                c(&[Answer(InsertPayment, 201)], RETURN_PAY),
            ];
            L
        }
        ScenarioId::IdempotencyKey => {
            const L: &[Line] = &[
                c(&[In(Receive)], CHARGE_K1),
                CLAIM,
                CLAIM_GET,
                l(
                    &[
                        Answer(CheckKey, 201),
                        Answer(CheckKey, 503),
                        Answer(Lookup, 201),
                        Answer(Lookup, 409),
                        Answer(Lookup, 422),
                        Answer(Lookup, 503),
                    ],
                    "  return stored.done ? stored.response : 409",
                    "409, пока processing; 422 — другое тело",
                    "409 while processing; 422: another body",
                ),
                c(
                    &[In(Charge)],
                    "charge = processor.charge(card, 100, idempotency_key: K1)",
                ),
                when(
                    &[(ErrorsReplayed, true)],
                    l(
                        &[After(Charge, StoreResponse)],
                        "  on timeout: redis.SET idem:u42:K1 '{503}'",
                        "Stripe: ошибка хранится",
                        "Stripe: the error is kept",
                    ),
                ),
                when(
                    &[(DeleteOnError, true)],
                    l(
                        &[In(Rollback)],
                        "  on timeout: redis.DEL idem:u42:K1",
                        "Powertools: ключ удалён",
                        "Powertools: the key deleted",
                    ),
                ),
                when(
                    &[(ErrorsReplayed, false), (DeleteOnError, false)],
                    l(&[], "", "ADR: захват остаётся", "the ADR: the claim stays"),
                ),
                // The reply to a timeout, under each of the three designs.
                c(
                    &[
                        Answer(Charge, 503),
                        Answer(StoreResponse, 503),
                        Answer(Rollback, 503),
                    ],
                    "  on timeout: return 503",
                ),
                c(&[In(Begin)], "BEGIN"),
                c(&[In(InsertPayment), In(FindPayment)], LEDGER),
                c(&[In(Commit)], "COMMIT"),
                l(&[After(Commit, StoreResponse)], REDIS_SET, "24 ч", "24 h"),
                // The status read's answer is the same payment.
                c(STATUS_PAY, RETURN_PAY),
                STATUS_READ,
                l(
                    &[After(Status, Reconcile)],
                    "  no row: charge = processor.find(idempotency_key: K1); book it as above",
                    "сверка: проводит найденное списание",
                    "reconciliation: books the charge it finds",
                ),
                l(
                    &[Answer(Status, 503), Answer(Reconcile, 503)],
                    "  else: return 503 outcome_unknown",
                    "сейчас не узнать: приложение спросит позже",
                    "cannot tell now: the app asks again later",
                ),
            ];
            L
        }
        ScenarioId::ConditionalUpdate => {
            const L: &[Line] = &[
            c(
                &[In(Receive)],
                "POST /accounts/1/debit {amount: 20, expected_version: 5}",
            ),
            l(
                &[In(UpdateRow)],
                "UPDATE accounts SET balance = balance - 20, version = version + 1 WHERE id = 1 AND version = 5",
                "без проверки: WHERE id = 1",
                "no check: WHERE id = 1",
            ),
            c(
                &[After(UpdateRow, ReadAccount)],
                "SELECT * FROM accounts WHERE id = 1",
            ),
            l(
                &[Answer(ReadAccount, 409)],
                "if rows == 0: return 409 version_mismatch",
                "409 с кодом version_mismatch: перечитать, не повторять",
                "409 with version_mismatch: re-read, do not retry",
            ),
            c(&[Answer(ReadAccount, 200)], "return 200 {balance, version}"),
            l(
                &[After(Receive, ReadAccount)],
                "GET /accounts/1: SELECT * FROM accounts WHERE id = 1",
                "перечитывание",
                "the re-read",
            ),
        ];
            L
        }
        ScenarioId::CounterIncrement => {
            const L: &[Line] = &[
                c(&[In(Receive)], "POST /posts/1/like {op_id: 'op_7f3a'}"),
                l(
                    &[In(Begin)],
                    "BEGIN",
                    "с проверкой op_id",
                    "with the op_id check",
                ),
                l(
                    &[In(InsertOp)],
                    "INSERT INTO like_ops (op_id) VALUES ('op_7f3a') ON CONFLICT DO NOTHING",
                    "работает только с UNIQUE (op_id)",
                    "works only with UNIQUE (op_id)",
                ),
                l(
                    &[After(InsertOp, Increment), After(Receive, Increment)],
                    "if rows == 1: UPDATE posts SET likes = likes + 1 WHERE id = 1",
                    "без проверки: только UPDATE",
                    "no check: the UPDATE alone",
                ),
                l(
                    &[After(InsertOp, Commit), After(Increment, Commit)],
                    "COMMIT",
                    "0 строк: сразу сюда",
                    "0 rows: straight here",
                ),
                c(
                    &[Answer(Commit, 200), Answer(Increment, 200)],
                    "return 200 liked",
                ),
                c(&[], "-- CREATE UNIQUE INDEX ON like_ops (op_id)"),
            ];
            L
        }
        ScenarioId::ConcurrentDuplicates => {
            const L: &[Line] = &[
            c(&[In(Receive)], CHARGE_K1),
            l(
                &[In(CheckKey)],
                "SELECT * FROM idempotency_keys WHERE user_id = 42 AND key = 'K1' ORDER BY locked_at",
                "нет при атомарном захвате",
                "not with the atomic claim",
            ),
            l(
                &[
                    Answer(CheckKey, 201),
                    Answer(CheckKey, 409),
                    Answer(Lookup, 201),
                    Answer(Lookup, 409),
                ],
                "if found: return completed ? 201 stored : 409",
                "аренда: 3 с",
                "lease: 3 s",
            ),
            l(
                &[In(Claim)],
                "INSERT INTO idempotency_keys (user_id, key, request_hash, status, locked_at) VALUES (42, 'K1', hash, 'processing', t0) ON CONFLICT DO NOTHING",
                "ON CONFLICT — при атомарном захвате",
                "ON CONFLICT: with the atomic claim",
            ),
            l(
                &[Answer(Claim, 409), After(Claim, Lookup)],
                "if rows == 0: SELECT …",
                "без ON CONFLICT — ошибка: 409",
                "no ON CONFLICT: an error, 409",
            ),
            c(&[In(Charge)], CHARGE),
            c(&[In(Begin)], "BEGIN"),
            c(&[In(InsertPayment), In(FindPayment)], LEDGER),
            c(
                &[In(CompleteKey)],
                "UPDATE idempotency_keys SET status = 'completed', response_body = … WHERE … AND locked_at = t0",
            ),
            l(
                &[In(Rollback), After(Rollback, Lookup)],
                "if rows == 0: ROLLBACK; SELECT …",
                "ключ перехвачен",
                "the key was taken over",
            ),
            c(&[In(Commit)], "COMMIT"),
            c(&[Answer(Commit, 201)], RETURN_PAY),
        ];
            L
        }
        ScenarioId::InMemoryStore => {
            const L: &[Line] = &[
                l(
                    &[],
                    "SEEN = HashMap<Key, Response>",
                    "только в этом процессе",
                    "in this process only",
                ),
                c(&[In(Receive)], CHARGE_K1),
                l(
                    &[In(CheckKey)],
                    "stored = SEEN.get(K1)",
                    "общее хранилище: redis.GET",
                    "shared store: redis.GET",
                ),
                c(&[Answer(CheckKey, 201)], REPLAY),
                c(&[In(Charge)], CHARGE),
                c(TX, LEDGER_TX),
                l(
                    &[In(StoreResponse)],
                    "SEEN.put(K1, '{201, pay_1}')",
                    "запись в словарь этого процесса",
                    "write to this process's map",
                ),
                c(&[Answer(StoreResponse, 201)], RETURN_PAY),
            ];
            L
        }
        ScenarioId::KeyReuseDifferentBody => {
            const L: &[Line] = &[
                l(
                    &[In(Receive)],
                    "POST /charges {amount}  Idempotency-Key: K1",
                    "100, затем 150",
                    "100, then 150",
                ),
                c(&[In(CheckKey)], REDIS_GET),
                l(
                    &[Answer(CheckKey, 422)],
                    "if stored and stored.request_hash != sha256(body): return 422",
                    "с отпечатком",
                    "with the fingerprint",
                ),
                l(
                    &[Answer(CheckKey, 201)],
                    REPLAY,
                    "без него — только по ключу",
                    "without it: by the key alone",
                ),
                c(&[In(Charge)], "charge = processor.charge(card, amount)"),
                c(TX, LEDGER_TX),
                c(
                    &[In(StoreResponse)],
                    "redis.SET idem:u42:K1 '{201, pay_1, request_hash}' PX 86400000",
                ),
                c(&[Answer(StoreResponse, 201)], RETURN_PAY),
            ];
            L
        }
        ScenarioId::TtlExpiry => {
            const L: &[Line] = &[
                c(&[In(Receive)], CHARGE_K1),
                l(
                    &[In(CheckKey)],
                    REDIS_GET,
                    "nil, если ключа нет",
                    "nil if the key is absent",
                ),
                c(&[Answer(CheckKey, 201)], REPLAY),
                c(&[In(Charge)], CHARGE),
                c(TX, LEDGER_TX),
                l(&[In(StoreResponse)], REDIS_SET, "24 ч", "24 h"),
                // The status read's answer is the same payment.
                c(STATUS_PAY, RETURN_PAY),
                STATUS_READ,
            ];
            L
        }
        ScenarioId::CrashAfterCharge => {
            const L: &[Line] = &[
            c(&[In(Receive)], CHARGE_K1),
            l(
                &[In(CheckKey)],
                REDIS_GET,
                "в одной транзакции: SELECT из idempotency_keys",
                "in one transaction: SELECT from idempotency_keys",
            ),
            c(
                &[Answer(CheckKey, 201), Answer(CheckKey, 409)],
                "if stored: return completed ? 201 stored : 409",
            ),
            l(
                &[In(Takeover)],
                "if locked_at older than 3 s: UPDATE idempotency_keys SET status = 'processing', locked_at = t0 WHERE … AND locked_at = old",
                "забрать захват",
                "take it over",
            ),
            l(
                &[In(Claim)],
                "INSERT INTO idempotency_keys (user_id, key, request_hash, status, locked_at) VALUES (42, 'K1', hash, 'processing', t0)",
                "в одной транзакции",
                "in one transaction",
            ),
            l(
                &[In(Charge)],
                CHARGE,
                "с ключом — по переключателю",
                "with the key: a switch",
            ),
            c(&[In(Begin)], "BEGIN"),
            c(&[In(InsertPayment), In(FindPayment)], LEDGER),
            l(
                &[In(CompleteKey)],
                "UPDATE idempotency_keys SET status = 'completed', response_body = '{201, pay_1}' WHERE … AND locked_at = t0",
                "в одной транзакции",
                "in one transaction",
            ),
            c(&[In(Commit)], "COMMIT"),
            l(
                &[In(StoreResponse)],
                REDIS_SET,
                "иначе ключ только здесь",
                "else the key lives only here",
            ),
            c(
                &[Answer(StoreResponse, 201), Answer(Commit, 201)],
                RETURN_PAY,
            ),
        ];
            L
        }
        ScenarioId::TransactionIsNotIdempotency => {
            const L: &[Line] = &[
                c(&[In(Receive)], "POST /charges {amount: 100}"),
                l(
                    &[In(CheckKey)],
                    "Key k = keys.find(42, K1);",
                    "с ключом: SELECT",
                    "with a key: SELECT",
                ),
                c(
                    &[Answer(CheckKey, 201), Answer(CheckKey, 409)],
                    "if (k != null) return k.response();",
                ),
                l(
                    &[In(Claim)],
                    "keys.claim(42, K1);",
                    "захват: INSERT … 'processing'",
                    "the claim: INSERT … 'processing'",
                ),
                l(
                    &[In(Begin)],
                    "@Transactional",
                    "BEGIN до метода, COMMIT после",
                    "BEGIN before the method, COMMIT after it",
                ),
                c(&[], "Payment charge(ChargeRequest req) {"),
                c(
                    &[In(Charge)],
                    "  Charge c = processor.charge(req.card(), req.amount());",
                ),
                c(
                    &[In(InsertPayment), In(FindPayment)],
                    "  Entry e = ledger.save(new Entry(req.userId(), req.amount()));",
                ),
                l(
                    &[In(CompleteKey)],
                    "  keys.complete(42, K1, e.id());",
                    "с ключом",
                    "with a key",
                ),
                l(
                    &[In(Commit), Answer(Commit, 201)],
                    "  return new Payment(e.id());",
                    "COMMIT, затем 201",
                    "COMMIT, then 201",
                ),
                c(&[], "}"),
            ];
            L
        }
        ScenarioId::ConsumerRedelivery => {
            const L: &[Line] = &[
            l(
                &[In(Publish)],
                "producer.send('evt_1')",
                "API; без подтверждения (ack) — отправит снова",
                "the API; without an ack it sends again",
            ),
            l(
                &[In(Consume)],
                "msg = consumer.poll()",
                "evt_1: списать 100 со счёта 1",
                "evt_1: debit account 1 by 100",
            ),
            c(&[In(Begin)], "BEGIN"),
            l(
                &[In(Dedup)],
                "INSERT INTO processed_messages (message_id) VALUES ('evt_1') ON CONFLICT DO NOTHING",
                "с дедупликацией",
                "with deduplication",
            ),
            c(
                &[After(Dedup, Apply), After(Begin, Apply)],
                "if rows == 1: UPDATE accounts SET balance = balance - 100, version = version + 1 WHERE id = 1",
            ),
            l(
                &[After(Dedup, Commit), After(Apply, Commit)],
                "COMMIT",
                "0 строк: сразу сюда",
                "0 rows: straight here",
            ),
            l(
                &[In(CommitOffset)],
                "consumer.commitSync()",
                "фиксирует смещение (offset)",
                "commits the offset",
            ),
        ];
            L
        }
        ScenarioId::NewKeyPerRetry => {
            const L: &[Line] = &[
                l(
                    &[Sent],
                    "key = uuid4()",
                    "верно: один раз на платёж",
                    "right: once per payment",
                ),
                c(&[], "loop until a response {"),
                l(
                    &[Retried(true)],
                    "  key = uuid4()",
                    "баг: новый ключ на попытку",
                    "bug: a new key per attempt",
                ),
                c(
                    &[Retried(false)],
                    "  send POST /charges {amount: 100}  Idempotency-Key: key",
                ),
                c(&[], "}"),
                c(&[In(Receive)], "API: POST /charges  Idempotency-Key: key"),
                l(
                    &[In(CheckKey)],
                    "stored = redis.GET idem:u42:key",
                    "поиск по ключу этой попытки",
                    "look up this attempt's key",
                ),
                c(&[Answer(CheckKey, 201)], REPLAY),
                c(&[In(Charge)], CHARGE),
                c(
                    TX,
                    "BEGIN; INSERT INTO payments VALUES ('pay_1', 42, 100, key); COMMIT",
                ),
                c(
                    &[In(StoreResponse)],
                    "redis.SET idem:u42:key '{201, pay_1}' PX 86400000",
                ),
                c(&[Answer(StoreResponse, 201)], RETURN_PAY),
            ];
            L
        }
        ScenarioId::StatusTransition => {
            const L: &[Line] = &[
                c(&[In(Receive)], "POST /orders/42/pay"),
                l(
                    &[In(UpdateStatus)],
                    "UPDATE orders SET status = 'PAID' WHERE id = 42 AND status = 'NEW'",
                    "без аренды: флаг коммитится до списания",
                    "no lease: the flag commits before the charge",
                ),
                l(
                    &[Answer(UpdateStatus, 200)],
                    "if rows == 0: return 200 {status: 'PAID'}",
                    "без проверки: списать снова",
                    "no check: charge again",
                ),
                l(
                    &[In(ClaimOrder)],
                    "UPDATE orders SET status = 'PAYING', locked_at = now() WHERE id = 42 AND status = 'NEW'",
                    "с арендой: её начало — метка",
                    "with a lease: its start is the token",
                ),
                c(
                    &[In(ReadOrder)],
                    "if rows == 0: order = SELECT * FROM orders WHERE id = 42",
                ),
                c(
                    &[Answer(ReadOrder, 200)],
                    "  if order.status == 'PAID': return 200 {status: 'PAID'}",
                ),
                l(
                    &[],
                    "",
                    "PAYING в пределах аренды — 409; после неё — перехват с новой меткой (UPDATE … WHERE locked_at = прочитанная) и снова списание с тем же ключом",
                    "PAYING within its lease: 409; past it, a takeover with a new token (UPDATE … WHERE locked_at = the one read), and the charge again with the same key",
                ),
                c(&[After(UpdateStatus, Charge)], CHARGE),
                c(
                    &[After(ClaimOrder, Charge), After(Takeover, Charge)],
                    "charge = processor.charge(card, 100, idempotency_key: 'order-42')",
                ),
                c(&[In(Begin)], "BEGIN"),
                c(
                    &[In(InsertPayment)],
                    "INSERT INTO payments VALUES ('pay_1', 42, 100, NULL)",
                ),
                l(
                    &[Answer(InsertPayment, 200)],
                    "return 200 {status: 'PAID'}",
                    "без аренды: без транзакции",
                    "no lease: no transaction",
                ),
                l(
                    &[In(MarkPaid)],
                    "UPDATE orders SET status = 'PAID' WHERE id = 42 AND status = 'PAYING' AND locked_at = token",
                    "в той же транзакции, если аренда ещё своя",
                    "in the same transaction, if the lease is still its own",
                ),
                c(&[In(Commit)], "COMMIT"),
                c(&[Answer(Commit, 200)], "return 200 {status: 'PAID'}"),
            ];
            L
        }
        ScenarioId::ReceiptEmail => {
            const L: &[Line] = &[
                c(&[In(Receive)], CHARGE_K1),
                CLAIM,
                CLAIM_GET,
                c(
                    &[
                        Answer(CheckKey, 201),
                        Answer(Lookup, 201),
                        Answer(Lookup, 409),
                    ],
                    "  return stored.done ? stored.response : 409",
                ),
                c(
                    &[In(Charge)],
                    "charge = processor.charge(card, 100, idempotency_key: K1)",
                ),
                c(&[In(Begin)], "BEGIN"),
                c(&[In(InsertPayment), In(FindPayment)], LEDGER),
                when(
                    &[(Toggle::Outbox, true)],
                    l(
                        &[In(Outbox)],
                        "INSERT INTO outbox VALUES ('rcpt_pay_1', 'pay_1', 'pending') ON CONFLICT DO NOTHING",
                        "с outbox: чек фиксируется вместе со строкой",
                        "with the outbox: the receipt commits with the row",
                    ),
                ),
                c(&[In(Commit)], "COMMIT"),
                when(
                    &[(Toggle::Outbox, false)],
                    l(
                        &[After(Commit, SendEmail)],
                        "mail.send(receipt(pay_1))",
                        "без outbox: вне транзакции и ключа",
                        "no outbox: outside the transaction and the key",
                    ),
                ),
                l(
                    &[Answer(Charge, 503), Answer(SendEmail, 503)],
                    "  on timeout: return 503",
                    "ADR: захват остаётся",
                    "the ADR: the claim stays",
                ),
                l(
                    &[After(Commit, StoreResponse), After(SendEmail, StoreResponse)],
                    REDIS_SET,
                    "24 ч", "24 h",
                ),
                c(&[Answer(StoreResponse, 201)], RETURN_PAY),
                l(
                    &[],
                    "",
                    "ретранслятор outbox, после фиксации, хотя бы один раз:",
                    "the outbox's relay, after the commit, at least once:",
                ),
                c(&[In(Poll)], "SELECT * FROM outbox WHERE status = 'pending' ORDER BY id"),
                l(
                    &[In(RelaySend)],
                    "mail.send(receipt(pay_1), idempotency_key: 'rcpt_pay_1')",
                    "id чека — ключ идемпотентности",
                    "the receipt's id as the idempotency key",
                ),
                c(
                    &[In(MarkSent)],
                    "UPDATE outbox SET status = 'sent' WHERE id = 'rcpt_pay_1'",
                ),
            ];
            L
        }
        ScenarioId::LatePut => {
            const L: &[Line] = &[
                c(
                    &[In(Receive)],
                    "PUT /profile {email: 'ann@app.io'}  If-Match: \"5\"",
                ),
                l(
                    &[In(UpdateRow)],
                    "UPDATE profiles SET email = 'ann@app.io', version = version + 1 WHERE id = 42 AND version = 5",
                    "без If-Match: WHERE id = 42",
                    "no If-Match: WHERE id = 42",
                ),
                c(
                    &[After(UpdateRow, ReadAccount)],
                    "SELECT * FROM profiles WHERE id = 42",
                ),
                l(
                    &[Answer(ReadAccount, 412)],
                    "if rows == 0: return 412 Precondition Failed",
                    "приложение перечитает профиль",
                    "the app re-reads the profile",
                ),
                c(&[Answer(ReadAccount, 200)], "return 200 {email}"),
                l(
                    &[After(Receive, ReadAccount)],
                    "GET /profile: SELECT * FROM profiles WHERE id = 42",
                    "перечитывание",
                    "the re-read",
                ),
            ];
            L
        }
        ScenarioId::KeyScope => {
            const L: &[Line] = &[
                l(
                    &[In(Receive)],
                    "POST /charges {amount: 100}, then POST /refunds  Idempotency-Key: K1",
                    "K1 — из номера заказа: order-42",
                    "K1 is made from the order: order-42",
                ),
                l(
                    &[],
                    "",
                    "с методом и путём: idem:u42:POST /refunds:K1",
                    "scoped: idem:u42:POST /refunds:K1",
                ),
                CLAIM,
                CLAIM_GET,
                l(
                    &[Answer(CheckKey, 422), Answer(Lookup, 422)],
                    "  if stored.request_hash != hash(method, path, body): return 422",
                    "с отпечатком",
                    "with the fingerprint",
                ),
                l(
                    &[
                        Answer(CheckKey, 201),
                        Answer(Lookup, 201),
                        Answer(Lookup, 409),
                    ],
                    "  return stored.done ? stored.response : 409",
                    "ответ, сохранённый под ключом",
                    "the response stored under the key",
                ),
                l(
                    &[In(Charge)],
                    "charge = processor.charge(card, amount, idempotency_key: K1)",
                    "возврат: -100",
                    "a refund: -100",
                ),
                c(&[In(Begin)], "BEGIN"),
                c(
                    &[In(InsertPayment), In(FindPayment)],
                    "INSERT INTO payments VALUES ('re_2', 42, -100, 'K1') ON CONFLICT DO NOTHING",
                ),
                c(&[In(Commit)], "COMMIT"),
                l(&[After(Commit, StoreResponse)], REDIS_SET, "24 ч", "24 h"),
                c(&[Answer(StoreResponse, 201)], "return 201 {payment_id}"),
            ];
            L
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lesson::codemap::{self, Key};
    use idem_sim::scenario::{self, Toggles};
    use idem_sim::{Config, Run};

    /// Every scenario under every combination of its switches, for a few seeds.
    fn runs(s: &scenario::Scenario) -> Vec<(String, Run)> {
        let n = s.toggles.len();
        let mut out = Vec::new();
        for mask in 0..1u32 << n {
            let mut t = Toggles::of(&[]);
            for (i, (toggle, _)) in s.toggles.iter().enumerate() {
                t = t.with(*toggle, mask & 1 << i != 0);
            }
            for seed in 1..=3 {
                let config = Config {
                    toggles: t,
                    seed,
                    random: Default::default(),
                };
                out.push((format!("{t:?} seed {seed}"), Run::new(s.clone(), config)));
            }
        }
        out
    }

    /// The lines of `id`'s listing that `key` names.
    fn lines_of(id: ScenarioId, key: Key) -> Vec<usize> {
        let words = lines(id, Lang::En);
        (0..of(id).len())
            .filter(|&i| codemap::runs(words.lines().nth(i).unwrap_or_default(), key))
            .collect()
    }

    /// The listings are the rules: over every scenario, every combination of its
    /// switches and three seeds, everything a handler runs (each phase it enters,
    /// from the phase before, and each status it answers) has exactly one line of
    /// the scenario's listing, and so has each attempt the app sends where the
    /// listing shows the app; and every line of every listing runs in some run,
    /// except declarations and comments, which hold no step.
    #[test]
    fn every_line_runs_and_every_step_has_its_line() {
        for s in scenario::all() {
            let id = s.id;
            let listing = of(id);
            assert!(!listing.is_empty(), "{id} has no listing");
            let app = listing
                .iter()
                .any(|l| l.at.iter().any(|a| matches!(a, Sent | Retried(_))));
            let mut ran = vec![false; listing.len()];
            for (what, run) in runs(s) {
                codemap::keys(&run.trace, |ev| {
                    let at = lines_of(id, ev);
                    let client = [FIRST, SAME_KEY, NEW_KEY].contains(&ev.bytes()[1]);
                    if client && !app {
                        return;
                    }
                    assert_eq!(
                        at.len(),
                        1,
                        "{id} ({what}): {:?} runs lines {at:?}",
                        String::from_utf8_lossy(ev.bytes())
                    );
                    ran[at[0]] = true;
                });
            }
            for (i, line) in listing.iter().enumerate() {
                if line.at.is_empty() {
                    for word in [
                        "SELECT",
                        "INSERT",
                        "UPDATE",
                        "BEGIN",
                        "COMMIT",
                        "redis.",
                        "return",
                        "processor.",
                    ] {
                        assert!(
                            !line.code.contains(word),
                            "{id} line {i} holds a step but no anchor: {}",
                            line.code
                        );
                    }
                } else {
                    assert!(ran[i], "{id} line {i} never runs: {}", line.code);
                }
            }
        }
    }

    /// The comment is the language's; the code is the same in both.
    #[test]
    fn the_code_once_the_comments_per_language() {
        for id in ScenarioId::ALL {
            let (ru, en) = (lines(id, Lang::Ru), lines(id, Lang::En));
            for (r, e) in ru.lines().zip(en.lines()) {
                let code = |l: &str| l.split("  // ").next().unwrap_or_default().to_string();
                // A line that is only a comment (its text starts with `//`) differs.
                let comment = r.split_once(' ').is_some_and(|(_, t)| t.starts_with("//"));
                if !comment || !e.contains(" // ") {
                    assert_eq!(code(r), code(e), "{id}");
                }
            }
            assert_eq!(
                lines(id, Lang::En).lines().next().map(|l| l.contains(' ')),
                Some(true)
            );
        }
    }
}
