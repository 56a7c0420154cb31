//! The lesson's text, in Russian and English, compiled in as `&'static` data.
//!
//! Every string of the page lives here: the prose sections, the text shown beside
//! each scenario, the predict-then-reveal questions and every label of the UI.
//! `en.rs` and `ru.rs` each hold one [`Lesson`] value of the same type, so a field
//! missing in one language is a compile error; the tests below check the rest
//! (same section ids, same block kinds, same scenario ids, same answers, no Cyrillic
//! in English, no untranslated Russian).
//!
//! # Inline markup
//!
//! Prose strings (`Block::P`, `Block::List` items, `Block::Table` cells,
//! `Block::Note`, `ScenarioLink::label`, summaries, questions) may contain exactly two
//! kinds of inline markup, parsed by [`inline`]:
//!
//! * `` `code` `` — a code span, shown in a monospace font; its content is literal.
//! * `**bold**` — a bold span; its content is plain text (no code inside bold).
//!
//! Nothing else is markup: no links, no italics, no HTML. Markers never nest and
//! always come in pairs (a test checks this). `Block::Code` and
//! [`listing`] lines are literal code, never parsed.
//!
//! UI strings ([`Ui`]) are plain text; some contain `{}` placeholders, filled in order
//! (each field's doc comment says what goes where). Those are typed by their arity,
//! [`Template<N>`] or [`Counted<N>`] (see [`crate::template`]): a text with another
//! number of `{}`, or a call with another number of arguments, does not compile.

pub mod calc;
pub mod codemap;
mod en;
pub mod fragment;
pub mod listing;
mod ru;

pub use crate::template::{Counted, Label, Template};
pub use idem_sim::ScenarioId;

/// A language of the page.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Lang {
    Ru,
    En,
}

impl Lang {
    /// Both languages, in the order the language switch shows them.
    pub const ALL: [Lang; 2] = [Lang::Ru, Lang::En];

    /// The BCP 47 primary tag: `"ru"` or `"en"`.
    pub fn code(self) -> &'static str {
        match self {
            Lang::Ru => "ru",
            Lang::En => "en",
        }
    }

    /// Parses `"ru"`, `"en"`, any case, and tags with a region such as `"ru-RU"`
    /// or `"en_US"`. Anything else is `None`.
    pub fn parse(s: &str) -> Option<Lang> {
        let primary = s.trim().split(['-', '_']).next().unwrap_or("");
        if primary.eq_ignore_ascii_case("ru") {
            Some(Lang::Ru)
        } else if primary.eq_ignore_ascii_case("en") {
            Some(Lang::En)
        } else {
            None
        }
    }
}

/// The whole lesson in one language.
#[derive(Debug)]
pub struct Lesson {
    pub lang: Lang,
    /// The problem in a sentence, at the top of the page, and the button beside it
    /// that brings the lab into view and plays the run.
    pub hero: [&'static str; 2],
    /// Where the lab would be, for a reader whose browser cannot run it: without
    /// WebAssembly (or when the module fails to start), and without JavaScript.
    /// Prerendered into the page, never in the module.
    pub no_lab: [&'static str; 2],
    /// A short paragraph before the sections.
    pub intro: &'static str,
    /// The prose sections, in page order; ids are [`SECTION_IDS`].
    pub sections: &'static [Section],
    /// Every label of the interactive page (also reachable alone through [`ui`]).
    pub ui: &'static Ui,
    /// The labels only the prerendered page shows.
    pub page: PageText,
    /// The Explore panel's results, which only the explorer's worker shows.
    pub explore: Explore,
    /// Scenario titles and summaries, in [`ScenarioId::ALL`] order (also through
    /// [`names`]). Each table here has one entry per scenario of the catalogue, so a
    /// scenario without its text does not compile; `tables_follow_the_catalogue`
    /// checks each entry's id.
    pub names: &'static [ScenarioName; ScenarioId::COUNT],
    /// One entry per scenario, in [`ScenarioId::ALL`] order.
    pub scenarios: &'static [ScenarioText; ScenarioId::COUNT],
    /// One question per scenario, in [`ScenarioId::ALL`] order: [`Kind::Predict`]
    /// (asked at the decisive step) or [`Kind::FixIt`] (asked at the end of the run).
    pub questions: &'static [Question; ScenarioId::COUNT],
    /// The heading of a question of each [`Kind`], in [`Kind::ALL`] order.
    pub kinds: [&'static str; 4],
}

impl Lesson {
    pub fn section(&self, id: &str) -> Option<&'static Section> {
        self.sections.iter().find(|s| s.id == id)
    }

    pub fn name(&self, id: ScenarioId) -> &'static ScenarioName {
        &self.names[id.index()]
    }

    pub fn scenario(&self, id: ScenarioId) -> &'static ScenarioText {
        &self.scenarios[id.index()]
    }

