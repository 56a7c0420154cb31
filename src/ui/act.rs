//! What a control of the page's markup does, as a type: an [`Action`], parsed once
//! by the page's one listener ([`super::listen`]) from the element's `data-act` and
//! its payload's attribute (a message's `data-msg`, an arrow's `data-step`, a link's
//! `data-scenario` …), and written by the markup writers from the same type
//! ([`Action::put`]), so what is written is what is read: a misspelt action does
//! not compile, and a nonsense attribute is a [`BadAction`] (a notice), never a
//! panic. Nothing else reads those attributes. [`Act`] names an action's kind
//! (`Act::Play.selector()` finds its controls). It imports only the types its
//! payloads carry.

use crate::html::Html;
use crate::lesson::Lang;
use idem_sim::scenario::{Retry, ScenarioId, Toggle};
use idem_sim::{MsgId, NodeId};

macro_rules! acts {
    (@payload) => { None };
    (@payload $attr:literal) => { Some($attr) };
    ($($(#[$doc:meta])* $v:ident = $name:literal $(($attr:literal))?,)*) => {
        /// A control's kind of action: the value of its `data-act` attribute.
        #[derive(Clone, Copy, PartialEq, Eq, Debug)]
        pub enum Act {
            $($(#[$doc])* $v,)*
        }

        impl Act {
            /// Every action.
            pub const ALL: [Act; [$($name),*].len()] = [$(Act::$v),*];

            /// The value of its `data-act` attribute.
            pub const fn name(self) -> &'static str {
                match self {
                    $(Act::$v => $name,)*
                }
            }

            /// The CSS selector of its controls: `[data-act=<name>]`.
            pub const fn selector(self) -> &'static str {
                match self {
                    $(Act::$v => concat!("[data-act=", $name, "]"),)*
                }
            }

            /// The attribute that carries its payload, if it has one.
            pub const fn payload(self) -> Option<&'static str> {
                match self {
                    $(Act::$v => acts!(@payload $($attr)?),)*
                }
            }
        }
    };
}

acts! {
    // Playback.
    Back = "back",
    Play = "play",
    Step = "step",
    End = "end",
    Restart = "restart",
    Speed = "speed",
    Scrub = "scrub",
    /// The sequence diagram also draws the steps to come.
    Future = "future",
    /// A message in flight, lost by a click ([`Action::Lose`]).
    Lose = "lose" ("data-msg"),
    /// An arrow or a mark of the sequence diagram: to its step ([`Action::Jump`]).
    Jump = "jump" ("data-step"),
    // Faults.
    Ack = "ack",
    Parallel = "parallel",
    ParallelN = "parallel-n",
    Crash = "crash" ("data-node"),
    H1 = "h1",
    H25 = "h25",
    /// A number of the client's retry policy ([`Action::Retry`]).
    Retry = "retry" ("data-retry"),
    // The scenario's switches, the lab's head, the page's header and notices.
    Toggle = "toggle" ("data-toggle"),
    Copy = "copy",
    Scenario = "scenario",
    Lang = "lang" ("data-lang"),
    Dismiss = "dismiss",
    /// The first screen's Try it button.
    Try = "try",
    /// A link of the prose or the progress to a scenario ([`Action::Open`]).
    Open = "open" ("data-scenario"),
    /// The ADR calculator's form: an input changed.
    Calc = "calc",
    // The Explore panel (the worker's markup writes `xshow` links).
    Explore = "explore",
    XCancel = "xcancel",
    /// An outcome's or a cell's run, a link ([`Action::XShow`]).
    XShow = "xshow" ("href"),
    /// The switches of two sets of defences side by side.
    Cmp = "cmp",
    // The lesson: the question, the progress.
    Check = "check",
    Continue = "continue",
    Clear = "clear",
    Predict = "predict",
}

impl Act {
    /// The action named `name`.
    pub fn parse(name: &str) -> Option<Act> {
        Act::ALL.into_iter().find(|a| a.name() == name)
    }
}

/// What a control asks, with what it needs: parsed once from the element's
/// attributes ([`Action::parse`]), written by [`Action::put`].
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Action {
    /// An action that needs nothing but its kind (one without a [`Act::payload`]).
    Do(Act),
    /// Lose this message in flight.
    Lose(MsgId),
    /// Go to this step of the run.
    Jump(usize),
    /// Open this scenario in the lab, at its decisive step or (`at_start`) its start.
    Open {
        scenario: ScenarioId,
        at_start: bool,
    },
    /// Crash this node (or restart it, if it is down).
    Crash(NodeId),
    /// Flip this switch of the scenario.
    Toggle(Toggle),
    /// This number of the retry policy (an index of [`Retry::BOUNDS`]) changed.
    Retry(usize),
    /// Switch the page to this language.
    Lang(Lang),
    /// Open this run of the explorer (a link of the page: `href`), with the step the
    /// sequence diagram marks and the notice that says why.
    XShow {
        href: String,
        mark: Option<usize>,
        note: Option<String>,
    },
}

/// An element whose action could not be read: a bug of the page's markup, told as
/// a notice.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct BadAction {
    /// The attribute at fault, and its value (`None`: missing).
    pub attr: &'static str,
    pub value: Option<String>,
}

