//! The page's URL parameters: parsed once at the edge into typed values, and
//! written back as the reader moves. Anything malformed falls back to a
//! default and yields a [`Notice`] the page shows; nothing here panics.
//!
//! `?scenario=naive-post&step=12&seed=7&lang=ru&speed=2&embed=1&on=fingerprint&off=atomic-claim&retry=1500,4,500,200,43200`

use crate::lesson::Lang;
pub use idem_sim::link::{command_text, parse_command};

/// A reader's command of a link that no longer applies, as a notice quotes it (`3:lose-7`).
pub fn dropped_text(d: &idem_sim::run::Dropped) -> String {
    format!("{}:{}", d.step, command_text(&d.command))
}
use idem_sim::scenario::{Retry, Scenario, ScenarioId, Toggle, Toggles};
use idem_sim::{link, Command};

/// Playback speeds offered: how the URL and the menu write each, and the factor.
pub const SPEEDS: [(&str, f64); 5] = [
    ("0.25", 0.25),
    ("0.5", 0.5),
    ("1", 1.0),
    ("2", 2.0),
    ("4", 4.0),
];

/// The factor for a speed as written (`"0.5"`), if it is offered.
pub fn speed_factor(s: &str) -> Option<f64> {
    SPEEDS.iter().find(|(t, _)| *t == s).map(|(_, f)| *f)
}

/// How a speed factor is written.
pub fn speed_text(f: f64) -> &'static str {
    SPEEDS.iter().find(|(_, x)| *x == f).map_or("1", |(t, _)| t)
}

/// How many characters of a URL's value a notice quotes.
pub const ECHO_CHARS: usize = 40;

/// How many notices a link raises at most; the rest are counted, not listed.
pub const MAX_NOTICES: usize = 5;

/// A value from the URL as a notice quotes it: its first [`ECHO_CHARS`] characters,
/// then "…" (a 10,000-character parameter must not become a 10,000-character notice).
pub fn echo(v: &str) -> String {
    // `get`, not `&v[..i]`: a slice that may panic links the standard library's
    // char-boundary message (Debug of a char and a range: with `parse_command`'s
    // `split_at`, 3.8 KB gzip of the module).
    match v
        .char_indices()
        .nth(ECHO_CHARS)
        .and_then(|(i, _)| v.get(..i))
    {
        Some(head) => format!("{head}…"),
        None => v.to_string(),
    }
}

/// The notices of a link, each once, at most [`MAX_NOTICES`] of them, and how many
/// more there were (`on=x,x,x,…` repeated a thousand times is one notice).
pub fn first_notices(texts: Vec<String>) -> (Vec<String>, usize) {
    let mut out: Vec<String> = Vec::new();
    let mut more = 0;
    for t in texts {
        if out.contains(&t) {
            continue;
        }
        if out.len() < MAX_NOTICES {
            out.push(t);
        } else {
            more += 1;
        }
    }
    (out, more)
}

/// Everything the URL can say, validated.
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    pub scenario: ScenarioId,
    /// The step to open at; `None`: the start.
    pub step: Option<usize>,
    /// `step=decisive`: open at the scenario's decisive moment (its step depends on
    /// the seed, so links from the prose name the moment instead of a number).
    pub decisive: bool,
    pub seed: u64,
    /// `None`: follow the browser.
    pub lang: Option<Lang>,
    pub speed: f64,
    /// Only the visualization, for an iframe.
    pub embed: bool,
    /// The link names a scenario, a step or commands: it points at the lab, so the
    /// page opens scrolled to it.
    pub lab_link: bool,
    /// Toggles switched on / off against the scenario's defaults.
    pub on: Vec<Toggle>,
    pub off: Vec<Toggle>,
    /// The client's policy, where the link gives its own (`retry=`, five
    /// numbers: [`Retry::numbers`]); `None`: the scenario's.
    pub retry: Option<Retry>,
    /// The reader's commands, each with the step it was applied at, in order:
    /// `cmd=3:ack,5:p3,8:xapi-a,9:m12,11:t90000000`.
    pub commands: Vec<(usize, Command)>,
}

