//! The state panes, narration, outcome and sequence diagram as markup: pure
//! functions of the simulation's world and trace and the UI text. They are
//! tested on the host; `ui::panes` puts them on the page.

use crate::html::{classes, num, tenths, Html, Markup};
use crate::layout::Layout;
use crate::lesson::Ui;
use crate::narrate::node_name;
use crate::narrate::{belief_text, count, fill, invariant_name, money, narrate, node_short};
use crate::seqdiag::{self, MarkKind};
use crate::ui::act::Action;
use idem_sim::db::Value;
use idem_sim::net::{Fate, Msg, Payload, PayloadKind};
use idem_sim::scenario::{Figure, OpSpec};

use idem_sim::trace::{Happening, StepRecord};
use idem_sim::world::{key_ttl, Belief};
use idem_sim::{Millis, NodeId, World};

/// `23 h 59 min`, `59 s`: a TTL at a glance, in the reader's units.
pub fn short_duration(ui: &Ui, t: Millis) -> String {
    let s = t.0 / 1000;
    match (s / 3600, (s / 60) % 60, s % 60) {
        (0, 0, s) => format!("{s} {}", ui.unit_s()),
        (0, m, s) => format!("{m} {} {s} {}", ui.unit_min(), ui.unit_s()),
        (h, m, _) => format!("{h} {} {m} {}", ui.unit_h(), ui.unit_min()),
    }
}

fn touched_redis_keys(rec: Option<&StepRecord>) -> Vec<String> {
    rec.iter()
        .flat_map(|r| r.happenings.iter())
        .filter_map(|h| match h {
            Happening::Redis { cmd, .. } => Some(cmd.key().to_string()),
            _ => None,
        })
        .collect()
}

fn head(h: &mut Html, title: &str, count: Option<(&str, String)>) {
    h.open("h3", &[]).text(title);
    if let Some((id, n)) = count {
        h.el("span", &[("class", "count"), ("data-testid", id)], &n);
    }
    h.close("h3");
}

/// Redis: keys, values and TTL counting down on the virtual clock.
pub fn redis(ui: &Ui, w: &World, rec: Option<&StepRecord>) -> Markup {
    let mut h = Html::new();
    head(
        &mut h,
        ui.pane_redis(),
        Some(("redis-keys", w.redis.keys.len().to_string())),
    );
    if w.redis.keys.is_empty() {
        h.el("p", &[("class", "empty")], ui.no_keys());
        return h.finish();
    }
    let touched = touched_redis_keys(rec);
    h.open("ul", &[("class", "kv")]);
    for (k, e) in w.redis.keys.iter() {
        h.open(
            "li",
            &[("class", &classes(&[("changed", touched.contains(k))]))],
        );
        h.el("code", &[("class", "kv__key")], k);
        h.el("code", &[("class", "kv__value")], &e.value.to_string());
        if let Some(ttl) = w.redis.ttl(k, w.now) {
            let text = format!("{} {}", ui.ttl(), short_duration(ui, ttl));
            h.el(
                "span",
                &[("class", "kv__ttl"), ("data-ttl-ms", &ttl.0.to_string())],
                &text,
            );
        }
        h.close("li");
    }
    h.close("ul");
    h.finish()
}

/// Postgres: every table with its unique indexes and rows; rows written at
/// this step are highlighted, uncommitted ones marked with their transaction.
pub fn postgres(ui: &Ui, w: &World, rec: Option<&StepRecord>) -> Markup {
    let touched: Vec<(&str, u32)> = rec
        .iter()
        .flat_map(|r| r.happenings.iter())
        .flat_map(|h| match h {
            Happening::Sql { touched, .. } => touched.clone(),
            _ => Vec::new(),
        })
        .collect();
    let mut h = Html::new();
    head(&mut h, ui.pane_postgres(), None);
    let txs: Vec<String> =
        w.db.open_transactions()
            .map(|(_, tx)| fill(ui.open_tx(), &[&tx.to_string()]))
            .collect();
    if !txs.is_empty() {
        h.open(
            "ul",
            &[("class", "txs"), ("data-testid", "open-transactions")],
        );
        for t in &txs {
            h.el("li", &[], t);
        }
        h.close("ul");
    }
    for t in &w.db.tables {
        h.open("div", &[("class", "table"), ("data-table", t.name)]);
        h.open("div", &[("class", "table__name")])
            .el("code", &[], t.name);
        h.open("ul", &[("class", "indexes")]);
        for ix in t.unique.iter() {
            let cols: Vec<&str> = ix.columns.iter().map(|c| t.columns[*c]).collect();
            let mut text = format!("{} ({})", ui.unique_index(), cols.join(", "));
            if !ix.present {
                text = format!("{text} — {}", ui.index_absent());
            }
            h.el(
                "li",
                &[("class", if ix.present { "" } else { "absent" })],
                &text,
            );
        }
        h.close("ul").close("div");
        // Each row a card of its columns (style/main.css): nothing scrolls sideways.
        h.open("table", &[("aria-label", t.name)])
            .open("thead", &[])
            .open("tr", &[]);
        for c in t.columns.iter() {
            h.el("th", &[], c);
        }
        h.close("tr").close("thead").open("tbody", &[]);
        for r in &t.rows {
            let (vals, pending) = match (&r.pending, &r.committed) {
                (Some(p), c) => (p.values.as_ref().or(c.as_ref()), Some(p.tx)),
                (None, c) => (c.as_ref(), None),
            };
            let deleted = r.pending.as_ref().is_some_and(|p| p.values.is_none());
            let class = classes(&[
                ("changed", touched.contains(&(t.name, r.id))),
                ("pending", pending.is_some()),
                ("deleted", deleted),
            ]);
            let title = pending
                .map(|tx| format!("{} ({tx})", ui.uncommitted()))
                .unwrap_or_default();
            h.open(
                "tr",
                &[
                    ("class", &class),
                    (if title.is_empty() { "" } else { "title" }, &title),
                ],
            );
            // Each cell names its column (the header is for screen readers).
            for (v, c) in vals.into_iter().flatten().zip(t.columns.iter()) {
                h.el("td", &[("data-label", c)], &cell(v));
            }
            h.close("tr");
        }
        h.close("tbody").close("table");
        if t.rows.is_empty() {
            h.el("p", &[("class", "empty")], ui.no_rows());
        }
        h.close("div");
    }
    h.finish()
}

