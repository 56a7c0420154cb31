//! The Explore panel's results as markup, written here in the worker so the
//! page's module only puts them in place: each [`Reply`] of the answer becomes
//! the contents of one or more elements of the panel, by id ([`PROGRESS`],
//! [`OUTCOMES`], [`TABLE`], and the lab's live region [`ANNOUNCE`]). Every
//! text and attribute goes through the page's own writer (`src/html.rs`), so
//! the markup carries no script and no inline style.
//!
//! The text is the lesson's (`src/lesson/`, `Lesson::explore`), rendered on
//! the host into `worker/text/<lang>.txt`, which the worker fetches. Each
//! outcome's and each breaking cell's run is a link the page opens in place
//! (`data-act="xshow"`), written as the page writes its own links
//! (`idem_sim::link`), so it can be shared and opened in a fresh page.

use crate::html::Html;
use crate::key::{self, Key};
use crate::template;
use idem_sim::answer::{Bar, Cell, Found, Reply};
use idem_sim::explore::{Believed, EndState};
use idem_sim::invariant::Invariant;
use idem_sim::link;
use idem_sim::scenario::{Scenario, ScenarioId, Toggle};
use idem_sim::truth::{Fault, Replay};
use idem_sim::wire::Request;
use idem_sim::{Config, Run};

/// The progress line's element.
pub const PROGRESS: &str = "xp";
/// The outcomes' element.
pub const OUTCOMES: &str = "xo";
/// The truth table's element: filled last, so the page takes it as the end.
pub const TABLE: &str = "xt";
/// The lab's live region (`src/ui/controls/markup.rs`, `lab_head`).
pub const ANNOUNCE: &str = "announce";
/// Two sets of defences side by side: what is compared, where the runs part, how each ends.
pub const COMPARED: &str = "xc";
/// The step both sequence diagrams frame (`Lab::mark`; empty: none), a number, not markup.
pub const MARK: &str = "xm";

/// The labels of one language: the lines of `worker/text/<lang>.txt` (see
/// `fragment::explore_text`), one label per line in the order `crate::key` gives,
/// fetched by the worker's loader: the module carries neither language. The
/// worker indexes them by [`Key`], [`Toggle`] and [`Invariant`], never by a string.
#[derive(Clone, Copy)]
pub struct Text(&'static [&'static str; key::LINES]);

impl Text {
    /// The labels of `text`, if it has exactly one line per label; any other text
    /// (a failed fetch's, or one from another build) is refused.
    pub fn new(text: &'static str) -> Option<Text> {
        let lines: Box<[&'static str]> = text.split_terminator('\n').collect();
        Some(Text(Box::leak(lines.try_into().ok()?)))
    }

    /// The text of `lang` (`ru`; anything else is English), from the source tree.
    #[cfg(test)]
    pub fn of(lang: &str) -> Text {
        Text::new(match lang {
            "ru" => include_str!("../text/ru.txt"),
            _ => include_str!("../text/en.txt"),
        })
        .expect("one line per label")
    }

    /// The label `key` (a [`Text`] has every one).
    pub fn get(self, key: Key) -> &'static str {
        self.0[key as usize]
    }

    /// The name of toggle `t` in scenario `s`.
    fn toggle(self, t: Toggle, s: ScenarioId) -> &'static str {
        self.0[key::toggle(t, s)]
    }

    /// The name of invariant `i`.
    fn invariant(self, i: Invariant) -> &'static str {
        self.0[key::invariant(i)]
    }

    /// The label `key` with its `{}` filled in order (the page's `template::fill`).
    pub fn fill(self, key: Key, args: &[&dyn ToString]) -> String {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        template::fill_text(self.get(key), &args)
    }

    /// The counted label `key` ([`crate::template`]): the form the count `n` takes,
    /// `n` in its `{}`.
    pub fn count(self, key: Key, n: u64) -> String {
        template::count_text(self.get(key), n as usize, &[])
    }
}

