//! The scenarios of the lesson, as data: who takes part, what the handler
//! does, which toggles (defences, bugs, variants) the reader can flip, the
//! faults that happen by default, and the invariants to watch.

use crate::command::Command;
use crate::db::{Table, Value};
use crate::invariant::Invariant;
use crate::net::{FaultRule, Links, Matcher, NodeId, Verdict};
use crate::time::Millis;

/// Declares [`Phase`] and [`Phase::ALL`], every phase in declaration order.
/// A phase has no order: nothing may compare two (a handler names the phases
/// it means), so `Phase` is not `Ord`.
macro_rules! phases {
    ($($(#[$doc:meta])* $v:ident,)*) => {
        /// A named step of a request handler. The page highlights the matching line
        /// of the handler's code; crash rules name the phase at which a node dies.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Phase {
            $($(#[$doc])* $v,)*
        }

        impl Phase {
            /// Every phase, in declaration order.
            pub const ALL: [Phase; [$(stringify!($v)),*].len()] = [$(Phase::$v),*];
        }
    };
}

phases! {
    Receive,
    /// Look the key up (Redis GET, SELECT, or the in-process map).
    CheckKey,
    /// Claim the key (SET NX, INSERT … ON CONFLICT DO NOTHING, plain INSERT).
    Claim,
    /// Read the stored key after a claim found it taken; the reconciliation
    /// job reads the answer stored under an unbooked charge's key.
    Lookup,
    /// Take over a claim whose owner died (its lease ran out).
    Takeover,
    Charge,
    Begin,
    InsertPayment,
    /// The ledger already had this key's payment: read it, to answer with it.
    FindPayment,
    /// Mark the key completed with its response.
    CompleteKey,
    Commit,
    /// Write the response to the key store after the transaction.
    StoreResponse,
    Rollback,
    Reply,
    /// The conditional UPDATE of a row (or not): a debit of the account, or a
    /// PUT's new email.
    UpdateRow,
    /// SELECT the account (re-read).
    ReadAccount,
    InsertOp,
    Increment,
    UpdateStatus,
    /// The order from NEW to PAYING, with this moment as its lease's token.
    ClaimOrder,
    /// Read the order (a claim found it taken: PAID, or PAYING by whom and since when).
    ReadOrder,
    /// The order from PAYING to PAID, in the ledger row's transaction, fenced by the token.
    MarkPaid,
    /// Producer: send the event to the broker.
    Publish,
    /// Consumer: a record arrived.
    Consume,
    /// Consumer: INSERT INTO processed_messages … ON CONFLICT DO NOTHING.
    Dedup,
    /// Consumer: apply the effect.
    Apply,
    /// Consumer: commit the offset to the broker.
    CommitOffset,
    /// INSERT INTO outbox: the receipt, in the ledger row's transaction.
    Outbox,
    /// The handler itself sends the receipt to the mail service, after the commit.
    SendEmail,
    /// The outbox's relay: SELECT the oldest receipt not yet sent.
    Poll,
    /// The outbox's relay: mark the receipt sent.
    MarkSent,
    /// The outbox's relay: send the receipt it read, with its id, to the mail service.
    RelaySend,
    /// A status read: the operation as the ledger has it, by its key.
    Status,
    /// Reconciliation: ask the processor for the charge made with the key,
    /// to book it where the ledger lacks it.
    Reconcile,
    /// The reconciliation job: list the processor's charges.
    ListCharges,
    /// The reconciliation job: read the ledger, to match each charge by its key.
    MatchLedger,
}

/// Where the API keeps idempotency keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyStore {
    Redis,
    Postgres,
    /// A HashMap inside the API process.
    Memory,
}

/// What the API's handler does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Handler {
    /// `POST /charges`. With a key store it deduplicates by Idempotency-Key;
    /// `transactional` wraps the handler in BEGIN … COMMIT (`@Transactional`).
    Charge {
        store: Option<KeyStore>,
        transactional: bool,
        /// After the payment commits it sends the customer a receipt by email
        /// (with [`Toggle::Outbox`]: through the transactional outbox).
        receipt: bool,
    },
    /// `POST /accounts/1/debit` with `expected_version`.
    Debit,
    /// `POST /posts/1/like` with an op_id.
    Like,
    /// `POST /orders/42/pay`: a conditional status transition, then the charge.
    PayOrder,
    /// The API publishes an event to a broker; a consumer applies it.
    Pipeline,
    /// `PUT /profile {email}`, with the version the app read in `If-Match`.
    Put,
}

/// How an operation gets its idempotency key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyMode {
    /// A fresh UUID v4, made once for this operation.
    New,
    /// The key of an earlier operation (a client bug).
    ReuseOf(usize),
    /// A key the app derives from what the operation is about (`order-42`):
    /// every operation with this name sends the same key.
    Named(&'static str),
}

/// What the client wants, one conceptual operation at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpSpec {
    Charge(i64),
    Debit {
        amount: i64,
        expected_version: i64,
    },
    Like(&'static str),
    PayOrder {
        order: i64,
        amount: i64,
    },
    /// Refund the payment: `POST /refunds`.
    Refund(i64),
    /// Set the profile's email; `version` is the one the client read (`If-Match`).
    Put {
        email: &'static str,
        version: i64,
    },
}

/// The profile's email as the run begins, as the app PUTs it, and as another
/// client (the web version) PUTs it while the app's answer is lost.
pub const EMAILS: [&str; 3] = ["ann@old.io", "ann@app.io", "ann@web.io"];

/// One operation of the client's script.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Op {
    pub spec: OpSpec,
    pub key: KeyMode,
    /// How many identical requests leave at once (2: a double submit).
    pub copies: u32,
    /// The user the request is made for: keys are scoped per user.
    pub user: i64,
}