    pub fn question(&self, id: ScenarioId) -> &'static Question {
        &self.questions[id.index()]
    }
}

/// A prose section of the page.
#[derive(Debug)]
pub struct Section {
    /// Stable anchor id (used in URLs): one of [`SECTION_IDS`].
    pub id: &'static str,
    pub title: &'static str,
    pub blocks: &'static [Block],
}

/// A block of content. See the module docs for the inline markup allowed in text.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Block {
    /// A paragraph.
    P(&'static str),
    /// A code listing, shown as is (newlines preserved).
    Code(&'static str),
    /// A bulleted list.
    List(&'static [&'static str]),
    /// A table; every row has as many cells as `head`.
    Table {
        head: &'static [&'static str],
        rows: &'static [&'static [&'static str]],
    },
    /// A highlighted aside.
    Note(&'static str),
    /// A button that opens scenario `scenario` at its decisive step.
    ScenarioLink {
        scenario: ScenarioId,
        label: &'static str,
    },
    /// The ADR cost calculator (see [`calc`]); its labels are in [`Ui`].
    Calculator,
    /// A question answered in place (a [`Kind::Transfer`] or [`Kind::Numbers`]
    /// question), in a scenario's explanation: it is there once the reader has
    /// answered the scenario's own question or seen its run to the end, and it costs
    /// the page load nothing (the sections do not carry it).
    Quiz(&'static Question),
}

/// A scenario's title and one-line summary, for the picker.
#[derive(Clone, Copy, Debug)]
pub struct ScenarioName {
    pub id: ScenarioId,
    pub title: &'static str,
    /// One line, for the picker and for link previews.
    pub summary: &'static str,
}

/// The text of one scenario of the lab.
#[derive(Debug)]
pub struct ScenarioText {
    pub id: ScenarioId,
    /// Shown beside the running simulation. (The handler's code is
    /// [`listing::of`]: written once, with a comment per language.)
    pub explain: &'static [Block],
}

/// What a question asks of the reader.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    /// What happens next? Asked at a scenario's decisive step.
    Predict,
    /// Pick the smallest set of the scenario's defences that keeps every invariant;
    /// the page runs the choice through the core ([`crate::fixit`]). Asked at the
    /// end of the run.
    FixIt,
    /// The idea applied outside the lab (which handler is idempotent, which status
    /// to retry). A [`Block::Quiz`] of a scenario's explanation.
    Transfer,
    /// A figure to work out, with the arithmetic in the explanation. A [`Block::Quiz`].
    Numbers,
}

impl Kind {
    pub const ALL: [Kind; 4] = [Kind::Predict, Kind::FixIt, Kind::Transfer, Kind::Numbers];

    /// Stable id, for test ids.
    pub fn id(self) -> &'static str {
        match self {
            Kind::Predict => "predict",
            Kind::FixIt => "fix",
            Kind::Transfer => "transfer",
            Kind::Numbers => "numbers",
        }
    }
}

/// A question. A scenario's question is asked in the lab (see [`Kind`]); a
/// [`Block::Quiz`] is answered where it stands.
#[derive(PartialEq, Eq, Debug)]
pub struct Question {
    pub kind: Kind,
    /// The scenario it belongs to.
    pub scenario: ScenarioId,
    pub prompt: &'static str,
    /// Three or four answers. For [`Kind::FixIt`]: the toggle ids of the smallest
    /// set (the page computes it; a test checks that the core agrees, so the
    /// explanation cannot go stale), and the form lists the scenario's defences.
    pub answers: &'static [&'static str],
    /// Index into `answers`; the same in both languages (0 for [`Kind::FixIt`]).
    pub correct: usize,
    /// Shown after the reader answers: why the right answer is right and the
    /// others are wrong.
    pub explain: &'static str,
}

/// Section ids, in page order.
pub const SECTION_IDS: [&str; 13] = [
    "why-retries",
    "contract",
    "key-idea",
    "topology",
    "scenarios",
    "adr",
    "client",
    "failures",
    "real-world",
    "anti-patterns",
    "when-not",
    "exactly-once",
    "interview",
];

/// The labels of the interactive page in `lang`. The page reads its text only
/// through this and [`names`].
///
/// On the host they are the static data of `en.rs`/`ru.rs`. The module carries
/// neither language: each page holds its own language's labels as text
/// ([`labels_text`], prerendered into `#ui-text`), and the other language's arrive
/// with a switch (`<lang>/ui.txt`); [`load`] registers them. A language not loaded
/// yet gets the one that is (the switch sets the language only once its labels are
/// in).
pub fn ui(lang: Lang) -> &'static Ui {
    &labels(lang).ui
}