impl BadAction {
    /// The notice that tells it.
    pub fn notice(&self) -> String {
        let mut out = "A control of the page is broken: ".to_string();
        match &self.value {
            Some(v) => {
                for s in [self.attr, "=\"", v, "\"."] {
                    out.push_str(s);
                }
            }
            None => {
                for s in ["no ", self.attr, "."] {
                    out.push_str(s);
                }
            }
        }
        out
    }
}

impl Action {
    /// The action of an element whose attribute `name` is `attr(name)`.
    #[inline(never)]
    pub fn parse(attr: &dyn Fn(&str) -> Option<String>) -> Result<Action, BadAction> {
        let name = attr("data-act");
        let bad = |attr: &'static str, value: Option<String>| BadAction { attr, value };
        let Some(act) = name.as_deref().and_then(Act::parse) else {
            return Err(bad("data-act", name));
        };
        let Some(key) = act.payload() else {
            return Ok(Action::Do(act));
        };
        let Some(v) = attr(key) else {
            return Err(bad(key, None));
        };
        let num = || v.parse::<usize>().ok();
        let action = match act {
            Act::Lose => v.parse().ok().map(|n| Action::Lose(MsgId(n))),
            Act::Jump => num().map(Action::Jump),
            Act::Open => ScenarioId::parse(&v).map(|scenario| Action::Open {
                scenario,
                at_start: attr("data-at").as_deref() == Some("start"),
            }),
            Act::Crash => NodeId::from_slug(&v).map(Action::Crash),
            Act::Toggle => Toggle::from_id(&v).map(Action::Toggle),
            Act::Retry => num()
                .filter(|i| *i < Retry::BOUNDS.len())
                .map(Action::Retry),
            Act::Lang => Lang::parse(&v).filter(|l| l.code() == v).map(Action::Lang),
            Act::XShow => {
                let mark = attr("data-mark").filter(|m| !m.is_empty());
                match mark.as_deref().map(str::parse::<usize>) {
                    Some(Err(_)) => return Err(bad("data-mark", mark)),
                    m => Some(Action::XShow {
                        href: v.clone(),
                        mark: m.and_then(Result::ok),
                        note: attr("data-note"),
                    }),
                }
            }
            _ => None,
        };
        action.ok_or(bad(key, Some(v)))
    }

    /// Its kind.
    pub fn act(&self) -> Act {
        match self {
            Action::Do(a) => *a,
            Action::Lose(_) => Act::Lose,
            Action::Jump(_) => Act::Jump,
            Action::Open { .. } => Act::Open,
            Action::Crash(_) => Act::Crash,
            Action::Toggle(_) => Act::Toggle,
            Action::Retry(_) => Act::Retry,
            Action::Lang(_) => Act::Lang,
            Action::XShow { .. } => Act::XShow,
        }
    }

    /// Says each of its attributes to `out` (name, value), `data-act` first.
    pub fn write(&self, out: &mut dyn FnMut(&'static str, &str)) {
        let act = self.act();
        out("data-act", act.name());
        let key = act.payload().unwrap_or_default();
        match self {
            Action::Do(_) => {}
            Action::Lose(id) => out(key, &id.0.to_string()),
            Action::Jump(k) | Action::Retry(k) => out(key, &k.to_string()),
            Action::Open { scenario, at_start } => {
                out(key, scenario.as_str());
                if *at_start {
                    out("data-at", "start");
                }
            }
            Action::Crash(n) => out(key, &n.slug()),
            Action::Toggle(t) => out(key, t.id()),
            Action::Lang(l) => out(key, l.code()),
            Action::XShow { href, mark, note } => {
                out(key, href);
                if let Some(m) = mark {
                    out("data-mark", &m.to_string());
                }
                if let Some(n) = note {
                    out("data-note", n);
                }
            }
        }
    }

    /// Adds its attributes to the element `h` has just opened.
    pub fn put(&self, h: &mut Html) {
        self.write(&mut |k, v| {
            h.attr(k, v);
        });
    }

    /// The CSS selector of its controls: each of its attributes, `[data-act="toggle"][data-toggle="outbox"]`.
    pub fn selector(&self) -> String {
        let mut out = String::new();
        self.write(&mut |k, v| {
            for s in ["[", k, "=\"", v, "\"]"] {
                out.push_str(s);
            }
        });
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads `action`'s attributes back as the listener reads an element's.
    fn round_trip(action: &Action) -> Result<Action, BadAction> {
        let attrs = attrs(action);
        Action::parse(&|name| {
            attrs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.clone())
        })
    }

    fn attrs(action: &Action) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        action.write(&mut |k, v| out.push((k, v.to_string())));
        out
    }