/// A parameter that could not be used as given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Notice {
    UnknownScenario(String),
    BadStep(String),
    BadSeed(String),
    UnknownLang(String),
    BadSpeed(String),
    UnknownToggle(String),
    /// The scenario has no such toggle.
    ToggleNotOffered(String),
    BadCommand(String),
    /// `embed` takes 1 or 0.
    BadEmbed(String),
    /// `retry=` is not five numbers: the scenario's policy stays.
    BadRetry(String),
    /// Number `i` of a policy (a link's or a field's) was `typed`, not a plain
    /// number in its range ([`Retry::BOUNDS`]): `used` instead.
    RetryRange {
        i: usize,
        typed: String,
        used: u64,
    },
}

/// Number `i` of the policy `r` set to `v`, as a link or the client pane's
/// field gives it: brought into its range, or left as it was if `v` is not a
/// plain number; `false` if either happened (the reader is told).
pub fn retry_number(r: Retry, i: usize, v: &str) -> (Retry, bool) {
    let mut n = r.numbers();
    // Parsed as the page parses its steps (one parser fewer in the module).
    let typed = digits(v).map(|d| d.parse::<usize>().map_or(u64::MAX, |n| n as u64));
    n[i] = typed.unwrap_or(n[i]);
    let r = Retry::of(n);
    (r, typed == Some(r.numbers()[i]))
}

impl Params {
    /// What a URL without parameters says: every default, and `seed`. [`Params::parse`]
    /// of an empty query (the page's own address) is this, with no notice; the page
    /// takes it so without calling the parser (`app::read_start`).
    pub fn plain(seed: u64) -> Params {
        Params {
            scenario: ScenarioId::ALL[0],
            step: None,
            decisive: false,
            seed,
            lang: None,
            speed: 1.0,
            embed: false,
            lab_link: false,
            on: Vec::new(),
            off: Vec::new(),
            retry: None,
            commands: Vec::new(),
        }
    }

    /// Parses a query string (with or without the leading `?`). `seed` is used
    /// when the URL has none.
    pub fn parse(query: &str, seed: u64) -> (Params, Vec<Notice>) {
        let mut p = Params::plain(seed);
        let mut notices = Vec::new();
        let mut retry = None;
        let mut toggles: Vec<(String, bool)> = Vec::new();
        for (k, v) in pairs(query) {
            p.lab_link |= matches!(k.as_str(), "scenario" | "step" | "cmd");
            match k.as_str() {
                "scenario" => match ScenarioId::parse(&v) {
                    Some(id) => p.scenario = id,
                    None => notices.push(Notice::UnknownScenario(v)),
                },
                "step" if v == "decisive" => p.decisive = true,
                "step" => match digits(&v).and_then(|v| v.parse::<usize>().ok()).ok_or(()) {
                    Ok(n) => p.step = Some(n),
                    Err(_) => notices.push(Notice::BadStep(v)),
                },
                "seed" => match digits(&v).and_then(|v| v.parse::<u64>().ok()).ok_or(()) {
                    Ok(n) => p.seed = n,
                    Err(_) => notices.push(Notice::BadSeed(v)),
                },
                "lang" => match Lang::parse(&v) {
                    Some(l) => p.lang = Some(l),
                    None => notices.push(Notice::UnknownLang(v)),
                },
                "speed" => match speed_factor(&v) {
                    Some(s) => p.speed = s,
                    None => notices.push(Notice::BadSpeed(v)),
                },
                "embed" => match v.as_str() {
                    "1" | "true" => p.embed = true,
                    "0" | "false" => p.embed = false,
                    _ => notices.push(Notice::BadEmbed(v)),
                },
                "cmd" => {
                    for t in v.split(',').filter(|t| !t.is_empty()) {
                        match t
                            .split_once(':')
                            .and_then(|(k, c)| Some((k.parse().ok()?, parse_command(c)?)))
                        {
                            Some(kc) => p.commands.push(kc),
                            None => notices.push(Notice::BadCommand(t.to_string())),
                        }
                    }
                }
                "retry" => retry = Some(v),
                "on" | "off" => {
                    for t in v.split(',').filter(|t| !t.is_empty()) {
                        toggles.push((t.to_string(), k == "on"));
                    }
                }
                _ => {}
            }
        }
        // Toggles are checked against the scenario, once it is known.
        let sc = p.scenario.scenario();
        for (t, on) in toggles {
            match Toggle::from_id(&t) {
                None => notices.push(Notice::UnknownToggle(t)),
                Some(tg) if !sc.offers(tg) => notices.push(Notice::ToggleNotOffered(t)),
                Some(tg) if on => p.on.push(tg),
                Some(tg) => p.off.push(tg),
            }
        }
        // As is the policy: its numbers replace the scenario's, each in its range.
        if let Some(v) = retry {
            let (mut r, mut said) = (sc.retry, Vec::new());
            let mut k = 0;
            for part in v.split(',') {
                if k < 5 {
                    let ok;
                    (r, ok) = retry_number(r, k, part);
                    if !ok {
                        said.push(Notice::RetryRange {
                            i: k,
                            typed: part.to_string(),
                            used: r.numbers()[k],
                        });
                    }
                }
                k += 1;
            }
            if k == 5 {
                p.retry = Some(r);
                notices.append(&mut said);
            } else {
                notices.push(Notice::BadRetry(v));
            }
        }
        (p, notices)
    }