impl Op {
    pub const fn new(spec: OpSpec) -> Op {
        Op {
            spec,
            key: KeyMode::New,
            copies: 1,
            user: USER_ID,
        }
    }
}

/// When a scripted command is applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum When {
    /// At this virtual time.
    At(Millis),
    /// When attempt `attempt` of operation `op` times out, before the retry is planned.
    ClientTimedOut { op: usize, attempt: u32 },
}

/// A command the scenario applies by itself.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Scripted {
    pub when: When,
    pub command: Command,
    /// Only when this toggle is on (a variant).
    pub only_with: Option<Toggle>,
}

/// A node dies right after one of its handlers finished phase `after`,
/// before it starts the next one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CrashRule {
    pub node: NodeId,
    pub after: Phase,
    /// How many times it fires.
    pub times: u32,
    /// Only when this toggle is in this state (a variant of the story).
    pub if_toggle: Option<(Toggle, bool)>,
}

/// A kind of fault the reader can cause.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FaultClass {
    /// A process crashes (and its supervisor restarts it), or restarts early.
    Crash,
    /// A message in flight, or the next response, is lost.
    Loss,
    /// The clock jumps an hour (a process paused, a lease ran out under it).
    Clock,
    /// The clock jumps past a day (the lab's +25 h): past the keys' 24 h, the
    /// processor's, and the app's retry deadline.
    DayLater,
    /// The client fires extra copies of its request at once.
    Parallel,
}

impl FaultClass {
    pub const ALL: [FaultClass; 5] = [
        FaultClass::Crash,
        FaultClass::Loss,
        FaultClass::Clock,
        FaultClass::DayLater,
        FaultClass::Parallel,
    ];

    /// The class of a reader's command (`None`: not a fault).
    pub fn of(cmd: &Command) -> Option<FaultClass> {
        Some(match cmd {
            Command::Crash(_) | Command::Restart(_) => FaultClass::Crash,
            Command::Lose(_) | Command::LoseNextResponse => FaultClass::Loss,
            Command::AdvanceClock(d) if *d >= Millis::hours(24) => FaultClass::DayLater,
            Command::AdvanceClock(_) => FaultClass::Clock,
            Command::ParallelRetries(_) => FaultClass::Parallel,
            Command::ExternalDebit { .. } | Command::ExternalPut => return None,
        })
    }
}

/// A real limit of a scenario's defences, which the lesson teaches: under these
/// faults its defended configuration may still break these invariants, and
/// `shown_by` is the scenario that shows the reader why. The sweep and the
/// exhaustive exploration allow exactly these breaks and check that each shows.
/// Why it breaks is said in a comment at each limit, not in a field: a string
/// here would be data of the page's module, which never shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Limit {
    pub faults: &'static [FaultClass],
    pub breaks: &'static [Invariant],
    pub shown_by: ScenarioId,
}

const MONEY: &[Invariant] = &[Invariant::AtMostOnceCharge, Invariant::LedgerMatchesCharges];