/// What the panel shows of one request's answer.
pub struct View {
    req: Request,
    /// The scenario as the reader runs it ([`Request::setup`]).
    s: Scenario,
    t: Text,
    lang: &'static str,
    /// The last progress line, kept under the results.
    line: String,
    /// The reader's run, which Show me's runs are compared with.
    mine: Run,
}

impl View {
    pub fn new(req: &Request, lang: &str, t: Text) -> Option<View> {
        let s = req.setup();
        let config = Config::defaults(&s, req.seed).with_toggles(req.toggles);
        Some(View {
            req: req.clone(),
            mine: Run::replay(s.clone(), config, &req.commands).0,
            s,
            t,
            lang: if lang == "ru" { "ru" } else { "en" },
            line: String::new(),
        })
    }

    /// The run a link opens, with the reader's commands of `r`.
    fn run(&self, r: &Replay, commands: &[(usize, idem_sim::Command)]) -> Run {
        let config = Config::defaults(&self.s, self.req.seed).with_toggles(r.toggles);
        Run::replay(self.s.clone(), config, commands).0
    }

    /// The markup a reply changes, by element id; `ms` since the search began.
    pub fn reply(&mut self, r: &Reply, ms: f64) -> Vec<(&'static str, String)> {
        let t = self.t;
        match r {
            Reply::Progress {
                transitions,
                unique,
                cells,
                of,
            } => {
                let rate = (f64::from(*transitions) * 1000.0 / ms.max(1.0)) as u64;
                let mut h = Html::new();
                if *cells == 0 {
                    self.line = t.fill(Key::Progress, &[transitions, unique, &rate]);
                    h.el("progress", &[("aria-label", t.get(Key::ProgressLabel))], "");
                } else {
                    h.el(
                        "progress",
                        &[
                            ("aria-label", t.get(Key::ProgressLabel)),
                            ("max", &of.to_string()),
                            ("value", &cells.to_string()),
                        ],
                        "",
                    );
                }
                h.el("span", &[], &self.line);
                if *of > 0 && *cells > 0 {
                    h.text(" · ").text(&t.fill(Key::Cells, &[cells, of]));
                }
                vec![(PROGRESS, h.finish().into_string())]
            }
            Reply::Found(f) => {
                let many = f
                    .outcomes
                    .iter()
                    .filter(|b| b.outcome.charges() > 1)
                    .count();
                let said = t.fill(Key::SaidFound, &[&f.outcomes.len(), &many]);
                vec![
                    (OUTCOMES, self.found(f)),
                    (ANNOUNCE, crate::html::esc(&said)),
                ]
            }
            Reply::Compared {
                defences,
                step,
                mine,
                other,
            } => {
                // Both sets named: the reader's switches and the panel's.
                let names = |on: &idem_sim::scenario::Toggles| {
                    let names: Vec<&str> = self
                        .s
                        .defences()
                        .into_iter()
                        .filter(|d| on.has(*d))
                        .map(|d| self.toggle(d))
                        .collect();
                    if names.is_empty() {
                        t.get(Key::None).to_string()
                    } else {
                        names.join(" + ")
                    }
                };
                let (yours, names) = (names(&self.req.toggles), names(defences));
                let part = match step {
                    Some(k) => t.fill(Key::CmpStep, &[k]),
                    None => t.get(Key::CmpSame).to_string(),
                };
                let said = format!(
                    "{part} {}",
                    t.fill(Key::CmpEnd, &[&self.describe(mine), &self.describe(other)])
                );
                let mut h = Html::new();
                h.el("h3", &[], &t.fill(Key::CmpWith, &[&yours, &names]));
                h.el(
                    "p",
                    &[
                        ("data-testid", "compare-said"),
                        ("data-step", &step.map_or(String::new(), |k| k.to_string())),
                    ],
                    &said,
                );
                vec![
                    (MARK, step.map_or(String::new(), |k| k.to_string())),
                    (COMPARED, h.finish().into_string()),
                    (ANNOUNCE, crate::html::esc(&said)),
                ]
            }
            Reply::Table(cells) => {
                let breaks = cells.iter().filter(|c| c.breaks).count();
                let said = t.fill(Key::SaidTable, &[&breaks, &cells.len()]);
                let mut h = Html::new();
                h.el(
                    "progress",
                    &[
                        ("max", "1"),
                        ("value", "1"),
                        ("aria-label", t.get(Key::ProgressLabel)),
                    ],
                    "",
                );
                h.el("span", &[], &self.line);
                h.text(" · ").text(&t.fill(Key::Took, &[&(ms as u64)]));
                // The table last: the page takes it as the end of the answer.
                vec![
                    (PROGRESS, h.finish().into_string()),
                    (ANNOUNCE, crate::html::esc(&said)),
                    (TABLE, self.table(cells)),
                ]
            }
        }
    }