    /// The run the link describes: its scenario under the link's toggles, with
    /// its commands replayed (those that no longer apply are returned).
    pub fn run(&self) -> (idem_sim::Run, Vec<idem_sim::run::Dropped>) {
        self.run_to(idem_sim::run::MAX_STEPS)
    }

    /// [`Params::run`], where the link has no commands computed only as far as step
    /// `upto` (`Run::head`: the page's first stage shows it, `Run::finish` the rest).
    pub fn run_to(&self, upto: usize) -> (idem_sim::Run, Vec<idem_sim::run::Dropped>) {
        let s = self.scenario.scenario();
        let toggles = self.toggles(s.default_toggles());
        let config = idem_sim::Config::defaults(s, self.seed).with_toggles(toggles);
        let s = s.with_retry(self.retry.unwrap_or(s.retry));
        if self.commands.is_empty() {
            return (idem_sim::Run::head(s, config, upto), Vec::new());
        }
        idem_sim::Run::replay(s, config, &self.commands)
    }

    /// Applies the URL's toggles to a scenario's defaults.
    pub fn toggles(&self, defaults: Toggles) -> Toggles {
        let t = self.on.iter().fold(defaults, |acc, t| acc.with(*t, true));
        self.off.iter().fold(t, |acc, t| acc.with(*t, false))
    }

    /// The query string for this state (`?…`) with a run of `s` (the run's own
    /// scenario: its policy may be the reader's) under `toggles`: the toggles
    /// that differ from its defaults and a policy not the catalogue's.
    pub fn to_query(&self, s: &Scenario, toggles: Toggles) -> String {
        let mut q = format!("?scenario={}", self.scenario);
        if let Some(k) = self.step {
            q.push_str(&format!("&step={k}"));
        }
        q.push_str(&format!("&seed={}", self.seed));
        if let Some(l) = self.lang {
            q.push_str(&format!("&lang={}", l.code()));
        }
        if self.speed != 1.0 {
            q.push_str(&format!("&speed={}", speed_text(self.speed)));
        }
        if self.embed {
            q.push_str("&embed=1");
        }
        q.push_str(&link::tail(s, toggles, &self.commands));
        q
    }
}

/// `s` if it is a plain decimal number (no sign, no spaces): `+3` is not a step.
fn digits(s: &str) -> Option<&str> {
    (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())).then_some(s)
}

/// `a=1&b=%20x` → [("a","1"), ("b"," x")]. Malformed escapes are kept as text.
fn pairs(query: &str) -> Vec<(String, String)> {
    query
        .trim_start_matches('?')
        .split('&')
        .filter(|s| !s.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (decode(k), decode(v))
        })
        .collect()
}

fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                match u8::from_str_radix(
                    std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("zz"),
                    16,
                ) {
                    Ok(b) => {
                        out.push(b);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use idem_sim::{Millis, MsgId, NodeId};

    fn parse(q: &str) -> (Params, Vec<Notice>) {
        Params::parse(q, 99)
    }

    #[test]
    fn an_empty_query_is_the_plain_params() {
        for q in ["", "?"] {
            assert_eq!(parse(q), (Params::plain(99), Vec::new()), "{q:?}");
        }
    }

    #[test]
    fn a_full_link_round_trips() {
        let (p, n) = parse(
            "?scenario=idempotency-key&step=12&seed=7&lang=ru&speed=2&embed=1&on=fingerprint",
        );
        assert!(n.is_empty(), "{n:?}");
        assert_eq!(p.scenario, "idempotency-key");
        assert_eq!(
            (p.step, p.seed, p.lang, p.speed, p.embed),
            (Some(12), 7, Some(Lang::Ru), 2.0, true)
        );
        let s = ScenarioId::IdempotencyKey.scenario();
        let q = p.to_query(s, p.toggles(s.default_toggles()));
        assert_eq!(
            q,
            "?scenario=idempotency-key&step=12&seed=7&lang=ru&speed=2&embed=1&on=fingerprint"
        );
        assert_eq!(parse(&q).0, p);
    }

    #[test]
    fn a_retry_preset_round_trips_through_the_link_and_its_run() {
        let (p, n) = parse("?scenario=idempotency-key&on=no-retry");
        assert!(n.is_empty(), "{n:?}");
        let run = p.run().0;
        assert_eq!(
            run.scenario.retry_policy(run.config.toggles).max_attempts,
            1
        );
        let q = p.to_query(&run.scenario, run.config.toggles);
        assert!(q.ends_with("&on=no-retry"), "{q}");
        assert_eq!(parse(&q).0, p);
        // A scenario without the preset says so and keeps its policy.
        let (p, n) = parse("?scenario=ttl-expiry&on=no-retry,short-deadlin");
        assert_eq!(
            n,
            vec![
                Notice::ToggleNotOffered("no-retry".into()),
                Notice::UnknownToggle("short-deadlin".into()),
            ]
        );
        let run = p.run().0;
        assert_eq!(
            run.scenario.retry_policy(run.config.toggles),
            run.scenario.retry
        );
    }

    #[test]
    fn a_policy_of_the_readers_round_trips_through_the_link_and_its_run() {
        let (p, n) = parse("?scenario=ttl-expiry&seed=3&retry=900,2,100,0,86400");
        assert!(n.is_empty(), "{n:?}");
        let want = Retry {
            timeout: Millis(900),
            max_attempts: 2,
            backoff: Millis(100),
            jitter: Millis(0),
            deadline: Millis::hours(24),
        };
        assert_eq!(p.retry, Some(want));
        let run = p.run().0;
        assert_eq!(run.scenario.retry, want);
        let q = p.to_query(&run.scenario, run.config.toggles);
        assert_eq!(q, "?scenario=ttl-expiry&seed=3&retry=900,2,100,0,86400");
        assert_eq!(parse(&q).0, p);
        // The scenario's own policy is not written.
        let own = ScenarioId::TtlExpiry.scenario();
        assert!(!p.to_query(own, own.default_toggles()).contains("retry"));
    }

    #[test]
    fn a_policy_out_of_range_is_clamped_and_a_malformed_one_ignored_with_a_notice() {
        let (p, n) = parse("?retry=0,99,%2B5,x,99999999999999999999999");
        // naive-post's policy is the phone's: the jitter stays, the rest is clamped.
        assert_eq!(
            p.retry.map(|r| r.numbers()),
            Some([50, 10, 500, 200, 2_592_000])
        );
        let range = |i, typed: &str, used| Notice::RetryRange {
            i,
            typed: typed.into(),
            used,
        };
        assert_eq!(
            n,
            vec![
                range(0, "0", 50),
                range(1, "99", 10),
                range(2, "+5", 500),
                range(3, "x", 200),
                range(4, "99999999999999999999999", 2_592_000),
            ]
        );
        for q in ["?retry=1,2,3", "?retry=", "?retry=1,2,3,4,5,6"] {
            let (p, n) = parse(q);
            assert_eq!(p.retry, None, "{q}");
            assert_eq!(n.len(), 1, "{q}");
            assert!(matches!(n[0], Notice::BadRetry(_)), "{q}");
        }
        // A field: a number in range as typed, an empty one leaves the policy.
        let m = Retry::MOBILE;
        assert_eq!(
            retry_number(m, 4, "60"),
            (
                Retry {
                    deadline: Millis(60_000),
                    ..m
                },
                true
            )
        );
        assert_eq!(retry_number(m, 1, ""), (m, false));
        assert_eq!(
            retry_number(m, 1, "0"),
            (
                Retry {
                    max_attempts: 1,
                    ..m
                },
                false
            )
        );
    }

    #[test]
    fn a_link_with_scenario_step_or_cmd_points_at_the_lab() {
        for q in [
            "?scenario=ttl-expiry",
            "?step=3",
            "?lang=ru&cmd=0:ack",
            "?scenario=nope",
        ] {
            assert!(parse(q).0.lab_link, "{q}");
        }
        for q in ["", "?lang=ru", "?seed=3&speed=2&embed=1"] {
            assert!(!parse(q).0.lab_link, "{q}");
        }
    }

    #[test]
    fn step_can_name_the_decisive_moment() {
        let (p, n) = parse("?scenario=ttl-expiry&step=decisive");
        assert!(n.is_empty(), "{n:?}");
        assert!(p.decisive);
        assert_eq!(p.step, None);
        assert!(!parse("?step=Decisive").0.decisive);
    }

    #[test]
    fn garbage_falls_back_with_a_notice_for_each_parameter() {
        let (p, n) = parse("scenario=nope&step=-3&seed=x&lang=fr&speed=3&on=zzz,fingerprint");
        assert_eq!(p.scenario, "naive-post");
        assert_eq!((p.step, p.seed, p.lang, p.speed), (None, 99, None, 1.0));
        assert_eq!(
            n,
            vec![
                Notice::UnknownScenario("nope".into()),
                Notice::BadStep("-3".into()),
                Notice::BadSeed("x".into()),
                Notice::UnknownLang("fr".into()),
                Notice::BadSpeed("3".into()),
                Notice::UnknownToggle("zzz".into()),
                Notice::ToggleNotOffered("fingerprint".into()),
            ]
        );
    }

    #[test]
    fn signed_numbers_and_other_embed_values_are_reported() {
        let (p, n) = parse("step=%2B3&seed=%2B7&embed=yes");
        assert_eq!((p.step, p.seed, p.embed), (None, 99, false));
        assert_eq!(
            n,
            vec![
                Notice::BadStep("+3".into()),
                Notice::BadSeed("+7".into()),
                Notice::BadEmbed("yes".into()),
            ]
        );
        let (p, n) = parse("step=3&embed=0");
        assert_eq!((p.step, p.embed, n), (Some(3), false, vec![]));
    }

    #[test]
    fn commands_round_trip_and_garbage_is_reported() {
        let (p, n) = parse("scenario=idempotency-key&cmd=0:ack,3:p3,5:xapi-a,6:rapi-a,7:m12,9:t90000000,x:ack,4:zz,5:p");
        assert_eq!(
            p.commands,
            vec![
                (0, Command::LoseNextResponse),
                (3, Command::ParallelRetries(3)),
                (5, Command::Crash(NodeId::Api(0))),
                (6, Command::Restart(NodeId::Api(0))),
                (7, Command::Lose(MsgId(12))),
                (9, Command::AdvanceClock(Millis::hours(25))),
            ]
        );
        assert_eq!(
            n,
            vec![
                Notice::BadCommand("x:ack".into()),
                Notice::BadCommand("4:zz".into()),
                Notice::BadCommand("5:p".into())
            ]
        );
        for (_, c) in &p.commands {
            assert_eq!(parse_command(&command_text(c)).as_ref(), Some(c));
        }
    }

    #[test]
    fn notices_quote_at_most_forty_characters_and_only_a_few() {
        assert_eq!(echo("short"), "short");
        let long = "я".repeat(10_000);
        assert_eq!(echo(&long), format!("{}…", "я".repeat(ECHO_CHARS)));
        assert_eq!(echo(&"x".repeat(ECHO_CHARS)), "x".repeat(ECHO_CHARS));
        let texts: Vec<String> = ["a", "b", "a", "c", "d", "e", "f", "g", "a"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let (first, more) = first_notices(texts);
        assert_eq!(first, ["a", "b", "c", "d", "e"]);
        assert_eq!(more, 2);
    }

    #[test]
    fn escapes_are_decoded_and_broken_ones_kept() {
        assert_eq!(decode("a%20b+c"), "a b c");
        assert_eq!(decode("100%"), "100%");
        assert_eq!(decode("%zz"), "%zz");
        let (_, n) = parse("scenario=%3Cscript%3E");
        assert_eq!(n, vec![Notice::UnknownScenario("<script>".into())]);
    }
}