/// The pitfalls that each teach one defence keep the rest of their handler
/// naive: no claim (GET, then SET after the work) and no key to the processor: a
/// duplicate during the work, or a retry after a lost answer or a crash, finds no
/// key and charges again.
const CHECK_THEN_ACT: Limit = Limit {
    faults: &[
        FaultClass::Crash,
        FaultClass::Loss,
        FaultClass::Clock,
        FaultClass::Parallel,
    ],
    breaks: MONEY,
    shown_by: ScenarioId::ConcurrentDuplicates,
};

/// A day later (+25 h) the app is past its retry deadline (12 h): it asks the
/// API what became of the payment, by its key, and the API reconciles before
/// it answers: a charge whose ledger row never committed is found at the
/// processor by the key and booked. A pitfall that never gives the processor
/// the key can neither find that charge nor tell the app: the charge stays
/// unbooked and the app "checking".
pub(crate) const DAY_LATER_UNBOOKED: Limit = Limit {
    faults: &[FaultClass::DayLater],
    breaks: &[Invariant::DefiniteAnswer, Invariant::LedgerMatchesCharges],
    shown_by: ScenarioId::TtlExpiry,
};

/// The two groups of the scenario picker.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Group {
    /// The four scenarios of the concept lesson.
    Seed,
    /// Pitfalls from the interview guide and the anti-patterns.
    Pitfall,
}

/// A figure of the outcome pane: what a scenario asks the reader to watch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Figure {
    /// Charges at the card processor (and, per operation, in the client pane).
    Charges,
    /// Committed rows of the ledger.
    LedgerRows,
    /// The account's balance and version.
    Account,
    /// The post's likes.
    Likes,
    /// The order's status.
    OrderStatus,
    /// The receipts the customer received by email.
    Receipts,
    /// The profile's email and version.
    Profile,
}

/// A scenario.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Scenario {
    pub id: ScenarioId,
    pub group: Group,
    pub handler: Handler,
    /// API instances behind the load balancer.
    pub apis: u8,
    pub ops: &'static [Op],
    /// The client's retry policy; the run's toggles may change it ([`Scenario::retry_policy`]).
    pub retry: Retry,
    pub links: Links,
    /// Faults that happen unless the reader changes the run.
    pub faults: &'static [FaultRule],
    pub crashes: &'static [CrashRule],
    pub script: &'static [Scripted],
    /// The toggles offered, with their default state.
    pub toggles: &'static [(Toggle, bool)],
    pub invariants: &'static [Invariant],
    /// A crashed node comes back after this long (a supervisor restarts it).
    pub auto_restart: Option<Millis>,
    /// The figures its outcome pane shows, in order (`World::observables` has
    /// exactly these; a test checks that its stores hold each).
    pub shows: &'static [Figure],
    /// The ledger row carries the key under `UNIQUE (user_id, idempotency_key)`
    /// (written in the effect's own transaction, it is the key's durable record);
    /// where the scenario offers `SameTransaction`, that toggle decides instead.
    pub ledger_key: bool,
    /// What its defended configuration cannot survive, and which scenario shows it.
    pub limits: &'static [Limit],
    /// The Explore panel's bound of lost messages at first: 2 where the panel's
    /// search from the default run's start with two losses and a crash finishes
    /// within [`crate::wire::MAX_STATES`], else 1 (`explorer.rs` checks both ways).
    pub explore_losses: u32,
}

const USER: i64 = 42;
/// The user every request belongs to.
pub const USER_ID: i64 = USER;

/// The order's columns with [`Toggle::PayingLease`]: `locked_at` is the
/// lease's start and its fencing token (NULL before the first claim).
pub const ORDER_COLUMNS: [&str; 3] = ["id", "status", "locked_at"];

/// The ledger's columns, in the order `SELECT *` returns them.
pub const PAYMENT_COLUMNS: [&str; 4] = ["id", "user_id", "amount", "idempotency_key"];

/// The outbox's columns: the message id (the receipt's id, made from the
/// payment's), the payment, and `pending` until the relay has sent it.
pub const OUTBOX_COLUMNS: [&str; 3] = ["id", "payment_id", "status"];

/// The key table's columns, in the order `SELECT *` returns them.
pub const KEY_COLUMNS: [&str; 7] = [
    "user_id",
    "key",
    "request_hash",
    "status",
    "response_code",
    "response_body",
    "locked_at",
];

impl Scenario {
    /// The client's retry policy under `toggles` (the reader's presets: [`Retry::under`]).
    pub fn retry_policy(&self, toggles: Toggles) -> Retry {
        self.retry.under(toggles)
    }