    /// A link that opens `r` in the lab, with the notice it shows there and the
    /// step the sequence diagram marks (`data-mark`: where the run leaves `base`).
    fn show(&self, h: &mut Html, r: &Replay, text: &str, note: &str, mark: Option<usize>) {
        let href = format!(
            "?scenario={}&step={}&seed={}&lang={}{}",
            self.s.id,
            r.step,
            self.req.seed,
            self.lang,
            link::tail(&self.s, r.toggles, &r.commands)
        );
        h.el(
            "a",
            &[
                ("href", &href),
                ("data-act", "xshow"),
                ("data-testid", "explore-show"),
                ("data-note", note),
                ("data-mark", &mark.map_or(String::new(), |k| k.to_string())),
            ],
            text,
        );
    }

    /// The histogram: one row per outcome, the broken ones and the most charges first.
    fn found(&self, f: &Found) -> String {
        let t = self.t;
        let mut h = Html::new();
        h.el("h4", &[], &t.fill(Key::Outcomes, &[&self.req.step]));
        h.el(
            "p",
            &[("class", "muted")],
            &format!(
                "{} {}",
                t.fill(
                    Key::Bounds,
                    &[&self.req.losses, &self.req.crashes, &self.req.jumps]
                ),
                t.get(Key::Limits)
            ),
        );
        let mut ends = t.fill(Key::Ends, &[&f.ends]);
        if f.truncated {
            ends = format!("{ends}. {}", t.get(Key::Truncated));
        }
        h.el("p", &[], &ends);
        h.open("ul", &[("class", "xbars")]);
        // Broken first, then the most charges first; ties keep the order found.
        // An insertion sort: the bars are few, and the library's stable sort
        // costs about 2 KB of the worker's budget.
        let key = |b: &Bar| {
            (
                b.outcome.broken.is_empty(),
                usize::MAX - b.outcome.charges(),
            )
        };
        let mut bars: Vec<&Bar> = f.outcomes.iter().collect();
        for i in 1..bars.len() {
            let mut j = i;
            while j > 0 && key(bars[j - 1]) > key(bars[j]) {
                bars.swap(j - 1, j);
                j -= 1;
            }
        }
        for b in bars {
            let o = &b.outcome;
            h.open(
                "li",
                &[
                    ("data-testid", "explore-outcome"),
                    ("data-charges", &o.charges().to_string()),
                    ("class", if o.broken.is_empty() { "" } else { "broken" }),
                ],
            );
            h.open(
                "meter",
                &[
                    ("min", "0"),
                    ("max", &f.ends.max(1).to_string()),
                    ("value", &b.count.to_string()),
                    ("aria-hidden", "true"),
                ],
            )
            .close("meter");
            let what = format!(
                "{} · {}",
                self.describe(o),
                t.count(Key::Count, b.count as u64)
            );
            h.el("span", &[], &what).text(" ");
            match &b.show {
                Some(r) => {
                    // Where it leaves the reader's run: the first step that differs.
                    let mark = self.mine.diverges(&self.run(r, &r.commands));
                    let note = match mark {
                        Some(k) => t.fill(Key::Note, &[&k]),
                        None => t.get(Key::Same).to_string(),
                    };
                    self.show(&mut h, r, t.get(Key::Show), &note, mark);
                }
                None => {
                    h.el("span", &[("class", "muted")], t.get(Key::NoShow));
                }
            }
            h.close("li");
        }
        h.close("ul");
        h.finish().into_string()
    }