/// Scenario titles and summaries in `lang`, in [`ScenarioId::ALL`] order.
pub fn names(lang: Lang) -> &'static [ScenarioName] {
    &labels(lang).names
}

/// The title and summary of scenario `id` in `lang`.
pub fn name(lang: Lang, id: ScenarioId) -> &'static ScenarioName {
    &names(lang)[id.index()]
}

/// A toggle's name in the reader's language.
pub fn toggle_label(ui: &Ui, t: idem_sim::Toggle, scenario: Option<ScenarioId>) -> &'static str {
    use idem_sim::Toggle;
    match t {
        Toggle::UniqueConstraint if scenario == Some(ScenarioId::CounterIncrement) => {
            ui.def_unique_op_id()
        }
        Toggle::IdempotencyKey => ui.def_idempotency_key(),
        Toggle::UniqueConstraint => ui.def_unique_constraint(),
        Toggle::AtomicClaim => ui.def_atomic_claim(),
        Toggle::Fingerprint => ui.def_fingerprint(),
        Toggle::SameTransaction => ui.def_key_in_tx(),
        Toggle::KeyToProcessor => ui.def_key_to_processor(),
        Toggle::SharedStore => ui.def_shared_store(),
        Toggle::LongTtl => ui.def_long_ttl(),
        Toggle::VersionCheck => ui.def_version_check(),
        Toggle::IfMatch => ui.def_if_match(),
        Toggle::OpDedup => ui.def_op_id_dedup(),
        Toggle::RowCountCheck => ui.def_row_count(),
        Toggle::PayingLease => ui.def_paying_lease(),
        Toggle::ConsumerDedup => ui.def_processed_messages(),
        Toggle::IdempotentProducer => ui.def_idempotent_producer(),
        Toggle::NewKeyPerRetry => ui.def_new_key_bug(),
        Toggle::OtherWriter => ui.var_other_writer(),
        Toggle::CrashBeforeCommit => ui.var_crash_before_commit(),
        Toggle::ShortDeadline => ui.var_short_deadline(),
        Toggle::NoRetry => ui.var_no_retry(),
        Toggle::ProcessorTimeout => ui.var_processor_timeout(),
        Toggle::ErrorsReplayed => ui.var_errors_replayed(),
        Toggle::DeleteOnError => ui.var_delete_on_error(),
        Toggle::Outbox => ui.def_outbox(),
        Toggle::ScopedKey => ui.def_scoped_key(),
    }
}

/// The labels of one language: [`Ui`] and the scenarios' [`ScenarioName`]s.
pub struct Labels {
    pub ui: Ui,
    pub names: Vec<ScenarioName>,
}

#[cfg(not(target_arch = "wasm32"))]
fn labels(lang: Lang) -> &'static Labels {
    use std::sync::OnceLock;
    static LABELS: [OnceLock<Labels>; 2] = [OnceLock::new(), OnceLock::new()];
    let (ui, names) = match lang {
        Lang::Ru => (&ru::UI, &ru::NAMES),
        Lang::En => (&en::UI, &en::NAMES),
    };
    LABELS[lang as usize].get_or_init(|| Labels {
        ui: *ui,
        names: names.to_vec(),
    })
}

#[cfg(target_arch = "wasm32")]
thread_local! {
    static LOADED: std::cell::Cell<[Option<&'static Labels>; 2]> =
        const { std::cell::Cell::new([None, None]) };
}

#[cfg(target_arch = "wasm32")]
fn labels(lang: Lang) -> &'static Labels {
    let loaded = LOADED.with(|l| l.get());
    // `load` runs before the page is built; a module without labels shows no lab.
    loaded[lang as usize]
        .or(loaded[0])
        .or(loaded[1])
        .expect("the page's labels (#ui-text) are loaded before the lab is built")
}

/// Whether the labels of `lang` are in (on the host, always).
pub fn loaded(lang: Lang) -> bool {
    #[cfg(target_arch = "wasm32")]
    return LOADED.with(|l| l.get()[lang as usize].is_some());
    #[cfg(not(target_arch = "wasm32"))]
    return {
        let _ = lang;
        true
    };
}

/// Registers the labels of `lang` from their text ([`labels_text`]); false, and
/// nothing registered, if the text is not that.
pub fn load(lang: Lang, text: String) -> bool {
    let Some(labels) = parse_labels(Box::leak(text.into_boxed_str())) else {
        return false;
    };
    #[cfg(target_arch = "wasm32")]
    LOADED.with(|l| {
        let mut all = l.get();
        all[lang as usize] = Some(Box::leak(Box::new(labels)));
        l.set(all);
    });
    #[cfg(not(target_arch = "wasm32"))]
    let _ = (lang, labels);
    true
}