    /// The same scenario with its client under `retry` (the reader's numbers): what
    /// a link, a re-run and the explorer's worker each run.
    pub fn with_retry(&self, retry: Retry) -> Scenario {
        Scenario {
            retry,
            ..self.clone()
        }
    }

    /// The defences this scenario offers, in its order (bugs and variants are not
    /// defences): what the truth table combines and what a "fix it" answer picks from.
    pub fn defences(&self) -> Vec<Toggle> {
        self.toggles
            .iter()
            .map(|(t, _)| *t)
            .filter(|t| t.kind() == ToggleKind::Defence)
            .collect()
    }

    /// The faults of a run under `toggles`: with [`Toggle::ProcessorTimeout`] the
    /// processor's answer to the first charge is lost, instead of the scenario's
    /// own faults.
    pub fn faults_for(&self, toggles: Toggles) -> Vec<FaultRule> {
        if toggles.has(Toggle::ProcessorTimeout) {
            return vec![FaultRule {
                // The link carries the charge first, then its answer.
                matcher: Matcher::Link(NodeId::Api(0), NodeId::Processor),
                verdict: Verdict::Drop,
                skip: 1,
                times: 1,
            }];
        }
        self.faults.to_vec()
    }

    /// The toggles on by default.
    pub fn default_toggles(&self) -> Toggles {
        let on: Vec<Toggle> = self
            .toggles
            .iter()
            .filter(|(_, on)| *on)
            .map(|(t, _)| *t)
            .collect();
        Toggles::of(&on)
    }

    /// Toggles with every defence on and every bug off (variants as by default).
    pub fn defended(&self) -> Toggles {
        self.toggles
            .iter()
            .fold(self.default_toggles(), |acc, (t, _)| match t.kind() {
                ToggleKind::Defence => acc.with(*t, true),
                ToggleKind::Bug => acc.with(*t, false),
                ToggleKind::Variant => acc,
            })
    }

    /// Toggles with every defence off and every bug on.
    pub fn undefended(&self) -> Toggles {
        self.toggles
            .iter()
            .fold(self.default_toggles(), |acc, (t, _)| match t.kind() {
                ToggleKind::Defence => acc.with(*t, false),
                ToggleKind::Bug => acc.with(*t, true),
                ToggleKind::Variant => acc,
            })
    }

    pub fn offers(&self, t: Toggle) -> bool {
        self.toggles.iter().any(|(x, _)| *x == t)
    }

    /// The invariants its defended configuration may break under a fault of `class`.
    pub fn allowed_breaks(&self, class: FaultClass) -> Vec<Invariant> {
        let mut v: Vec<Invariant> = self
            .limits
            .iter()
            .filter(|l| l.faults.contains(&class))
            .flat_map(|l| l.breaks.iter().copied())
            .collect();
        v.sort();
        v.dedup();
        v
    }

    /// The nodes drawn for this scenario. A payment (`Charge`, `PayOrder`) draws the
    /// whole payment system, the idempotency store too where its handler leaves it
    /// idle (naive-post): the store is there, the handler does not use it. The
    /// others draw only what their runs reach: late-put's profile has no Redis and no
    /// card processor.
    pub fn nodes(&self) -> Vec<NodeId> {
        let mut v = Vec::new();
        if self.handler != Handler::Pipeline {
            v.push(NodeId::Client);
        }
        v.extend((0..self.apis).map(NodeId::Api));
        match self.handler {
            Handler::Pipeline => v.extend([NodeId::Broker, NodeId::Consumer, NodeId::Postgres]),
            _ if self.takes_payments() => {
                v.extend([NodeId::Redis, NodeId::Postgres, NodeId::Processor])
            }
            _ => v.push(NodeId::Postgres),
        }
        if self.sends_receipts() {
            v.push(NodeId::Mail);
        }
        if self.reconciles() {
            v.push(NodeId::Reconciler);
        }
        v
    }

    /// Whether `n` is one of [`Scenario::nodes`] (without listing them: a
    /// crash the explorer takes asks).
    pub fn has_node(&self, n: NodeId) -> bool {
        match n {
            NodeId::Api(i) => i < self.apis,
            NodeId::Consumer => self.handler == Handler::Pipeline,
            n => self.nodes().contains(&n),
        }
    }

    /// Its defended system runs the reconciliation job (`node::reconciler`):
    /// the job is drawn, idle under switches that leave it out.
    pub fn reconciles(&self) -> bool {
        crate::node::config::NodeConfig::new(self, self.defended()).reconcile
    }