    /// An outcome in words: the money, the ledger, the app's belief, the invariants.
    fn describe(&self, o: &EndState) -> String {
        let t = self.t;
        let mut parts = Vec::new();
        let seen = &o.seen;
        if let Some(n) = seen.charges {
            parts.push(t.fill(Key::Charged, &[&seen.charged]));
            parts.push(t.count(Key::Charges, n as u64));
        }
        if let Some(n) = seen.ledger_rows {
            parts.push(t.count(Key::Ledger, n as u64));
        }
        if let Some(x) = seen.balance {
            parts.push(t.fill(Key::Balance, &[&x]));
        }
        if let Some(x) = seen.likes {
            parts.push(t.count(Key::Likes, x as u64));
        }
        if let Some(x) = &seen.email {
            parts.push(t.fill(Key::Email, &[x]));
        }
        if let Some(x) = &seen.order_status {
            parts.push(t.fill(Key::Order, &[x]));
        }
        if let Some(n) = seen.receipts {
            parts.push(t.count(Key::Receipts, n as u64));
        }
        let beliefs: Vec<String> = o.beliefs.iter().map(|b| self.believed(*b)).collect();
        if !beliefs.is_empty() {
            parts.push(t.fill(Key::App, &[&beliefs.join(", ")]));
        }
        parts.push(if o.broken.is_empty() {
            t.get(Key::AllHold).to_string()
        } else {
            let names: Vec<&str> = o.broken.iter().map(|i| t.invariant(*i)).collect();
            t.fill(Key::Broken, &[&names.join(", ")])
        });
        parts.join(" · ")
    }

    fn believed(&self, b: Believed) -> String {
        let t = self.t;
        match b {
            Believed::NotStarted => t.get(Key::BNotStarted).into(),
            Believed::Succeeded => t.get(Key::BSucceeded).into(),
            Believed::Failed(s) => t.fill(Key::BFailed, &[&s]),
            Believed::Unknown => t.get(Key::BUnknown).into(),
            Believed::GaveUp => t.get(Key::BGaveUp).into(),
        }
    }