/// The labels of `lang` as a page carries them: every [`Ui`] field in declaration
/// order, then each scenario's title and summary, one per line (no label holds a
/// line break: tested), and a last line `end` so that a cut text is refused.
pub fn labels_text(lang: Lang) -> String {
    let l = labels(lang);
    let mut out = String::with_capacity(16 * 1024);
    let fields = l.ui.entries().into_iter().map(|(_, t)| t);
    let names = l.names.iter().flat_map(|n| [n.title, n.summary]);
    for t in fields.chain(names) {
        out.push_str(t);
        out.push('\n');
    }
    out.push_str(LABELS_END);
    out
}

/// The last line of [`labels_text`].
const LABELS_END: &str = "end";

/// The labels from [`labels_text`], or `None` if `text` is not that.
pub fn parse_labels(text: &'static str) -> Option<Labels> {
    let lines: Vec<&'static str> = text.split('\n').collect();
    let (fields, rest) = lines.split_at_checked(Ui::COUNT)?;
    let (names, end) = rest.split_at_checked(2 * ScenarioId::COUNT)?;
    if end != [LABELS_END] {
        return None;
    }
    Some(Labels {
        ui: Ui::from_fields(fields)?,
        names: ScenarioId::ALL
            .into_iter()
            .zip(names.chunks_exact(2))
            .map(|(id, n)| ScenarioName {
                id,
                title: n[0],
                summary: n[1],
            })
            .collect(),
    })
}

/// The whole lesson in `lang`: prose, questions and labels.
pub fn lesson(lang: Lang) -> &'static Lesson {
    match lang {
        Lang::Ru => &ru::LESSON,
        Lang::En => &en::LESSON,
    }
}