fn cell(v: &Value) -> String {
    match v {
        Value::Text(s) if s.chars().count() > 40 => {
            format!("{}…", s.chars().take(40).collect::<String>())
        }
        v => v.to_string(),
    }
}

/// The card processor: every charge, and the customer's statement.
pub fn processor(ui: &Ui, w: &World) -> Markup {
    let mut h = Html::new();
    head(&mut h, ui.pane_processor(), None);
    if w.processor.charges.is_empty() {
        h.el("p", &[("class", "empty")], ui.no_charges());
        return h.finish();
    }
    h.el("p", &[("class", "statement__title")], ui.statement());
    h.open("ul", &[("class", "statement")]);
    for c in &w.processor.charges {
        h.open(
            "li",
            &[("class", if c.at == w.now { "changed" } else { "" })],
        );
        // The customer's statement: a charge takes money, a refund gives it back.
        let (sign, amount) = if c.amount < 0 {
            ("+", -c.amount)
        } else {
            ("−", c.amount)
        };
        h.el("code", &[], &c.id).el(
            "span",
            &[("class", "amount")],
            &format!("{sign}{}", money(ui, amount)),
        );
        if let Some(k) = &c.key {
            h.el("code", &[("class", "muted")], k);
        }
        h.close("li");
    }
    h.close("ul");
    h.finish()
}

/// The broker's log and the consumer group's committed offset.
pub fn broker(ui: &Ui, w: &World) -> Markup {
    let mut h = Html::new();
    head(&mut h, ui.pane_broker(), None);
    h.el("p", &[("class", "statement__title")], ui.broker_log());
    h.open("ul", &[("class", "statement")]);
    for r in &w.broker.log {
        h.open(
            "li",
            &[(
                "class",
                if r.offset < w.broker.committed {
                    "done"
                } else {
                    ""
                },
            )],
        );
        h.el(
            "span",
            &[("class", "muted")],
            &format!("{} {}", ui.record_offset(), r.offset),
        );
        h.el("code", &[], &r.msg_id)
            .el("span", &[], &format!("−{}", money(ui, r.amount)));
        h.close("li");
    }
    h.close("ul");
    h.el(
        "p",
        &[("class", "muted")],
        &fill(ui.committed_offset(), &[&w.broker.committed.to_string()]),
    );
    h.finish()
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
        Belief::ChangedElsewhere => "changed-elsewhere",
        Belief::GaveUp => "gave-up",
    }
}

/// The phone: what the user sees, beside what the app believes and what really happened.
pub fn client(ui: &Ui, w: &World) -> Markup {
    let i = w
        .client
        .current
        .unwrap_or(0)
        .min(w.client.ops.len().saturating_sub(1));
    let mut h = Html::new();
    head(&mut h, ui.pane_client(), None);
    let Some(op) = w.client.ops.get(i) else {
        return h.finish();
    };
    let (screen, mode) = match &op.belief {
        Belief::NotStarted => (String::new(), "idle"),
        Belief::Waiting | Belief::Unknown | Belief::Conflict => {
            (ui.screen_spinner().to_string(), "spinner")
        }
        Belief::Succeeded(what) => match op.spec {
            OpSpec::Charge(a) | OpSpec::PayOrder { amount: a, .. } => {
                (fill(ui.screen_receipt(), &[&money(ui, a)]), "receipt")
            }
            // What the app was told, right or not (key-scope's replay says so too).
            OpSpec::Refund(a) => (fill(ui.screen_refunded(), &[&money(ui, a)]), "receipt"),
            _ => (format!("✓ {what}"), "receipt"),
        },
        Belief::Reread { balance, version } => (format!("{balance} · v{version}"), "receipt"),
        // The app tells the user the value was changed elsewhere.
        Belief::ChangedElsewhere => (ui.belief_elsewhere().to_string(), "failed"),
        // A refund is not a payment: the app says what it was answered.
        Belief::Failed(..) if matches!(op.spec, OpSpec::Refund(_)) => {
            (belief_text(ui, &op.belief), "failed")
        }
        Belief::Failed(..) => (ui.screen_failed().to_string(), "failed"),
        // Past its deadline the app still does not know: it says so, never "failed".
        Belief::GaveUp => (ui.screen_checking().to_string(), "checking"),
    };
    h.open("div", &[("class", "phone"), ("data-screen", mode)])
        .open("div", &[("class", "phone__screen")]);
    h.el(
        "span",
        &[("class", "phone__spinner"), ("aria-hidden", "true")],
        "",
    );
    h.el("span", &[("data-testid", "phone-screen")], &screen);
    h.close("div").close("div");
    h.open("dl", &[("class", "facts")]);
    h.el("dt", &[], ui.client_belief());
    h.el(
        "dd",
        &[
            ("data-testid", "client-belief"),
            ("data-belief", belief_id(&op.belief)),
        ],
        &belief_text(ui, &op.belief),
    );
    if let Some(k) = op.key {
        let uuid = w.client.keys.get(k.0).cloned().unwrap_or_default();
        h.el("dt", &[], "Idempotency-Key");
        h.open("dd", &[])
            .el("code", &[("title", &uuid)], &format!("{k} = {uuid}"))
            .close("dd");
    }
    if w.scenario.shows(Figure::Charges) {
        let charges: Vec<i64> = w
            .processor
            .charges
            .iter()
            .filter(|c| c.op == i)
            .map(|c| c.amount)
            .collect();
        // A refund's money goes back: its own words, and the sum as given back.
        let (label, sum) = match op.spec {
            OpSpec::Refund(_) => (ui.truth_refunds(), -charges.iter().sum::<i64>()),
            _ => (ui.truth_charges(), charges.iter().sum()),
        };
        let text = count(label, charges.len(), &[&money(ui, sum)]);
        h.el("dt", &[], ui.truth_title());
        h.el(
            "dd",
            &[
                ("class", if charges.len() > 1 { "bad" } else { "" }),
                ("data-testid", "truth"),
            ],
            &text,
        );
    }
    // The client's half of the contract: its policy, as the run uses it.
    let r = w.scenario.retry_policy(w.config.toggles);
    let d = |t| crate::narrate::short_duration(ui, t);
    h.el("dt", &[], ui.retry_policy());
    h.el(
        "dd",
        &[("data-testid", "retry-policy")],
        &fill(
            ui.retry_policy_value(),
            &[
                &d(r.timeout),
                &r.max_attempts.to_string(),
                &d(r.backoff),
                &d(r.jitter),
                &d(r.deadline),
            ],
        ),
    );
    // When each attempt goes out if none is answered, by the client's own rules
    // (`Retry::schedule`); red where the deadline may stop it.
    h.open("dd", &[]).text(ui.retry_schedule());
    h.open("ol", &[("data-testid", "retry-schedule")]);
    for s in r.schedule() {
        let mut t = d(s.from);
        if s.to != s.from {
            t = t + "–" + &d(s.to);
        }
        h.el(
            "li",
            &[(if s.cut.is_some() { "class" } else { "" }, "bad")],
            &t,
        );
    }
    h.close("ol").close("dd");
    if let Some(ttl) = key_ttl(&w.scenario, w.config.toggles).filter(|t| r.deadline >= *t) {
        h.el(
            "dd",
            &[("class", "bad"), ("data-testid", "retry-warning")],
            &fill(ui.retry_ttl(), &[&d(ttl)]),
        );
    }
    h.el("dd", &[("class", "muted")], ui.retry_rule());
    h.close("dl");
    h.finish()
}