    fn toggle(&self, x: Toggle) -> &'static str {
        self.t.toggle(x, self.s.id)
    }

    fn fault(&self, f: Fault) -> &'static str {
        self.t.get(match f {
            Fault::LostResponse => Key::FLostResponse,
            Fault::LostStoreReply => Key::FLostStoreReply,
            Fault::TwoLosses => Key::FTwoLosses,
            Fault::Parallel => Key::FParallel,
            Fault::Crash => Key::FCrash,
            Fault::ClockPastTtl => Key::FClock,
        })
    }

    /// The truth table: a row per combination of defences, a column per fault.
    fn table(&self, cells: &[Cell]) -> String {
        let t = self.t;
        let defences = self.s.defences();
        let mut faults: Vec<Fault> = Vec::new();
        for c in cells {
            if !faults.contains(&c.fault) {
                faults.push(c.fault);
            }
        }
        // A row is named by short codes (A, B, …), which a legend spells out, so the
        // verdicts, not the names, take the width.
        let code = |i: usize| char::from(b'A' + i as u8).to_string();
        let mut h = Html::new();
        h.el("h4", &[], t.get(Key::Table));
        h.el("p", &[("class", "muted")], t.get(Key::TableNote));
        h.open(
            "ul",
            &[("class", "xlegend"), ("data-testid", "truth-legend")],
        );
        for (i, d) in defences.iter().enumerate() {
            h.open("li", &[]).el("b", &[], &code(i));
            h.text(" ").text(self.toggle(*d)).close("li");
        }
        h.close("ul");
        h.open(
            "div",
            &[
                ("class", "xtable"),
                ("role", "region"),
                ("tabindex", "0"),
                ("aria-label", t.get(Key::Table)),
            ],
        );
        h.open("table", &[]).open("thead", &[]).open("tr", &[]);
        h.el("th", &[("scope", "col")], t.get(Key::Defences));
        for f in &faults {
            h.el("th", &[("scope", "col")], self.fault(*f));
        }
        h.close("tr").close("thead").open("tbody", &[]);
        for row in cells.chunks(faults.len().max(1)) {
            let on: Vec<Toggle> = defences
                .iter()
                .copied()
                .filter(|d| row[0].toggles.has(*d))
                .collect();
            let names: Vec<&str> = on.iter().map(|d| self.toggle(*d)).collect();
            let ids: Vec<&str> = on.iter().map(|d| d.id()).collect();
            let (name, codes) = if names.is_empty() {
                (t.get(Key::None).to_string(), t.get(Key::None).to_string())
            } else {
                let codes: Vec<String> = (0..defences.len())
                    .filter(|i| row[0].toggles.has(defences[*i]))
                    .map(code)
                    .collect();
                (names.join(" + "), codes.join("+"))
            };
            h.open("tr", &[]);
            h.el("th", &[("scope", "row"), ("title", &name)], &codes);
            for c in row {
                let (verdict, said) = if c.breaks {
                    ("breaks", Key::Breaks)
                } else {
                    ("holds", Key::Holds)
                };
                h.open(
                    "td",
                    &[
                        ("class", verdict),
                        ("data-testid", "truth-cell"),
                        ("data-verdict", verdict),
                        ("data-fault", c.fault.id()),
                        ("data-on", &ids.join(",")),
                        // A phone shows each row as a card: a cell names its column.
                        ("data-label", self.fault(c.fault)),
                    ],
                );
                match &c.show {
                    Some(r) if c.breaks => {
                        // Where the fault strikes: the run leaves the same defences' run without it.
                        let mark = self.run(r, &[]).diverges(&self.run(r, &r.commands));
                        let at = mark.unwrap_or(0);
                        let note = t.fill(Key::CellNote, &[&name, &self.fault(c.fault), &at]);
                        self.show(&mut h, r, t.get(said), &note, mark);
                    }
                    _ => {
                        h.text(t.get(said));
                    }
                }
                h.close("td");
            }
            h.close("tr");
        }
        h.close("tbody").close("table").close("div");
        h.finish().into_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use idem_sim::answer::answer;
    use idem_sim::scenario;
    use idem_sim::{Command, Config, Run};

    /// Every element's markup of the answer to `req`, in the order posted.
    fn markup(req: &Request, lang: &str) -> Vec<(&'static str, String)> {
        let mut view = View::new(req, lang, Text::of(lang)).expect("scenario");
        let mut out = Vec::new();
        answer(req, 5_000, &mut |r| out.extend(view.reply(r, 100.0)));
        out
    }

    fn request(
        id: &'static str,
        off: &[Toggle],
        commands: Vec<(usize, Command)>,
        step: usize,
    ) -> Request {
        let s = scenario::by_id(id).unwrap();
        let toggles = off
            .iter()
            .fold(s.default_toggles(), |a, t| a.with(*t, false));
        Request {
            scenario: s.id,
            seed: 1,
            toggles,
            retry: s.retry,
            commands,
            step,
            losses: 1,
            crashes: 1,
            jumps: 0,
            table: true,
            cmp: None,
        }
    }

    #[test]
    fn a_comparison_names_the_defences_the_step_where_the_runs_part_and_both_ends() {
        let mut req = request("crash-after-charge", &[], Vec::new(), 0);
        let both = idem_sim::Toggles::of(&[Toggle::SameTransaction, Toggle::KeyToProcessor]);
        req.cmp = Some(both);
        let out = markup(&req, "en");
        let ids: Vec<&str> = out.iter().map(|(id, _)| *id).collect();
        assert_eq!(ids, [MARK, COMPARED, ANNOUNCE]);
        let k: usize = out[0].1.parse().expect("the marked step");
        let s = req.scenario.scenario();
        let mine = Run::new(s.clone(), Config::defaults(s, 1).with_toggles(req.toggles));
        assert_eq!(mine.diverges(&mine.with_defences(both)), Some(k));
        let said = &out[1].1;
        assert!(
            said.contains(&format!("data-step=\"{k}\""))
                && said.contains(&format!("first differ at step {k} ")),
            "{said}"
        );
        assert!(
            said.contains("Key and effect in one transaction + Key passed to the card processor"),
            "{said}"
        );
        assert!(
            said.contains("yours: none · beside it"),
            "both sets named: {said}"
        );
        assert!(
            said.contains("Charged $200") && said.contains("With these defences: Charged $100"),
            "{said}"
        );
        assert!(out[2].1.starts_with("The runs first differ at step"));
    }

    #[test]
    fn every_label_is_there_in_both_languages() {
        for lang in ["en", "ru"] {
            let t = Text::of(lang);
            assert!(t.0.iter().all(|l| !l.is_empty()), "{lang}: an empty label");
        }
        let en = Text::of("en");
        assert_eq!(
            en.toggle(Toggle::AtomicClaim, ScenarioId::IdempotencyKey),
            "Atomic claim (SET NX / INSERT … ON CONFLICT)"
        );
        assert_eq!(
            en.invariant(Invariant::AtMostOnceCharge),
            "At-most-once charge"
        );
        assert_eq!(en.fill(Key::Charged, &[&200]), "Charged $200");
        // A counted label takes its language's form.
        let counts = |lang| [1, 2, 5].map(|n| Text::of(lang).count(Key::Charges, n));
        assert_eq!(counts("en"), ["1 charge", "2 charges", "5 charges"]);
        assert_eq!(counts("ru"), ["1 списание", "2 списания", "5 списаний"]);
    }

    /// The worker found a label by scanning its text for `name=` (`t.<id>`, `i.<id>`
    /// made at run time), and a missing one showed its key or `?`. Now the text is
    /// one label per line in the order `key.rs` gives, indexed by [`Key`], [`Toggle`]
    /// and [`Invariant`]: a text of another length is refused whole, and each kind's
    /// lines follow its enum's `ALL`, so every index lands on its own label.
    #[test]
    fn the_worker_indexes_each_label_by_its_type() {
        let en = include_str!("../text/en.txt");
        assert!(Text::new(en).is_some());
        // One line fewer or more, or none (a failed fetch): refused.
        let fewer = &en[..en.trim_end().rfind('\n').unwrap() + 1];
        for wrong in [fewer, "", "one\ntwo\n"] {
            assert!(
                Text::new(wrong).is_none(),
                "{} lines",
                wrong.lines().count()
            );
        }
        let longer: &'static str = Box::leak(format!("{en}extra\n").into_boxed_str());
        assert!(Text::new(longer).is_none());
        // `t as usize` is the place in `ALL`, which the text follows.
        assert!(Key::ALL.iter().enumerate().all(|(n, k)| *k as usize == n));
        assert!(Toggle::ALL
            .iter()
            .enumerate()
            .all(|(n, t)| *t as usize == n));
        assert!(Invariant::ALL
            .iter()
            .enumerate()
            .all(|(n, i)| *i as usize == n));
        assert_eq!(key::INVARIANTS - key::TOGGLES, Toggle::ALL.len());
        assert_eq!(key::TOGGLES, Key::ALL.len());
        let t = Text::of("en");
        assert_eq!(
            t.get(Key::Progress),
            "States explored: {} · distinct: {} · per second: {}"
        );
        assert_eq!(
            t.get(Key::CmpEnd),
            "At the end — yours: {}. With these defences: {}."
        );
        assert_eq!(
            t.toggle(Toggle::IdempotencyKey, ScenarioId::NaivePost),
            "Idempotency-Key with a key table"
        );
        assert_eq!(
            t.toggle(Toggle::DeleteOnError, ScenarioId::NaivePost),
            "Powertools: the key is deleted"
        );
        assert_eq!(
            t.invariant(Invariant::AppShowsWhatHappened),
            "The app shows what happened"
        );
        // A scenario that names a toggle apart gets its own name; the others the common one.
        assert_eq!(
            t.toggle(Toggle::UniqueConstraint, ScenarioId::CounterIncrement),
            "Unique index on like_ops.op_id"
        );
        assert_eq!(
            t.toggle(Toggle::UniqueConstraint, ScenarioId::IdempotencyKey),
            "Unique constraint"
        );
    }

    #[test]
    fn without_the_claim_a_two_charge_outcome_links_to_a_run_that_charges_twice() {
        let req = request(
            "idempotency-key",
            &[Toggle::AtomicClaim, Toggle::KeyToProcessor],
            vec![(2, Command::ParallelRetries(2))],
            3,
        );
        let out = markup(&req, "en");
        let ids: Vec<&str> = out.iter().map(|(id, _)| *id).collect();
        assert_eq!(ids.first(), Some(&PROGRESS));
        assert_eq!(ids.last(), Some(&TABLE));
        let (_, found) = out
            .iter()
            .find(|(id, _)| *id == OUTCOMES)
            .expect("outcomes");
        let li = found
            .split("<li ")
            .find(|l| l.contains("data-charges=\"2\""))
            .expect("a two-charge outcome");
        let href = li
            .split("href=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        let href = href.replace("&amp;", "&");
        assert!(
            href.starts_with("?scenario=idempotency-key&step="),
            "{href}"
        );
        assert!(
            href.contains("off=atomic-claim,key-to-processor")
                || href.contains("off=key-to-processor,atomic-claim"),
            "{href}"
        );
        // The link's commands replay the run to two charges.
        let cmds: Vec<(usize, Command)> = href
            .split("cmd=")
            .nth(1)
            .unwrap()
            .split(',')
            .map(|c| {
                let (k, c) = c.split_once(':').unwrap();
                (k.parse().unwrap(), link::parse_command(c).unwrap())
            })
            .collect();
        let step: usize = href
            .split("step=")
            .nth(1)
            .unwrap()
            .split('&')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let s = scenario::by_id("idempotency-key").unwrap();
        let config = Config::defaults(&s, 1).with_toggles(req.toggles);
        let (run, dropped) = Run::replay(s.clone(), config, &cmds);
        assert!(dropped.is_empty());
        assert_eq!(run.state_at(step).processor.charges.len(), 2);
        assert!(li.contains("leaves yours at step"), "{li}");
        // The step named is the one marked: the first where the run leaves the reader's.
        let mark: usize = li
            .split("data-mark=\"")
            .nth(1)
            .and_then(|m| m.split('"').next())
            .and_then(|m| m.parse().ok())
            .expect("a marked step");
        assert!(
            li.contains(&format!("leaves yours at step {mark} ")),
            "{li}"
        );
        let mine = Run::replay(s, config, &req.commands).0;
        assert_eq!(mine.diverges(&run), Some(mark));
        assert!(mark > req.step, "it leaves after the reader's step: {mark}");
    }

    #[test]
    fn the_table_of_crash_after_charge_breaks_without_defences_and_holds_with_all() {
        let req = request("crash-after-charge", &[], Vec::new(), 0);
        let out = markup(&req, "ru");
        let (_, table) = out.iter().find(|(id, _)| *id == TABLE).expect("table");
        let s = scenario::by_id("crash-after-charge").unwrap();
        let all: Vec<&str> = s.defences().iter().map(|d| d.id()).collect();
        let cell = |on: &str| {
            let needle = format!("data-fault=\"crash\" data-on=\"{on}\"");
            table
                .split("<td ")
                .find(|c| c.contains(&needle))
                .unwrap()
                .to_string()
        };
        assert!(
            cell("").contains("data-verdict=\"breaks\"") && cell("").contains("data-act=\"xshow\"")
        );
        // Its link marks the step where the crash strikes, and its notice names it.
        assert!(
            cell("").contains("сбой: падение, он случается на шаге"),
            "{}",
            cell("")
        );
        assert!(!cell("").contains("data-mark=\"\""), "{}", cell(""));
        assert!(cell(&all.join(",")).contains("data-verdict=\"holds\""));
        assert!(table.contains("Какие защиты"));
        assert!(!table.contains("<script") && !table.contains("style="));
    }
}