    /// It is a payment (`Charge`, `PayOrder`): its API is a payment API, its
    /// Postgres the payments ledger, and the card processor takes the money.
    /// The others (an account, a like, a profile) are an API and a database.
    pub fn takes_payments(&self) -> bool {
        matches!(self.handler, Handler::Charge { .. } | Handler::PayOrder)
    }

    /// Its handler emails the customer a receipt for each payment.
    pub fn sends_receipts(&self) -> bool {
        matches!(self.handler, Handler::Charge { receipt: true, .. })
    }

    /// Whether its outcome pane shows `f`.
    pub fn shows(&self, f: Figure) -> bool {
        self.shows.contains(&f)
    }

    /// The ledger's rows carry the key under a unique index: a second row for
    /// the same key is refused (what makes booking a found charge idempotent).
    pub fn ledger_refuses_a_second_row(&self, toggles: Toggles) -> bool {
        if self.offers(Toggle::SameTransaction) {
            toggles.has(Toggle::SameTransaction)
        } else {
            self.ledger_key
                && (toggles.has(Toggle::UniqueConstraint) || !self.offers(Toggle::UniqueConstraint))
        }
    }

    /// The tables at the start of the run.
    pub fn tables(&self, toggles: Toggles) -> Vec<Table> {
        let unique =
            toggles.has(Toggle::UniqueConstraint) || !self.offers(Toggle::UniqueConstraint);
        let mut t = Vec::new();
        match self.handler {
            Handler::Charge { .. } | Handler::PayOrder => {
                // The ledger row carries the key under a unique index: written in the
                // effect's own transaction, it is the durable record of the key.
                t.push(
                    Table::new("payments", &PAYMENT_COLUMNS)
                        .with_unique("payments_pkey", &["id"], true)
                        .with_unique(
                            "payments_user_id_idempotency_key_key",
                            &["user_id", "idempotency_key"],
                            self.ledger_refuses_a_second_row(toggles),
                        ),
                );
                t.push(Table::new("idempotency_keys", &KEY_COLUMNS).with_unique(
                    "idempotency_keys_user_id_key_key",
                    &["user_id", "key"],
                    unique,
                ));
                if self.sends_receipts() && toggles.has(Toggle::Outbox) {
                    t.push(Table::new("outbox", &OUTBOX_COLUMNS).with_unique(
                        "outbox_pkey",
                        &["id"],
                        true,
                    ));
                }
                if self.handler == Handler::PayOrder {
                    let (columns, mut row) =
                        (&ORDER_COLUMNS, vec![Value::Int(42), Value::text("NEW")]);
                    let lease = toggles.has(Toggle::PayingLease);
                    if lease {
                        row.push(Value::Null);
                    }
                    let columns = if lease { &columns[..] } else { &columns[..2] };
                    t.push(
                        Table::new("orders", columns)
                            .with_unique("orders_pkey", &["id"], true)
                            .with_row(row),
                    );
                }
            }
            Handler::Debit => t.push(account(100, 5)),
            Handler::Put => t.push(
                Table::new("profiles", &["id", "email", "version"])
                    .with_unique("profiles_pkey", &["id"], true)
                    .with_row(vec![
                        Value::Int(USER),
                        Value::text(EMAILS[0]),
                        Value::Int(5),
                    ]),
            ),
            Handler::Like => {
                t.push(
                    Table::new("posts", &["id", "likes"])
                        .with_unique("posts_pkey", &["id"], true)
                        .with_row(vec![Value::Int(1), Value::Int(100)]),
                );
                t.push(Table::new("like_ops", &["op_id"]).with_unique(
                    "like_ops_op_id_key",
                    &["op_id"],
                    unique,
                ));
            }
            Handler::Pipeline => {
                t.push(account(500, 1));
                t.push(
                    Table::new("processed_messages", &["message_id"]).with_unique(
                        "processed_messages_pkey",
                        &["message_id"],
                        unique,
                    ),
                );
            }
        }
        t
    }
}

/// The `accounts` table with its one row.
fn account(balance: i64, version: i64) -> Table {
    Table::new("accounts", &["id", "balance", "version"])
        .with_unique("accounts_pkey", &["id"], true)
        .with_row(vec![
            Value::Int(1),
            Value::Int(balance),
            Value::Int(version),
        ])
}

mod catalogue;
mod retry;
mod toggle;
pub use catalogue::{all, by_id, ids, ScenarioId};
pub use retry::{Retry, Slot};
pub use toggle::{Toggle, ToggleKind, Toggles};