/// The numbers that matter for this scenario, and each invariant's status.
pub fn outcome(ui: &Ui, w: &World) -> Markup {
    let mut h = Html::new();
    head(&mut h, ui.pane_outcome(), None);
    if let Some(expected) = w.expected_charge() {
        let total = w.processor.total();
        // The core's verdict: red exactly when an invariant is broken.
        let bad = w.outcome_is_bad();
        h.open(
            "p",
            &[("class", if bad { "summary bad" } else { "summary" })],
        );
        h.text(&format!("{}: ", ui.customer_charged()));
        h.el(
            "strong",
            &[("data-testid", "customer-charged")],
            &money(ui, total),
        );
        h.text(&format!(" — {} {}", ui.expected(), money(ui, expected)));
        h.close("p");
    }
    h.open("dl", &[("class", "numbers")]);
    let mut num = |label: &str, id: &str, v: String| {
        h.el("dt", &[], label).el("dd", &[("data-testid", id)], &v);
    };
    let o = w.observables();
    if let Some(n) = o.charges {
        num(ui.charges_at_processor(), "charge-count", n.to_string());
    }
    if let Some(n) = o.ledger_rows {
        num(ui.ledger_rows(), "ledger-rows", n.to_string());
    }
    if let (Some(b), Some(v)) = (o.balance, o.version) {
        num(ui.balance(), "account-balance", b.to_string());
        num(ui.version(), "account-version", v.to_string());
    }
    if let Some(n) = o.likes {
        num(ui.likes(), "post-likes", n.to_string());
    }
    if let Some(status) = o.order_status {
        num(ui.order_status(), "order-status", status);
    }
    if let Some(n) = o.receipts {
        num(ui.receipts(), "receipts", n.to_string());
    }
    if let Some(e) = o.email {
        num(ui.email(), "profile-email", e);
    }
    h.close("dl");
    let all = w.all_hold();
    let (word, id) = if all {
        (ui.invariants_hold(), "holds")
    } else {
        (ui.invariants_violated(), "violated")
    };
    h.open("h4", &[])
        .text(&format!("{} ", ui.pane_invariants()));
    h.el(
        "span",
        &[
            ("class", if all { "status" } else { "status bad" }),
            ("data-testid", "invariant-status"),
            ("data-status", id),
        ],
        word,
    );
    h.close("h4");
    h.open("ul", &[("class", "invariants")]);
    for (inv, holds) in w.invariants.iter() {
        let tid = format!("inv-{}", inv.id());
        h.open(
            "li",
            &[
                ("class", if *holds { "" } else { "bad" }),
                ("data-testid", &tid),
            ],
        );
        h.el("span", &[("class", "dot"), ("aria-hidden", "true")], "");
        h.open("span", &[])
            .text(&format!("{}: ", invariant_name(ui, *inv)));
        h.el(
            "strong",
            &[],
            if *holds { ui.holds() } else { ui.violated() },
        );
        h.close("span").close("li");
    }
    h.close("ul");
    h.finish()
}

/// The step explained, with the exact command it ran and its result.
/// `w` is the world after the step (it still holds the messages the step sent).
pub fn narration(ui: &Ui, rec: Option<&StepRecord>, w: &World) -> Markup {
    let mut h = Html::new();
    h.open(
        "div",
        &[("class", "narration"), ("data-testid", "narration-text")],
    );
    let lines = match rec {
        Some(r) => narrate(ui, w, r),
        None => vec![ui.n_start().to_string()],
    };
    for l in &lines {
        h.el("p", &[], l);
    }
    h.close("div");
    let command = rec.and_then(|r| {
        if let Some((cmd, result)) = r.command() {
            return Some(format!("{cmd}\n→ {result}"));
        }
        r.happenings.iter().find_map(|h| match h {
            Happening::Sent {
                msg,
                kind: PayloadKind::Request,
                ..
            } => w.msgs.get(msg).and_then(|m| match &m.payload {
                p @ Payload::Request(_) => p.command(),
                _ => None,
            }),
            _ => None,
        })
    });
    if let Some(c) = command {
        h.open(
            "pre",
            &[
                ("class", "command"),
                ("data-testid", "step-command"),
                ("tabindex", "0"),
                ("role", "region"),
                ("aria-label", ui.listing()),
            ],
        )
        .el("code", &[], &c)
        .close("pre");
    }
    h.finish()
}

/// The node's name in test ids: the first API instance is plain `api`.
fn test_slug(n: NodeId) -> String {
    match n {
        NodeId::Api(0) => "api".into(),
        n => n.slug(),
    }
}

/// A small line icon per node type, 22 × 22 units.
fn icon(n: NodeId) -> &'static str {
    match n {
        NodeId::Client => {
            "M6 1h10a2 2 0 0 1 2 2v16a2 2 0 0 1-2 2H6a2 2 0 0 1-2-2V3a2 2 0 0 1 2-2zM9 18h4"
        }
        NodeId::Api(_) | NodeId::Consumer => {
            "M2 3h18v7H2zM2 12h18v7H2zM6 6.5h.5M6 15.5h.5M10 6.5h6M10 15.5h6"
        }
        NodeId::Redis => "M8 14a5 5 0 1 1 3.5-1.5L20 21M16 17l2-2M18 19l2-2",
        NodeId::Postgres => {
            "M3 5c0-2 16-2 16 0v12c0 2-16 2-16 0zM3 5c0 2 16 2 16 0M3 11c0 2 16 2 16 0"
        }
        NodeId::Processor => "M1 5h20v13H1zM1 9h20M4 14h5",
        NodeId::Broker => "M2 4h18M2 9h18M2 14h18M2 19h12",
        NodeId::Mail => "M1 4h20v14H1zM1 4l10 8 10-8",
        // A clock: the job runs on a period.
        NodeId::Reconciler => "M11 1a10 10 0 1 0 0 20a10 10 0 1 0 0-20zM11 5v6l4 3",
    }
}