    /// One of every variant (each payload kind, each plain kind).
    fn every_action() -> Vec<Action> {
        let mut all: Vec<Action> = Act::ALL
            .into_iter()
            .filter(|a| a.payload().is_none())
            .map(Action::Do)
            .collect();
        all.extend([
            Action::Lose(MsgId(17)),
            Action::Jump(0),
            Action::Jump(42),
            Action::Retry(4),
            Action::Crash(NodeId::Api(1)),
            Action::Crash(NodeId::Redis),
            Action::XShow {
                href: "?scenario=naive-post&step=3".into(),
                mark: Some(2),
                note: Some("a \"note\" <b>".into()),
            },
            Action::XShow {
                href: "?x".into(),
                mark: None,
                note: None,
            },
        ]);
        all.extend(Lang::ALL.map(Action::Lang));
        all.extend(Toggle::ALL.map(Action::Toggle));
        for scenario in ScenarioId::ALL {
            for at_start in [false, true] {
                all.push(Action::Open { scenario, at_start });
            }
        }
        all
    }

    #[test]
    fn every_action_reads_back_as_written() {
        let all = every_action();
        for a in &all {
            assert_eq!(round_trip(a).as_ref(), Ok(a), "{:?}", attrs(a));
        }
        // Every kind is among them.
        for k in Act::ALL {
            assert!(all.iter().any(|a| a.act() == k), "{k:?}");
        }
    }

    #[test]
    fn an_action_selects_its_controls() {
        assert_eq!(
            Action::Crash(NodeId::Api(0)).selector(),
            "[data-act=\"crash\"][data-node=\"api-a\"]"
        );
        assert_eq!(Action::Do(Act::Play).selector(), "[data-act=\"play\"]");
    }

    #[test]
    fn each_kind_has_one_name_and_its_selector() {
        for a in Act::ALL {
            assert_eq!(Act::parse(a.name()), Some(a));
            assert_eq!(a.selector(), format!("[data-act={}]", a.name()));
        }
        assert_eq!(Act::parse("nope"), None);
    }

    /// A nonsense attribute is a notice naming it, never a panic.
    #[test]
    fn a_broken_control_is_told_not_panicked() {
        let check = |attrs: &[(&str, &str)], attr: &str, value: Option<&str>| {
            let got = Action::parse(&|n| {
                attrs
                    .iter()
                    .find(|(k, _)| *k == n)
                    .map(|(_, v)| v.to_string())
            });
            let want = BadAction {
                attr: Act::ALL
                    .iter()
                    .filter_map(|a| a.payload())
                    .chain(["data-act", "data-mark"])
                    .find(|a| *a == attr)
                    .unwrap(),
                value: value.map(str::to_string),
            };
            assert_eq!(got, Err(want), "{attrs:?}");
        };
        check(&[], "data-act", None);
        check(&[("data-act", "nope")], "data-act", Some("nope"));
        check(&[("data-act", "lose")], "data-msg", None);
        // A payload that is not one.
        for (act, attr, value) in [
            ("lose", "data-msg", "x"),
            ("lose", "data-msg", "-1"),
            ("jump", "data-step", ""),
            ("retry", "data-retry", "5"),
            ("crash", "data-node", "moon"),
            ("toggle", "data-toggle", "?"),
            ("lang", "data-lang", "ru-RU"),
            ("open", "data-scenario", "nope"),
        ] {
            check(&[("data-act", act), (attr, value)], attr, Some(value));
        }
        check(
            &[("data-act", "xshow"), ("href", "?"), ("data-mark", "two")],
            "data-mark",
            Some("two"),
        );
        let told = Action::parse(&|n| (n == "data-act").then(|| "lose".to_string()));
        assert_eq!(
            told.unwrap_err().notice(),
            "A control of the page is broken: no data-msg."
        );
    }

    /// Every `data-act` the sources write as text (the worker's markup, prose, tests)
    /// is an action the listener knows.
    #[test]
    fn every_data_act_in_the_sources_is_an_action() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut seen = 0;
        for dir in ["src", "worker/src"] {
            for (p, src) in crate::source_files(&root.join(dir)) {
                for (i, _) in src.match_indices("data-act=") {
                    let rest = src[i + 9..].trim_start_matches(['\\', '"']);
                    let name: String = rest
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                        .collect();
                    // `data-act={}` / `data-act=\"{act}\"`: a name filled in.
                    if name.is_empty() {
                        continue;
                    }
                    seen += 1;
                    assert!(Act::parse(&name).is_some(), "{}: {name}", p.display());
                }
            }
        }
        assert!(seen > 0);
    }
}