/// Declares a table of labels such as [`Ui`]: the table itself, an array of its
/// texts read by one method per field (so the page's copy, which comes as text
/// (`parse_labels`), becomes the table by a plain move, no transmute), and
/// the struct of its fields by name (`UiFields`) that `en.rs` and `ru.rs` write
/// and [`Ui::new`] turns into the table at compile time, so the compiler checks
/// that every field is given once. A field is plain text unless it names its
/// type: a [`Template`] or a [`Counted`] (`name: Template<2>,`), whose text the
/// compiler checks against its arity where `en.rs` and `ru.rs` write it.
macro_rules! ui_struct {
    (@ty) => { &'static str };
    (@ty $ty:ty) => { $ty };
    (@text $e:expr) => { $e };
    (@text $e:expr, $ty:ty) => { $e.text() };
    ($(#[$sdoc:meta])* $struct:ident($fields:ident, $key:ident); $( $(#[$doc:meta])* $name:ident $(: $ty:ty)?, )*) => {
        #[doc = concat!("Every field of [`", stringify!($struct), "`] by name, as `en.rs` and `ru.rs` write them ([`", stringify!($struct), "::new`]): the compiler checks that each is given once, and the arity of each typed one.")]
        pub struct $fields {
            $( $(#[$doc])* pub $name: ui_struct!(@ty $($ty)?), )*
        }

        /// Where each field's text is in the table.
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy)]
        enum $key {
            $( $name, )*
        }

        $(#[$sdoc])*
        ///
        /// The texts in declaration order, each read by the method of its field's name.
        #[derive(Clone, Copy, PartialEq, Eq, Debug)]
        pub struct $struct([&'static str; [$( stringify!($name), )*].len()]);

        impl $struct {
            /// The table of `fields`, at compile time.
            pub const fn new(fields: $fields) -> Self {
                Self([$( ui_struct!(@text fields.$name $(, $ty)?), )*])
            }

            $(
                $(#[$doc])*
                pub fn $name(&self) -> ui_struct!(@ty $($ty)?) {
                    Label::of(self.0[$key::$name as usize])
                }
            )*

            /// Every field as (field name, text), in declaration order.
            pub fn entries(&self) -> Vec<(&'static str, &'static str)> {
                [$( stringify!($name), )*].into_iter().zip(self.0).collect()
            }

            /// How many fields there are.
            pub const COUNT: usize = [$( stringify!($name), )*].len();

            /// The fields typed by their arity ([`Template`], [`Counted`]), by name.
            pub const TYPED: &[&str] = &[$( $( { let _ = stringify!($ty); stringify!($name) }, )? )*];

            /// The fields in declaration order (`None` unless exactly [`Self::COUNT`]):
            /// the table is that array.
            pub fn from_fields(fields: &[&'static str]) -> Option<Self> {
                fields.try_into().ok().map(Self)
            }
        }
    };
}

ui_struct! {
    /// Every label the interactive page needs. Plain text; `{}` placeholders
    /// are filled in order, as each field's doc says.
    Ui(UiFields, UiKey);
    // The page.
    /// The page title (also the document title).
    title,

    // Page navigation.
    /// Heading of the lab area.
    lab_title,

    // Playback.
    play,
    pause,
    /// Step forward.
    step,
    /// Step back.
    back,
    /// Jump to the end.
    to_end,
    restart,
    speed,
    /// `{}` current step, `{}` number of steps.
    step_of: Template<2>,

    // Faults and time.
    /// Heading of the fault-injection controls.
    faults,
    lose_next_ack,
    crash,
    restart_node,
    advance_1h,
    advance_25h,

    // Sharing.
    copy_link,
    link_copied,
    copy_failed,

    // Defences.
    /// Heading of the defence toggles.
    defences,
    def_unique_constraint,
    def_fingerprint,
    def_key_in_tx,
    def_key_to_processor,
    def_outbox,
    def_scoped_key,
    def_atomic_claim,
    def_op_id_dedup,
    def_unique_op_id,
    def_row_count,
    def_paying_lease,
    def_processed_messages,
    def_idempotent_producer,
    def_new_key_bug,

    // Scenario picker.
    scenario_picker,
    scenario_picker_seed_group,
    scenario_picker_pitfalls_group,

    // Panes.
    pane_client,
    pane_redis,
    pane_postgres,
    pane_processor,
    pane_broker,
    pane_sequence,
    pane_narration,
    pane_outcome,
    pane_invariants,
    pane_code,
    dismiss,
    about_scenario,
    /// `{}` is the address that failed.
    lesson_unavailable: Template<1>,

    // Node names.
    node_mobile_app,
    /// A named API instance; `{}` is the instance letter (A, B).
    node_api_instance: Template<1>,
    node_redis,
    node_postgres,
    /// Postgres where it holds no payments ledger (`Scenario::takes_payments`).
    node_database,
    node_processor,
    node_mail,
    node_reconciler,
    node_kafka,
    node_consumer,

    // Invariants.
    inv_at_most_once_charge,
    inv_ledger_matches_charges,
    inv_likes_equal_ops,
    inv_balance_matches_debits,
    inv_definite_answer,
    inv_replay_same_request,
    inv_one_receipt,
    inv_newer_write_kept,
    inv_refund_made,
    inv_app_shows_what_happened,
    holds,
    violated,

    // Outcome.
    customer_charged,
    /// Lower case: it follows a dash in "Customer charged: $200 — expected $100".
    expected,
    ledger_rows,
    charges_at_processor,
    /// The receipts in the customer's inbox.
    receipts,
    likes,
    balance,
    version,
    order_status,
    email,

    // What the client believes.
    client_belief,
    belief_waiting,
    belief_succeeded,
    belief_failed,
    belief_unknown,
    belief_gave_up,

    // The user's screen.
    screen_spinner,
    screen_failed,
    /// The app gave up at its deadline: the outcome is unknown, so it never says "failed".
    screen_checking,
    /// `{}` is the amount, e.g. `100.00`.
    screen_receipt: Template<1>,
    /// The app was told its refund is made; `{}` is the amount, e.g. `100.00`.
    screen_refunded: Template<1>,
    /// The client pane: the name of the retry policy's row.
    retry_policy,
    /// The policy: `{}` the timeout per attempt, `{}` the attempts, `{}` the first
    /// backoff, `{}` the most jitter added, `{}` the deadline.
    retry_policy_value: Template<5>,
    /// Which answers the client retries, and which never.
    retry_rule,
    /// Before the schedule: when each attempt goes out if none is answered, and
    /// that one in red (class `bad`) is not sent if it comes past the deadline.
    retry_schedule,
    /// The deadline (in the policy's row) is not shorter than the key's TTL, `{}`.
    retry_ttl: Template<1>,
    /// The client pane's fields of the policy, in `Retry::numbers`' order and units.
    retry_timeout,
    retry_attempts,
    retry_backoff,
    retry_jitter,
    retry_deadline,
    /// A policy's number out of range (a field's or the link's): `{}` the field's
    /// label, `{}` and `{}` the bounds, `{}` what was given, `{}` the number used.
    retry_range: Template<5>,
    /// `retry=` of the link is not five numbers: `{}` is its value.
    retry_bad: Template<1>,

    // Fallback notices.
    /// `{}` is the unknown id from the URL.
    unknown_scenario: Template<1>,
    /// `{}` is the unknown language tag from the URL.
    unknown_lang: Template<1>,
    /// `{}` is the requested step.
    unknown_step: Template<1>,
    storage_unavailable,

    // Progress.
    progress_title,
    progress_watched,
    progress_answered,
    /// `{}` done, `{}` total.
    progress_count: Template<2>,
    clear_progress,
    progress_cleared,

    // Predict, then reveal.
    predict_toggle,
    predict_title,
    check_answer,
    correct,
    not_quite,
    continue_run,

    // ADR calculator.
    calc_rps,
    calc_ttl_hours,
    calc_bytes_per_key,
    calc_extra_rtt_ms,
    calc_base_latency_ms,
    /// `{}` memory, e.g. "8.6 GB".
    calc_fits_one_node: Template<1>,
    /// `{}` memory, e.g. "86.4 GB".
    calc_needs_cluster: Template<1>,
    /// `{}` rps, `{}` hours, `{}` keys.
    calc_formula: Template<3>,
    unit_ms,
    unit_h,
    unit_min,
    unit_s,
    /// The decimal separator of the language.
    decimal_sep,
    unit_bytes,
    unit_kb,
    unit_mb,
    unit_gb,
    unit_tb,
    count_thousand,
    count_million,
    count_billion,

    // The lab: narration, phases and pane labels (added for the interactive page).
    short_client,
    /// An API instance in the diagram's lanes, and the full name of one that takes
    /// no payment (`narrate::node_name`); `{}` is the instance letter.
    short_api: Template<1>,
    short_processor,
    short_reconciler,
    belief_not_started,
    belief_conflict,
    belief_reread: Template<2>,
    belief_elsewhere,
    ph_receive,
    ph_check_key,
    ph_claim,
    ph_lookup,
    ph_takeover,
    ph_charge,
    /// The API's call to the processor when the money goes back (key-scope's refund).
    ph_refund,
    ph_begin,
    ph_insert_payment,
    ph_find_payment,
    ph_complete_key,
    ph_commit,
    ph_store_response,
    ph_rollback,
    ph_reply,
    ph_update_row,
    ph_read_account,
    ph_insert_op,
    ph_increment,
    ph_update_status,
    ph_claim_order,
    ph_read_order,
    ph_mark_paid,
    ph_publish,
    ph_consume,
    ph_dedup,
    ph_outbox,
    ph_send_email,
    ph_poll,
    ph_mark_sent,
    ph_relay_send,
    ph_status,
    ph_reconcile,
    ph_list_charges,
    ph_match_ledger,
    ph_apply,
    ph_commit_offset,
    n_cmd_lose_next,
    n_cmd_lose: Template<1>,
    n_cmd_parallel: Counted<0>,
    n_cmd_external: Template<1>,
    /// `{}` is the email the other client writes.
    n_cmd_external_put: Template<1>,
    n_no_key,
    n_decisive,
    n_client_sends: Template<1>,
    n_client_retry: Template<2>,
    n_client_timeout: Template<1>,
    n_client_checks,
    n_lost_ack: Template<1>,
    n_lost: Template<1>,
    n_lost_down: Template<1>,
    n_lost_conn: Template<1>,
    n_lost_closed: Template<1>,
    n_client_got: Template<1>,
    n_duplicated,
    n_sql_waits: Template<1>,
    n_rollback_crash: Template<1>,
    n_charged: Template<2>,
    /// A refund: a charge of a negative amount (key-scope).
    n_refunded: Template<2>,
    n_charge_replayed: Template<2>,
    n_status_replay,
    n_status_400,
    n_status_409,
    n_status_422,
    n_status_412,
    n_status_5xx,
    n_status_ok,
    n_respond: Template<3>,
    n_belief: Template<1>,
    n_crashed: Template<1>,
    n_restarted: Template<1>,
    n_clock: Template<1>,
    n_key_expired: Template<1>,
    n_append_dup: Template<1>,
    /// `{}` the payment.
    n_emailed: Template<1>,
    /// `{}` the message id.
    n_email_dup: Template<1>,
    n_appended: Template<2>,
    n_offset: Template<1>,
    /// `{}` the offset, then the session timeout.
    n_session_expired: Template<2>,
    /// `{}` the offset, then the statement timeout.
    n_statement_timeout: Template<2>,
    n_invariant_broken: Template<1>,
    n_invariant_restored: Template<1>,
    n_nothing,
    n_start,
    seed,
    bad_seed: Template<2>,
    bad_speed: Template<1>,
    unknown_toggle: Template<1>,
    toggle_not_offered: Template<1>,
    bugs_variants,
    def_shared_store,
    def_long_ttl,
    def_version_check,
    def_if_match,
    def_idempotency_key,
    var_other_writer,
    var_crash_before_commit,
    var_short_deadline,
    var_no_retry,
    var_processor_timeout,
    var_errors_replayed,
    var_delete_on_error,
    truth_title,
    truth_charges: Counted<1>,
    /// A refund's row in the client pane: `{}` the refunds at the processor, `{}` their sum.
    truth_refunds: Counted<1>,
    unique_index,
    index_absent,
    open_tx: Template<1>,
    uncommitted,
    no_keys,
    no_charges,
    no_rows,
    ttl,
    statement,
    parallel_count,
    command_failed: Template<1>,
    /// Why a command was refused (`CommandError`), the `{}` of `command_failed`:
    /// a message's number, a node's name, a duration, a count or a step.
    cmd_no_message: Template<1>,
    cmd_not_crashable: Template<1>,
    cmd_already_down: Template<1>,
    cmd_already_up: Template<1>,
    cmd_bad_count: Counted<2>,
    cmd_no_client,
    cmd_bad_duration: Template<1>,
    cmd_no_account,
    cmd_nothing_to_lose,
    cmd_beyond_end: Template<1>,
    node_down,
    timeline,
    keyboard_hint,
    broker_log,
    committed_offset: Template<1>,
    record_offset,
    /// `{}` is how many copies.
    parallel_n_retries: Counted<0>,
    /// The invariants as a whole, after the pane title: "Invariants hold".
    /// `{}` is the action as the link writes it, e.g. `5:p3`.
    /// Accessible name of a message in flight; `{}` is its label.
    lose_message: Template<1>,
    bad_command: Template<1>,
    dropped_command: Template<1>,
    bad_embed: Template<1>,
    pick_an_answer,
    invariants_hold,
    invariants_violated,
    /// After the first few notices of a link: `{}` is how many more were left out.
    more_notices: Counted<0>,
    /// The box a panic leaves on the page (drawn without the reactive system).
    crash_title,
    crash_text,
    crash_reload,
    /// Before the link to the state the page was in.
    crash_report,
    /// Accessible name of a code listing of the prose (a scrollable region).
    listing,

    // The first screen, hints, and feedback where the reader is.
    /// Under the topology: a message in flight can be lost.
    topology_hint,
    /// Under the sequence diagram's title: arrows jump to their step.
    sequence_hint,
    /// The parallel-retries field out of range: `{}` is what was typed, `{}` the number used.
    parallel_range: Template<2>,
    /// A calculator field out of range: `{}` is its label, `{}` and `{}` the bounds.
    calc_bad_input: Template<3>,

    // Questions that test understanding, and no spoilers.
    /// The heading of a fix-it question.
    fix_title,
    /// The reader's defences let an invariant break: `{}` its name, `{}` the step.
    fix_breaks: Template<2>,
    /// The reader's defences hold, and no smaller set does.
    fix_holds,
    /// The reader's defences hold, but fewer do too: `{}` the smallest sets.
    fix_fewer: Template<1>,
    /// In place of the scenario's explanation until the reader answers or reaches the end.
    about_later,
    /// The sequence diagram's switch that also draws the steps still to come.
    show_future,
    /// A step where a store ran a command: `{}` the store, `{}` its reply.
    n_executed: Template<2>,
    /// The same, where the reply is too long to repeat in words (a stored JSON value):
    /// `{}` the store; the command's box under the words shows the reply.
    n_executed_long: Template<1>,

    // The Explore panel (its results are written by the explorer's worker, from [`Explore`]).
    /// Heading of the Explore panel.
    explore_title,
    /// Starts the search (`btn-explore`).
    explore,
    /// The bounds: one lost message, one more, one crash and restart.
    explore_losses,
    explore_losses2,
    explore_crashes,
    /// The bound of one clock jump past the keys' TTL (off at first: it multiplies the states).
    explore_jump,
    explore_cancel,
    explore_cancelled,
    /// The legend of the switches of two sets of defences side by side.
    cmp_title,
    /// The switch that shows the compared run, before its defences' switches.
    cmp_on,
    /// The lab's sections the reader opens: the defences; the client's variants and
    /// retry policy (the other faults and the explorer are under `explore_title`).
    sec_defences,
    sec_client,
    /// What the sequence diagram's marks mean.
    seq_legend,
    /// Explore asked at the end of a run: `{}` the step it searches from instead.
    explore_from: Template<1>,
    /// On a phone, the switch between the reader's run and the one compared.
    cmp_flip,
}

ui_struct! {
    /// The labels only the prerendered page shows (the header with the language
    /// switch, the calculator's frame): written into each language's page at build
    /// time (`fragment`), so the module does not carry them. Plain text.
    PageText(PageTextFields, PageTextKey);
    /// One line under the title.
    subtitle,
    /// Heading of the table of contents.
    contents,
    /// Accessible label of the language switch.
    lang_switch,
    /// Short button text for Russian ("RU" in both languages).
    lang_ru_short,
    /// Short button text for English ("EN" in both languages).
    lang_en_short,
    /// Russian, named in the current language.
    lang_ru_name,
    /// English, named in the current language.
    lang_en_name,
    /// Skip link to the interactive lab.
    skip_to_lab,
    calc_title,
    calc_keys_held,
    calc_memory,
    calc_added_latency,
    calc_note,
}

ui_struct! {
    /// The Explore panel's results, written by the explorer's worker: rendered
    /// into `worker/text/<lang>.txt` (`fragment::explore_text`, with the
    /// toggles' and invariants' names from [`Ui`]) and compiled into the
    /// worker, so the page's module does not carry them. `{}` placeholders are
    /// filled in order.
    Explore(ExploreFields, ExploreKey);
    /// `{}` states explored, `{}` distinct, `{}` per second.
    progress,
    /// Accessible name of the progress bar.
    progress_label,
    /// `{}` cells done, `{}` in all.
    cells,
    /// `{}` milliseconds.
    took,
    /// `{}` the step the search starts from.
    outcomes,
    /// `{}` lost messages at most, `{}` crashes at most, `{}` clock jumps past the TTL at most.
    bounds,
    /// Why the bounds stop at one of each.
    limits,
    /// `{}` distinct quiet end states.
    ends,
    truncated,
    /// `{}` dollars.
    charged,
    /// `{}` charges at the processor.
    charges,
    /// `{}` committed ledger rows.
    ledger,
    /// `{}` the account's balance.
    balance,
    /// `{}` the post's likes.
    likes,
    /// `{}` the receipts the customer received.
    receipts,
    /// `{}` the profile's email.
    email,
    /// `{}` the order's status.
    order,
    /// `{}` what the app believes, per operation.
    app,
    b_not_started,
    b_succeeded,
    /// `{}` the status.
    b_failed,
    b_unknown,
    b_gave_up,
    all_hold,
    /// `{}` the invariants broken.
    broken,
    /// `{}` distinct end states with this outcome.
    count,
    /// The link that opens an outcome's shortest run in the lab.
    show,
    /// An outcome whose run the lab's commands cannot replay.
    no_show,
    /// A notice after Show me: `{}` the step where the run leaves the reader's.
    note,
    /// The same, when the run is the reader's own.
    same,
    /// A notice after a truth table's link: `{}` the defences, `{}` the fault, `{}` the
    /// step where it strikes (the run leaves the same defences' run without it).
    cell_note,
    /// Heading of the truth table.
    table,
    table_note,
    /// Head of the rows' column.
    defences,
    /// No defence on.
    none,
    f_lost_response,
    f_lost_store_reply,
    f_two_losses,
    f_parallel,
    f_crash,
    f_clock,
    holds,
    breaks,
    /// Announced when the search ends: `{}` outcomes, `{}` of them with more than one charge.
    said_found,
    /// Announced when the table is filled: `{}` cells that break, `{}` in all.
    said_table,
    /// Over the run compared side by side: `{}` its defences.
    cmp_with,
    /// `{}` the first step where the reader's run and the compared one differ.
    cmp_step,
    /// The two runs are the same.
    cmp_same,
    /// `{}` how the reader's run ends, `{}` how the compared one does.
    cmp_end,
}

/// Inline markup of prose strings: `` `code` `` and `**bold**`.
pub mod inline {
    /// A piece of a prose string.
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    pub enum Span<'a> {
        Text(&'a str),
        Code(&'a str),
        Bold(&'a str),
    }

    /// Splits `s` into spans. An unclosed marker is an error; its byte offset is
    /// returned. The lesson's strings are all valid (tested), so callers may fall
    /// back to showing the raw text on error.
    pub fn parse(s: &str) -> Result<Vec<Span<'_>>, usize> {
        let mut out = Vec::new();
        let mut rest = s;
        let mut offset = 0;
        loop {
            let next_code = rest.find('`');
            let next_bold = crate::template::find(rest, "**");
            let (at, bold) = match (next_code, next_bold) {
                (None, None) => break,
                (Some(c), Some(b)) if b < c => (b, true),
                (Some(c), _) => (c, false),
                (None, Some(b)) => (b, true),
            };
            if at > 0 {
                out.push(Span::Text(&rest[..at]));
            }
            let marker = if bold { "**" } else { "`" };
            let body = &rest[at + marker.len()..];
            let Some(end) = body.find(marker) else {
                return Err(offset + at);
            };
            let content = &body[..end];
            if content.is_empty() || (bold && content.contains('`')) {
                return Err(offset + at);
            }
            out.push(if bold {
                Span::Bold(content)
            } else {
                Span::Code(content)
            });
            let consumed = at + marker.len() + end + marker.len();
            offset += consumed;
            rest = &rest[consumed..];
        }
        if !rest.is_empty() {
            out.push(Span::Text(rest));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