/// The width of `s` in SVG units at 13 px bold, estimated per character class
/// (no font metrics in the module): Cyrillic and capitals are wider than Latin lower case.
fn text_width(s: &str) -> f64 {
    s.chars()
        .map(|c| match c {
            ' ' => 4.1,
            'а'..='я' | 'ё' => 9.3,
            'А'..='Я' | 'Ё' | 'A'..='Z' | 'm' | 'w' => 9.8,
            '0'..='9' => 8.2,
            _ => 7.9,
        })
        .sum()
}

/// Whether the sequence diagram's lane names alternate between two lines: where two
/// neighbours' halves and a 4-unit gap are wider than a lane ("Redis" and "Postgres"
/// in six lanes on a phone, "Консьюмер" beside anything). The names are 12 px bold.
fn names_on_two_lines(names: &[String], lane_w: f64) -> bool {
    let width = |s: &str| text_width(s) * 12.0 / 13.0;
    names
        .windows(2)
        .any(|p| (width(&p[0]) + width(&p[1])) / 2.0 + 4.0 > lane_w)
}

/// Splits a name into at most two lines that fit `width` units (at `scale` of 13 px),
/// at spaces. A lone letter (the instance letter of "API A") never ends up alone.
fn wrap(s: &str, width: f64, scale: f64) -> Vec<String> {
    let fits = |t: &str| text_width(t) * scale <= width;
    let mut lines: Vec<String> = Vec::new();
    for word in s.split(' ') {
        match lines.last_mut() {
            Some(l) if fits(&format!("{l} {word}")) => {
                l.push(' ');
                l.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    let n = lines.len();
    if n >= 2 && lines[n - 1].chars().count() == 1 {
        if let Some((head, last)) = lines[n - 2].clone().rsplit_once(' ') {
            lines[n - 2] = head.to_string();
            lines[n - 1] = format!("{last} {}", lines[n - 1]);
        }
    }
    lines
}

/// Nodes that did something at this step (they pulse).
fn busy(rec: Option<&StepRecord>) -> Vec<NodeId> {
    rec.iter()
        .flat_map(|r| r.happenings.iter())
        .filter_map(|h| match h {
            Happening::Phase { node, .. } => Some(*node),
            Happening::Redis { .. } => Some(NodeId::Redis),
            Happening::Sql { .. } | Happening::SqlWaits { .. } => Some(NodeId::Postgres),
            Happening::Charged { .. } => Some(NodeId::Processor),
            Happening::Emailed { .. } => Some(NodeId::Mail),
            Happening::Appended { .. }
            | Happening::OffsetCommitted(_)
            | Happening::SessionExpired { .. } => Some(NodeId::Broker),
            Happening::StatementTimedOut { .. } => Some(NodeId::Consumer),
            Happening::ClientSent { .. }
            | Happening::ClientTimeout { .. }
            | Happening::Belief { .. } => Some(NodeId::Client),
            _ => None,
        })
        .collect()
}

/// The messages drawn between two steps: those in flight before or after this step, once.
pub fn messages(prev: &World, w: &World) -> Vec<Msg> {
    let mut v: Vec<Msg> = prev.msgs.values().map(|m| Msg::clone(m)).collect();
    v.extend(
        w.msgs
            .values()
            .filter(|m| !prev.msgs.contains_key(&m.id))
            .map(|m| Msg::clone(m)),
    );
    v
}

/// The topology as SVG: links, nodes (busy ones pulse, crashed ones are
/// down), and every message at its place for the displayed moment `anim`.
pub fn topology(
    ui: &Ui,
    l: &Layout,
    prev: &World,
    w: &World,
    rec: Option<&StepRecord>,
    anim: f64,
) -> Markup {
    let n = num;
    let mut h = Html::new();
    let vb = format!("0 0 {} {}", n(l.width), n(l.height));
    h.open(
        "svg",
        &[
            ("viewBox", &vb),
            // A group, not an img: its messages in flight are buttons.
            ("role", "group"),
            ("aria-label", ui.lab_title()),
        ],
    );
    h.open("g", &[("class", "links")]);
    for (a, b) in l.links() {
        if let (Some((x1, y1)), Some((x2, y2))) = (l.along(a, b, 0.0), l.along(a, b, 1.0)) {
            let id = format!("link-{}-{}", test_slug(a), test_slug(b));
            let (x1, y1, x2, y2) = (n(x1), n(y1), n(x2), n(y2));
            h.void(
                "line",
                &[
                    ("class", "link"),
                    ("data-testid", &id),
                    ("x1", &x1),
                    ("y1", &y1),
                    ("x2", &x2),
                    ("y2", &y2),
                ],
            );
        }
    }
    h.close("g").open("g", &[("class", "nodes")]);
    let busy = busy(rec);
    for (node, p) in &l.nodes {
        let kind = match node {
            NodeId::Client => "client",
            NodeId::Api(_) => "api",
            NodeId::Redis | NodeId::Postgres => "store",
            NodeId::Processor | NodeId::Mail => "external",
            NodeId::Broker | NodeId::Consumer | NodeId::Reconciler => "service",
        };
        let up = w.is_up(*node);
        let class = format!(
            "node node--{kind} {}",
            classes(&[("busy", busy.contains(node)), ("down", !up)])
        );
        let tid = format!("node-{}", test_slug(*node));
        h.open(
            "g",
            &[
                ("class", &class),
                ("data-testid", &tid),
                ("data-node", &node.slug()),
            ],
        );
        let (x, y) = (p.x - p.w / 2.0, p.y - p.h / 2.0);
        h.void(
            "rect",
            &[
                ("class", "node__box"),
                ("x", &n(x)),
                ("y", &n(y)),
                ("width", &n(p.w)),
                ("height", &n(p.h)),
                ("rx", "10"),
            ],
        );
        let full = node_name(ui, &w.scenario, *node);
        let (title, detail) = match crate::template::split_once(&full, " (") {
            Some((a, b)) => (a.to_string(), b.trim_end_matches(')').to_string()),
            None => (full.clone(), String::new()),
        };
        let detail = if up {
            detail
        } else {
            format!("✕ {}", ui.node_down())
        };
        // A narrow box stacks icon and text, centred; a wide one puts the icon at the left.
        let narrow = p.w < 130.0;
        let name_class = if narrow {
            "node__name node__name--small"
        } else {
            "node__name"
        };
        // In a narrow box the name shrinks, if it must, until its longest word fits.
        let avail = if narrow { p.w - 8.0 } else { p.w - 44.0 };
        let widest = title.split(' ').map(text_width).fold(0.0, f64::max);
        // 14 px in a wide box; in a narrow one up to 13 px, smaller only if a word must fit.
        let scale = if narrow {
            1.0f64.min(avail / widest)
        } else {
            14.0 / 13.0
        };
        let size = tenths(13.0 * scale);
        let mut lines = wrap(&title, avail, scale);
        lines.truncate(2);
        // Centred: in a narrow box under the icon, in a wide one in the room right of it.
        let (tx, top) = if narrow {
            (p.x, y + 34.0)
        } else {
            (p.x + 14.0, p.y - 8.0 * lines.len() as f64 + 4.0)
        };
        let tr = if narrow {
            format!("translate({} {})", n(p.x - 11.0), n(y + 6.0))
        } else {
            format!("translate({} {})", n(x + 8.0), n(p.y - 11.0))
        };
        h.void(
            "path",
            &[
                ("class", "node__icon"),
                ("transform", &tr),
                ("d", icon(*node)),
            ],
        );
        for (i, line) in lines.iter().enumerate() {
            let ly = n(top + 15.0 * i as f64);
            h.el(
                "text",
                &[
                    ("class", name_class),
                    ("x", &n(tx)),
                    ("y", &ly),
                    ("text-anchor", "middle"),
                    (if narrow { "font-size" } else { "" }, &size),
                ],
                line,
            );
        }
        let dy = n(top + 15.0 * lines.len() as f64 + 1.0);
        h.el(
            "text",
            &[
                ("class", "node__detail"),
                ("x", &n(tx)),
                ("y", &dy),
                ("text-anchor", "middle"),
            ],
            &detail,
        );
        h.close("g");
    }
    h.close("g").open("g", &[("class", "msgs")]);
    let msgs = messages(prev, w);
    for (i, m) in msgs.iter().enumerate() {
        let at = l.msg_at(m, prev.now.0, w.now.0, anim, w.msgs.contains_key(&m.id));
        let label = m.payload.label();
        // Many copies crowd a link: only the newest message of a link and direction
        // carries a tag, counting the others; the rest are dots (their title still names them).
        let same = |x: &Msg| x.from == m.from && x.to == m.to;
        let tagged = !msgs[i + 1..].iter().any(same);
        let others = msgs.iter().filter(|x| same(x)).count() - 1;
        let tag = if others > 0 {
            format!("{label} +{others}")
        } else {
            label.clone()
        };
        let class = format!(
            "msg msg--{} {}",
            m.payload.kind().slug(),
            classes(&[("msg--lost", at.broken), ("hidden", at.hidden)])
        );
        let tr = format!("translate({} {})", tenths(at.x), tenths(at.y));
        // A message still on its way can be lost by the reader: a keyboard-reachable button.
        let live = w.msgs.get(&m.id).is_some_and(|m| m.fate == Fate::Deliver);
        // The accessible name contains the visible tag ("charge +2").
        let name = fill(ui.lose_message(), &[if tagged { &tag } else { &label }]);
        h.open(
            "g",
            &[
                ("class", &class),
                ("data-testid", "msg"),
                ("transform", &tr),
                (if live { "role" } else { "" }, "button"),
                (if live { "tabindex" } else { "" }, "0"),
                (if live { "aria-label" } else { "" }, &name),
            ],
        );
        Action::Lose(m.id).put(&mut h);
        h.void("circle", &[("class", "msg__dot"), ("r", "6")]);
        if !tagged {
            // A dot names its message in a tooltip; a tag shows it (a title as well would
            // read twice, and no longer match the button's name).
            h.el("title", &[], &label);
            h.el("text", &[("class", "msg__x"), ("x", "-5"), ("y", "5")], "✕");
            h.close("g");
            continue;
        }
        // The tag sits beside the dot where it covers no node (the glide moves it:
        // `ui::topology`), or is hidden for the moment.
        let w_tag = crate::layout::tag_width(tag.chars().count());
        let dx = l.tag_dx(at.x, at.y, w_tag);
        let tr = format!(
            "translate({} {})",
            n(dx.unwrap_or(0.0)),
            n(-crate::layout::TAG_RISE)
        );
        h.open(
            "g",
            &[
                (
                    "class",
                    if dx.is_some() {
                        "msg__tag"
                    } else {
                        "msg__tag hidden"
                    },
                ),
                ("data-w", &(w_tag as u32).to_string()),
                ("transform", &tr),
            ],
        );
        let w_px = n(w_tag);
        h.void(
            "rect",
            &[
                ("class", "msg__pill"),
                ("x", "0"),
                ("y", "-20"),
                ("width", &w_px),
                ("height", "20"),
                ("rx", "10"),
            ],
        );
        h.el(
            "text",
            &[("class", "msg__label"), ("x", "5"), ("y", "-5")],
            &tag,
        );
        h.close("g");
        h.el("text", &[("class", "msg__x"), ("x", "-5"), ("y", "5")], "✕");
        h.close("g");
    }
    h.close("g").close("svg");
    h.finish()
}

/// Where the sequence diagram draws step `k` (for scrolling it into view).
pub fn sequence_y(k: usize) -> f64 {
    seqdiag::row_y(k)
}

/// The sequence diagram as SVG: a lane per node, an arrow per message, the
/// current step highlighted. Arrows and marks are [`Action::Jump`]s: a click goes to their step.
/// `lane_w` is the width of a lane (narrower on phones). Unless `future`, only
/// what has happened up to `cursor` is drawn: a message still in flight is a
/// short stub whose fate (delivered or lost) is not shown, and nothing later.
/// `mark` is a step drawn framed: where the run leaves another (Show me, or two
/// sets of defences side by side).
pub fn sequence(
    ui: &Ui,
    trace: &[StepRecord],
    nodes: &[NodeId],
    cursor: usize,
    lane_w: f64,
    future: bool,
    mark: Option<usize>,
) -> Markup {
    // Unless the future is asked for, the diagram is read off the steps taken so far:
    // a message still in flight at the cursor has no end yet, and no fate.
    let shown = if future {
        trace
    } else {
        &trace[..cursor.min(trace.len())]
    };
    let (arrows, marks) = seqdiag::build(shown);
    let rows = shown.len();
    let lane = |n: NodeId| {
        nodes
            .iter()
            .position(|x| *x == n)
            .map_or(0.0, |i| lane_w / 2.0 + lane_w * i as f64)
    };
    let y = sequence_y;
    let width = lane_w * nodes.len() as f64;
    let height = seqdiag::TOP + seqdiag::ROW_H * (rows as f64 + 1.5);
    let (row_h, placed) = (
        seqdiag::ROW_H,
        seqdiag::lay_out(&arrows, &marks, lane, width),
    );
    let n = num;
    let mut h = Html::new();
    // The lanes' names in a strip of their own that stays at the top of the
    // diagram's scroll box (style/main.css) while the arrows scroll under it;
    // every other name a line lower where neighbours would touch.
    let names: Vec<String> = nodes.iter().map(|node| node_short(ui, *node)).collect();
    let two = names_on_two_lines(&names, lane_w);
    h.open(
        "svg",
        &[
            (
                "class",
                if two {
                    "seq__heads seq__heads--two"
                } else {
                    "seq__heads"
                },
            ),
            ("width", &n(width)),
            ("height", if two { "30" } else { "24" }),
            ("aria-hidden", "true"),
        ],
    );
    for (i, (node, name)) in nodes.iter().zip(&names).enumerate() {
        h.el(
            "text",
            &[
                ("class", "seq__lane-name"),
                ("x", &n(lane(*node))),
                (
                    "y",
                    if two && i % 2 == 1 {
                        "27"
                    } else if two {
                        "13"
                    } else {
                        "16"
                    },
                ),
            ],
            name,
        );
    }
    h.close("svg");
    h.open(
        "svg",
        &[
            ("width", &n(width)),
            ("height", &n(height)),
            ("viewBox", &format!("0 0 {} {}", n(width), n(height))),
            // A group, not an img: its arrows are buttons that jump to their step.
            ("role", "group"),
            ("aria-label", ui.pane_sequence()),
        ],
    );
    h.raw("<defs><marker id=\"seq-arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0 0L10 5L0 10z\" class=\"seq__head\"/></marker></defs>");
    h.void(
        "rect",
        &[
            ("class", "seq__now"),
            ("x", "0"),
            ("y", &n(y(cursor) - row_h / 2.0)),
            ("width", &n(width)),
            ("height", &n(row_h)),
        ],
    );
    if let Some(m) = mark {
        h.void(
            "rect",
            &[
                ("class", "seq__diverge"),
                ("data-testid", "seq-diverge"),
                ("x", "1"),
                ("y", &n(y(m) - row_h / 2.0)),
                ("width", &n(width - 2.0)),
                ("height", &n(row_h)),
            ],
        );
        Action::Jump(m).put(&mut h);
    }
    for node in nodes {
        let x = n(lane(*node));
        h.open("g", &[("class", "seq__lane")]);
        h.void(
            "line",
            &[("x1", &x), ("y1", "24"), ("x2", &x), ("y2", &n(height))],
        );
        h.close("g");
    }
    for (a, d) in arrows.iter().zip(&placed) {
        let seqdiag::Seg { x1, y1, x2, y2 } = d.line;
        let stub = a.end.is_none();
        let class = format!(
            "seq__arrow seq__arrow--{} {}",
            a.kind.slug(),
            classes(&[
                ("lost", a.lost),
                ("future", a.sent > cursor),
                ("inflight", stub),
                ("cur", a.sent == cursor)
            ])
        );
        let step = a.sent.to_string();
        // The name starts with the text drawn (cut label, ✕ when lost), so a voice
        // user can say what they see; then the step and the whole label.
        let shown = &d.label.text;
        let name = format!(
            "{shown}{} ({} {step}: {})",
            if a.lost { " ✕" } else { "" },
            ui.step(),
            a.label
        );
        h.open(
            "g",
            &[
                ("class", &class),
                ("data-testid", "seq-arrow"),
                ("role", "button"),
                // The diagram is one Tab stop; the arrow keys move between its arrows.
                ("tabindex", "-1"),
                ("aria-label", &name),
            ],
        );
        Action::Jump(a.sent).put(&mut h);
        h.el("title", &[], &a.label);
        let (sx1, sy1, sx2, sy2) = (n(x1), n(y1), n(x2), n(y2));
        let line = [
            ("x1", sx1.as_str()),
            ("y1", sy1.as_str()),
            ("x2", sx2.as_str()),
            ("y2", sy2.as_str()),
        ];
        let mut attrs = line.to_vec();
        if d.head {
            attrs.push(("marker-end", "url(#seq-arrow)"));
        }
        h.void("line", &attrs);
        let mut hit = line.to_vec();
        hit.push(("class", "seq__hit"));
        h.void("line", &hit);
        if a.from.is_none() {
            // A found message: it starts at a dot, its sender outside the diagram.
            h.void(
                "circle",
                &[
                    ("class", "seq__head"),
                    ("cx", &sx1),
                    ("cy", &sy1),
                    ("r", "3"),
                ],
            );
        }
        if a.lost {
            h.el(
                "text",
                &[
                    ("class", "seq__x"),
                    ("x", &n(x2 - 5.0)),
                    ("y", &n(y2 + 5.0)),
                ],
                "✕",
            );
        }
        // Where no other arrow crosses it (`seqdiag::lay_out`), cut to the room there.
        let l = &d.label;
        let anchor = if l.end { "end" } else { "start" };
        if !shown.is_empty() {
            h.el(
                "text",
                &[
                    ("class", "seq__label"),
                    ("x", &n(l.x)),
                    ("y", &n(l.y)),
                    ("text-anchor", anchor),
                ],
                shown,
            );
        }
        // A cut label's whole text on a card of its own, shown on focus as on hover
        // (style/main.css); kept inside the diagram.
        if *shown != a.label {
            let chars = a.label.chars().count();
            let w = seqdiag::CH * chars as f64;
            let left = if l.end { l.x - w } else { l.x }.min(width - w).max(0.0);
            let r = l.rect_of(chars);
            h.open("g", &[("class", "seq__full")]);
            h.void(
                "rect",
                &[
                    ("x", &n(left - 3.0)),
                    ("y", &n(r.top - 1.0)),
                    ("width", &n(w + 6.0)),
                    ("height", &n(r.bottom - r.top + 2.0)),
                    ("rx", "3"),
                ],
            );
            h.el("text", &[("x", &n(left)), ("y", &n(l.y))], &a.label);
            h.close("g");
        }
        h.close("g");
    }
    for m in &marks {
        let (glyph, kind) = match m.kind {
            MarkKind::Crash => ("✕", "crash"),
            MarkKind::Restart => ("↻", "restart"),
            MarkKind::Timeout => ("○", "timeout"),
            MarkKind::Violation => ("!", "violation"),
            MarkKind::KeyExpired => ("∅", "expired"),
            MarkKind::ClockJump => ("»", "clock"),
        };
        let class = format!(
            "seq__mark seq__mark--{kind}{}",
            if m.step > cursor { " future" } else { "" }
        );
        h.open(
            "text",
            &[
                ("class", &class),
                ("x", &n(lane(m.node) + 6.0)),
                ("y", &n(y(m.step) + 4.0)),
            ],
        );
        Action::Jump(m.step).put(&mut h);
        h.text(glyph).close("text");
    }
    h.close("svg");
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lesson::{ui, Lang};
    use idem_sim::scenario;
    use idem_sim::{Config, Run};

    fn run(id: &str) -> Run {
        let s = scenario::by_id(id).unwrap();
        Run::new(s.clone(), Config::defaults(&s, 1))
    }

    fn attr_text(html: &str, testid: &str) -> String {
        let at = html
            .find(&format!("data-testid=\"{testid}\""))
            .unwrap_or_else(|| panic!("no {testid} in {html}"));
        let start = html[at..].find('>').unwrap() + at + 1;
        let end = html[start..].find('<').unwrap() + start;
        html[start..end].to_string()
    }

    /// On a phone the names of seven lanes ("Redis", "Postgres", "PSP") and Russian's
    /// "Консьюмер" overlapped by up to 10 px; each such strip now takes two lines, and a
    /// strip with room keeps one.
    #[test]
    fn lane_names_take_two_lines_only_where_neighbours_would_touch() {
        let strip = |lang, id: &str, tall| {
            let s = scenario::by_id(id).unwrap();
            let lanes = seqdiag::lane_width(tall, s.nodes().len());
            let names: Vec<String> = s.nodes().iter().map(|n| node_short(ui(lang), *n)).collect();
            names_on_two_lines(&names, lanes)
        };
        for lang in Lang::ALL {
            assert!(strip(lang, "receipt-email", true), "seven lanes on a phone");
            assert!(strip(lang, "idempotency-key", true), "six lanes on a phone");
            assert!(
                !strip(lang, "idempotency-key", false),
                "six lanes beside the topology"
            );
            assert!(!strip(lang, "naive-post", true), "five lanes on a phone");
            assert!(!strip(lang, "late-put", true), "three lanes on a phone");
        }
        assert!(
            strip(Lang::Ru, "consumer-redelivery", false),
            "Консьюмер beside Postgres"
        );
        let html = sequence(
            ui(Lang::En),
            &run("receipt-email").trace,
            &scenario::by_id("receipt-email").unwrap().nodes(),
            5,
            44.0,
            false,
            None,
        )
        .to_string();
        assert!(
            html.contains("seq__heads seq__heads--two") && html.contains(r#"y="27">API A<"#),
            "{html}"
        );
    }

    #[test]
    fn node_names_wrap_to_their_box() {
        assert_eq!(
            wrap("Платёжный API A", 124.0, 1.0),
            vec!["Платёжный", "API A"]
        );
        assert_eq!(wrap("Payment API A", 124.0, 1.0), vec!["Payment API A"]);
        for names in [crate::lesson::ui(Lang::Ru), crate::lesson::ui(Lang::En)] {
            for name in [
                names.node_redis(),
                names.node_postgres(),
                names.node_processor(),
                names.node_mobile_app(),
            ] {
                let title = name.split(" (").next().unwrap();
                let widest = title.split(' ').map(text_width).fold(0.0, f64::max);
                let scale = 1.0f64.min(107.0 / widest);
                assert!(scale >= 0.7, "{title}: the font would shrink below 9 px");
                for line in wrap(title, 107.0, scale) {
                    assert!(
                        text_width(&line) * scale <= 107.0,
                        "{line} is too wide for a store box"
                    );
                }
            }
        }
    }

    #[test]
    fn naive_post_outcome_at_the_end() {
        let r = run("naive-post");
        let ui = ui(Lang::En);
        let html = outcome(ui, r.end());
        assert_eq!(attr_text(&html, "charge-count"), "2");
        assert_eq!(attr_text(&html, "customer-charged"), "$200.00");
        assert_eq!(attr_text(&html, "ledger-rows"), "2");
        assert!(html.contains("data-status=\"violated\""));
        assert!(
            !html.contains("account-balance"),
            "values the scenario lacks are absent"
        );
    }

    /// key-scope with the fingerprint: the refund gets 422, and the phone says
    /// so; "Payment failed" is a payment's screen.
    #[test]
    fn a_refused_refund_is_not_a_failed_payment_on_the_phone() {
        let s = scenario::by_id("key-scope").unwrap();
        let toggles = s
            .default_toggles()
            .with(idem_sim::Toggle::Fingerprint, true);
        let r = Run::new(s.clone(), Config::defaults(&s, 1).with_toggles(toggles));
        let ui = ui(Lang::En);
        let screen = attr_text(&client(ui, r.end()), "phone-screen");
        assert_eq!(screen, "failed (422 idempotency_key_reused)");
        assert_ne!(screen, ui.screen_failed());
    }

    /// Regression: key-scope's outcome read "$100.00 — expected $0.00" in red from
    /// the payment on, a hint before the refund was even sent. Red only once the
    /// replay tells the app its refund is made.
    #[test]
    fn the_outcome_turns_red_only_when_the_refund_is_cheated() {
        let r = run("key-scope");
        let ui = ui(Lang::En);
        let decisive = r.decisive_step().expect("the refund is decisive");
        for k in 0..=r.len() {
            let html = outcome(ui, &r.state_at(k));
            let red = html.contains("class=\"summary bad\"");
            assert_eq!(red, k == r.len(), "step {k} (decisive {decisive}): {html}");
        }
        assert!(outcome(ui, &r.state_at(decisive)).contains("expected $100.00"));
        assert!(outcome(ui, r.end()).contains("expected $0.00"));
    }

    /// Regression: key-reuse-different-body without the fingerprint ended
    /// "$100.00 — expected $250.00" in black: the app believes the $150 order paid,
    /// and the replay of the $100 answer took nothing for it. At rest any difference
    /// is red; and red at the end never comes with every invariant holding.
    #[test]
    fn the_outcome_is_red_at_rest_for_a_payment_never_taken() {
        let r = run("key-reuse-different-body");
        let html = outcome(ui(Lang::En), r.end());
        assert!(html.contains("expected $250.00"), "{html}");
        assert!(html.contains("class=\"summary bad\""), "{html}");
        for s in scenario::all() {
            for toggles in [s.default_toggles(), s.defended()] {
                for seed in 1..=4 {
                    let r = Run::new(s.clone(), Config::defaults(s, seed).with_toggles(toggles));
                    let html = outcome(ui(Lang::En), r.end());
                    let red = html.contains("class=\"summary bad\"");
                    assert!(!red || !r.end().all_hold(), "{} seed {seed}: {html}", s.id);
                }
            }
        }
    }

    /// Regression ("Why" item 5 of issue 23): key-reuse-different-body, defended,
    /// +25 h while the $150 payment waits: the app stops at its deadline and
    /// says "checking", nothing was taken for it, and the line read "$100.00 —
    /// expected $250.00" in red with every invariant holding. The line is the
    /// core's verdict: red exactly when an invariant is broken.
    #[test]
    fn the_outcome_line_is_red_exactly_when_an_invariant_is_broken() {
        let s = scenario::by_id("key-reuse-different-body").unwrap();
        let ui = ui(Lang::En);
        let mut checked = 0;
        for seed in 0..2 {
            let base = Run::new(
                s.clone(),
                Config::defaults(&s, seed).with_toggles(s.defended()),
            );
            for k in 0..base.len() {
                let mut r = base.clone();
                let jump = idem_sim::Command::AdvanceClock(idem_sim::Millis::hours(25));
                if r.apply_at(k, jump).is_err() {
                    continue;
                }
                let end = r.end();
                let red = outcome(ui, end).contains("class=\"summary bad\"");
                assert_eq!(red, !end.all_hold(), "seed {seed}, +25 h at {k}");
                checked += 1;
            }
        }
        assert!(checked > 20);
    }

    /// Regression: the refund's row, the phone and the client pane spoke of a
    /// payment (`pay_2`, "charges … for this payment", "−$-100.00").
    #[test]
    fn a_refund_is_shown_as_a_refund() {
        let s = scenario::by_id("key-scope").unwrap();
        let toggles = s.default_toggles().with(idem_sim::Toggle::ScopedKey, true);
        let r = Run::new(s.clone(), Config::defaults(&s, 1).with_toggles(toggles));
        for lang in Lang::ALL {
            let ui = ui(lang);
            let pane = client(ui, r.end());
            assert_eq!(
                attr_text(&pane, "phone-screen"),
                fill(ui.screen_refunded(), &[&money(ui, 100)])
            );
            assert_eq!(
                attr_text(&pane, "truth"),
                count(ui.truth_refunds(), 1, &[&money(ui, 100)])
            );
            let statement = processor(ui, r.end());
            assert!(
                statement.contains(&format!("+{}", money(ui, 100))),
                "{statement}"
            );
            assert!(!statement.contains("$-"), "{statement}");
        }
        assert!(postgres(ui(Lang::En), r.end(), r.trace.last()).contains("re_2"));
    }

    #[test]
    fn idempotency_key_redis_pane_shows_one_key_with_a_day_of_ttl() {
        let r = run("idempotency-key");
        let ui = ui(Lang::En);
        let html = redis(ui, r.end(), r.trace.last());
        assert_eq!(attr_text(&html, "redis-keys"), "1");
        assert!(html.contains("idem:u42:K1"));
        assert!(html.contains("TTL 23 h 59 min"), "{html}");
    }

    #[test]
    fn every_pane_renders_every_step_of_every_scenario_in_both_languages() {
        for s in scenario::all() {
            let r = Run::new(s.clone(), Config::defaults(s, 2));
            for lang in Lang::ALL {
                let ui = ui(lang);
                for k in 0..=r.len() {
                    let w = r.state_at(k);
                    let rec = if k == 0 { None } else { r.trace.get(k - 1) };
                    for html in [
                        redis(ui, &w, rec),
                        postgres(ui, &w, rec),
                        processor(ui, &w),
                        broker(ui, &w),
                        client(ui, &w),
                        outcome(ui, &w),
                        narration(ui, rec, &w),
                    ] {
                        assert!(
                            !html.contains("{}"),
                            "{}: unfilled template in {html}",
                            s.id
                        );
                        assert_eq!(html.matches("<div").count(), html.matches("</div>").count());
                    }
                }
                let svg = sequence(ui, &r.trace, &s.nodes(), r.len(), 70.0, false, None);
                assert_eq!(
                    svg.matches("data-testid=\"seq-arrow\"").count(),
                    seqdiag::build(&r.trace).0.len()
                );
                // At the start nothing has happened; the future is drawn only on request.
                let start = sequence(ui, &r.trace, &s.nodes(), 0, 70.0, false, None);
                assert!(
                    !start.contains("data-testid=\"seq-arrow\"") && !start.contains("seq__mark"),
                    "{}",
                    s.id
                );
                let all = sequence(ui, &r.trace, &s.nodes(), 0, 70.0, true, None);
                // A marked step (where the run leaves another) is framed, and only that one.
                let marked = sequence(ui, &r.trace, &s.nodes(), 0, 70.0, true, Some(2));
                assert_eq!(marked.matches("seq__diverge").count(), 1);
                assert!(marked.contains("data-testid=\"seq-diverge\" x=\"1\""));
                assert!(marked.contains("data-act=\"jump\" data-step=\"2\"/>"));
                assert!(!all.contains("seq__diverge"));
                assert_eq!(
                    all.matches("data-testid=\"seq-arrow\"").count(),
                    svg.matches("data-testid=\"seq-arrow\"").count()
                );
            }
        }
    }

    #[test]
    fn an_open_transaction_is_shown_as_such() {
        let r = run("idempotency-key");
        let ui = ui(Lang::En);
        let k = (0..r.len())
            .find(|&k| r.state_at(k).db.open_transactions().count() > 0)
            .expect("a transaction opens");
        let html = postgres(ui, &r.state_at(k), r.trace.get(k - 1));
        assert!(html.contains("open transaction tx"), "{html}");
    }
}
