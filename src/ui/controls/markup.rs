//! The controls as markup, pure and tested on the host: the lab's head and the
//! picker, playback, the faults the scenario offers, its switches in sections
//! the reader opens, and the client's retry policy. Written once per page or
//! scenario, never re-rendered (so focus stays where the reader put it).

use crate::html::{Html, Markup};
use crate::lesson::{name, toggle_label, Lang, Ui};
use crate::narrate::fill;
use crate::params::{echo, SPEEDS};
use crate::ui::act::{Act, Action};
use idem_sim::scenario::{Group, Retry, Scenario, ScenarioId, Toggle, ToggleKind};
use idem_sim::{Command, NodeId};

/// The lab's head for scenario `id`: its title, the picker and its one-line summary.
/// Written anew with the scenario (the picker keeps the focus: see [`on_event`]).
pub fn lab_head(ui: &Ui, lang: Lang, id: ScenarioId) -> Markup {
    let name = name(lang, id);
    let mut h = Html::new();
    h.open("div", &[("class", "lab__head")]);
    h.el(
        "h2",
        &[
            ("id", "lab-title"),
            ("data-testid", "scenario-title"),
            ("tabindex", "-1"),
        ],
        name.title,
    );
    h.markup(&picker(ui, lang, id));
    // Sharing the state is no fault: it sits with the scenario, not under Faults.
    button(&mut h, Act::Copy, "btn-copy-link", "", ui.copy_link());
    h.close("div");
    h.el("p", &[("class", "summary-line")], name.summary);
    // Where the verdict of a question is announced to screen readers (see ui::lesson).
    h.el(
        "p",
        &[
            ("id", "announce"),
            ("class", "sr-only"),
            ("aria-live", "polite"),
        ],
        "",
    );
    h.finish()
}

/// The picker: the four scenarios, then the pitfalls; `current` is selected.
pub fn picker(ui: &Ui, lang: Lang, current: ScenarioId) -> Markup {
    let mut h = Html::new();
    h.open("label", &[("class", "picker")]);
    h.el("span", &[("class", "picker__label")], ui.scenario_picker());
    h.open(
        "select",
        &[
            ("data-testid", "scenario-picker"),
            ("data-act", Act::Scenario.name()),
        ],
    );
    let groups = [
        (ui.scenario_picker_seed_group(), Group::Seed),
        (ui.scenario_picker_pitfalls_group(), Group::Pitfall),
    ];
    for (label, group) in groups {
        h.open("optgroup", &[("label", label)]);
        for id in ScenarioId::of(group) {
            let selected = if id == current { "selected" } else { "" };
            h.el(
                "option",
                &[("value", id.as_str()), (selected, "")],
                name(lang, id).title,
            );
        }
        h.close("optgroup");
    }
    h.close("select").close("label");
    h.finish()
}

/// A control whose state the lab keeps ([`super::patch`]): the markup writes its
/// element's `id` from it, and the patch reaches the element by the same id, so the
/// two cannot drift (`every_control_the_markup_writes_is_one_the_patch_reaches`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Ctl {
    Back,
    Play,
    Step,
    End,
    Restart,
    /// The step counter.
    Counter,
    Speed,
    Scrub,
    Parallel,
    /// How many parallel retries.
    ParallelN,
    /// The client's retry policy: its fieldset, written anew with the run's policy.
    Policy,
    Crash(NodeId),
    Toggle(Toggle),
    /// The link Copy link offers in a notice to copy by hand ([`share_input`]),
    /// which it focuses and selects.
    ShareLink,
}

impl Ctl {
    /// The element's id.
    pub fn id(self) -> String {
        let name = match self {
            Ctl::Crash(n) => return format!("c-crash-{}", n.slug()),
            Ctl::Toggle(t) => return format!("c-{}", t.id()),
            Ctl::Back => "back",
            Ctl::Play => "play",
            Ctl::Step => "step",
            Ctl::End => "end",
            Ctl::Restart => "restart",
            Ctl::Counter => "counter",
            Ctl::Speed => "speed",
            Ctl::Scrub => "scrub",
            Ctl::Parallel => "parallel",
            Ctl::ParallelN => "parallel-n",
            Ctl::Policy => "policy",
            Ctl::ShareLink => "share",
        };
        format!("c-{name}")
    }

    /// Every control the lab writes for a scenario of `nodes` offering the switches
    /// `offered`: playback's, the client's (its parallel retries and policy), a crash
    /// per node that can crash, a switch per toggle.
    pub fn of(nodes: &[NodeId], offered: &[Toggle]) -> Vec<Ctl> {
        use Ctl::*;
        let mut v = vec![Back, Play, Step, End, Restart, Counter, Speed, Scrub];
        if nodes.contains(&NodeId::Client) {
            v.extend([Parallel, ParallelN, Policy]);
        }
        v.extend(nodes.iter().filter(|n| n.can_crash()).map(|n| Crash(*n)));
        v.extend(offered.iter().map(|t| Toggle(*t)));
        v
    }

    /// The control whose button [`button`] writes for `act`, if the lab keeps its state.
    fn of_act(act: Act) -> Option<Ctl> {
        Some(match act {
            Act::Back => Ctl::Back,
            Act::Step => Ctl::Step,
            Act::End => Ctl::End,
            Act::Restart => Ctl::Restart,
            Act::Parallel => Ctl::Parallel,
            _ => return None,
        })
    }
}

/// A button: `(act, testid, label, text)`; an empty label means the text names it.
fn button(h: &mut Html, act: Act, testid: &str, label: &str, text: &str) {
    let id = Ctl::of_act(act).map(Ctl::id);
    h.el(
        "button",
        &[
            ("type", "button"),
            match id.as_deref() {
                Some(id) => ("id", id),
                None => ("", ""),
            },
            ("data-act", act.name()),
            ("data-testid", testid),
            if label.is_empty() {
                ("", "")
            } else {
                ("aria-label", label)
            },
            if label.is_empty() {
                ("", "")
            } else {
                ("title", label)
            },
        ],
        text,
    );
}

/// Play, pause, step, back, to the end, restart, the counter, the speed and the timeline.
pub fn playback(ui: &Ui) -> Markup {
    let mut h = Html::new();
    h.open(
        "div",
        &[
            ("class", "playback"),
            ("role", "toolbar"),
            ("aria-label", ui.lab_title()),
        ],
    );
    button(&mut h, Act::Back, "btn-back", ui.back(), "◀");
    h.el(
        "button",
        &[
            ("type", "button"),
            ("class", "primary"),
            ("id", &Ctl::Play.id()),
            ("data-act", Act::Play.name()),
            ("data-testid", "btn-play"),
            ("aria-pressed", "false"),
            ("aria-label", ui.play()),
        ],
        &format!("▶ {}", ui.play()),
    );
    button(
        &mut h,
        Act::Step,
        "btn-step",
        ui.step(),
        &format!("{} ▶", ui.step()),
    );
    button(&mut h, Act::End, "btn-end", ui.to_end(), "⇥");
    button(&mut h, Act::Restart, "btn-restart", ui.restart(), "↺");
    h.el(
        "span",
        &[
            ("class", "counter"),
            ("id", &Ctl::Counter.id()),
            ("data-testid", "step-counter"),
            ("aria-live", "off"),
        ],
        "",
    );
    h.open("label", &[("class", "speed")]);
    h.el("span", &[], ui.speed());
    h.open(
        "select",
        &[
            ("id", &Ctl::Speed.id()),
            ("data-testid", "speed"),
            ("data-act", Act::Speed.name()),
        ],
    );
    for (text, _) in SPEEDS {
        h.el("option", &[("value", text)], &format!("{text}×"));
    }
    h.close("select").close("label").close("div");
    h.open(
        "input",
        &[
            ("class", "scrubber"),
            ("type", "range"),
            ("id", &Ctl::Scrub.id()),
            ("data-testid", "scrubber"),
            ("data-act", Act::Scrub.name()),
            ("min", "0"),
            ("aria-label", ui.timeline()),
        ],
    );
    h.el("p", &[("class", "hint muted")], ui.keyboard_hint());
    h.finish()
}

/// The sequence diagram's switch: it shows only what has happened, unless the reader asks.
pub fn future_switch(ui: &Ui) -> Markup {
    let mut h = Html::new();
    h.open("label", &[("class", "switch")]);
    h.open(
        "input",
        &[
            ("type", "checkbox"),
            ("data-act", Act::Future.name()),
            ("data-testid", "show-future"),
        ],
    );
    h.el("span", &[], ui.show_future()).close("label");
    h.finish()
}

/// A fault the reader can inject.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Fault {
    Ack,
    Parallel,
    Crash(NodeId),
    H1,
    H25,
}

/// Every fault offered with the scenario's `nodes`, in the order they are drawn.
pub fn offered_faults(nodes: &[NodeId]) -> Vec<Fault> {
    let mut v = Vec::new();
    if nodes.contains(&NodeId::Client) {
        v.extend([Fault::Ack, Fault::Parallel]);
    }
    v.extend(
        nodes
            .iter()
            .filter(|n| n.can_crash())
            .map(|n| Fault::Crash(*n)),
    );
    v.extend([Fault::H1, Fault::H25]);
    v
}

/// The fault scenario `s` is about, offered in its first screen (the others wait
/// in "What else could happen?"): the crash it scripts, the clock it moves, the
/// duplicates its several API instances race, else the lost acknowledgement.
pub fn lead_fault(s: &Scenario) -> Fault {
    let clock = s
        .script
        .iter()
        .any(|x| matches!(x.command, Command::AdvanceClock(_)));
    let client = s.nodes().contains(&NodeId::Client);
    match s.crashes.first() {
        Some(c) => Fault::Crash(c.node),
        None if clock => Fault::H25,
        None if client && s.apis > 1 => Fault::Parallel,
        None if client => Fault::Ack,
        None => offered_faults(&s.nodes())[0],
    }
}

/// The buttons of `faults` (a lost ack, parallel retries, crashes, the clock) in a
/// fieldset of the lab's faults.
pub fn faults(ui: &Ui, faults: &[Fault]) -> Markup {
    let mut h = Html::new();
    h.open("fieldset", &[("class", "faults")]);
    h.el("legend", &[], ui.faults());
    for f in faults {
        match f {
            Fault::Ack => button(&mut h, Act::Ack, "btn-drop-ack", "", ui.lose_next_ack()),
            // Its count is the client's: "Change the client" ([`policy`]).
            Fault::Parallel => button(&mut h, Act::Parallel, "btn-parallel-retries", "", ""),
            Fault::Crash(n) => {
                h.open(
                    "button",
                    &[("type", "button"), ("id", &Ctl::Crash(*n).id())],
                );
                Action::Crash(*n).put(&mut h);
                h.close("button");
            }
            Fault::H1 => button(&mut h, Act::H1, "btn-advance-1h", "", ui.advance_1h()),
            Fault::H25 => button(&mut h, Act::H25, "btn-advance-25h", "", ui.advance_25h()),
        }
    }
    h.close("fieldset");
    h.finish()
}

/// The field that offers `link` to copy by hand, where Copy link could not copy it
/// (`share::copy_link` reaches it by [`Ctl::ShareLink`]).
pub fn share_input(ui: &Ui, link: &str) -> Markup {
    let mut h = Html::new();
    h.open(
        "input",
        &[
            ("class", "share"),
            ("id", &Ctl::ShareLink.id()),
            ("readonly", ""),
            ("value", link),
            ("data-testid", "share-link"),
            ("aria-label", ui.copy_link()),
        ],
    );
    h.finish()
}

/// A section of controls the reader opens ([`section`]): the markup writes its
/// element's `id` from it, and the page reaches the element by the same id (a
/// fix-it question opens [`Sec::Defences`]), so the two cannot drift
/// (`every_section_and_field_is_reached_by_the_id_its_markup_writes`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Sec {
    Defences,
    /// The client's switches and policy (or the story's bugs and variants).
    Client,
    /// More faults and the explorer.
    More,
}

impl Sec {
    pub const ALL: [Sec; 3] = [Sec::Defences, Sec::Client, Sec::More];

    /// Its name: the summary's test id is `sec-<name>`.
    pub const fn name(self) -> &'static str {
        match self {
            Sec::Defences => "defences",
            Sec::Client => "client",
            Sec::More => "more",
        }
    }

    /// The section's element id.
    pub fn id(self) -> String {
        format!("s-{}", self.name())
    }
}

/// A section of controls the reader opens: `summary` names it, `body` is its markup.
pub fn section(sec: Sec, summary: &str, body: &Markup) -> Markup {
    if body.is_empty() {
        return Markup::default();
    }
    let mut h = Html::new();
    h.open("details", &[("class", "more"), ("id", &sec.id())]);
    h.el(
        "summary",
        &[("data-testid", &format!("sec-{}", sec.name()))],
        summary,
    );
    h.open("div", &[("class", "more__body")]);
    h.markup(body).close("div").close("details");
    h.finish()
}

/// The scenario's switches of `kinds` (its defences, or the bugs and variants of its
/// story), under `legend`; `testid` names the fieldset. Empty if none is offered.
pub fn switches(
    ui: &Ui,
    offered: &[Toggle],
    scenario: ScenarioId,
    (legend, testid, kinds): (&str, &str, &[ToggleKind]),
) -> Markup {
    let mut h = Html::new();
    let ts: Vec<Toggle> = offered
        .iter()
        .copied()
        .filter(|t| kinds.contains(&t.kind()))
        .collect();
    if ts.is_empty() {
        return Markup::default();
    }
    h.open(
        "fieldset",
        &[("class", "switches"), ("data-testid", testid)],
    );
    h.el("legend", &[], legend);
    for t in ts {
        let testid = format!("toggle-{}", t.id());
        h.open("label", &[("class", "switch")]);
        h.open(
            "input",
            &[
                ("type", "checkbox"),
                ("id", &Ctl::Toggle(t).id()),
                ("data-testid", &testid),
            ],
        );
        Action::Toggle(t).put(&mut h);
        h.el("span", &[], toggle_label(ui, t, Some(scenario)))
            .close("label");
    }
    h.close("fieldset");
    h.finish()
}

/// The defences' group of [`switches`].
pub fn defence_group(ui: &Ui) -> (&str, &'static str, &'static [ToggleKind]) {
    (ui.defences(), "defences", &[ToggleKind::Defence])
}

/// The bugs' and variants' group of [`switches`].
pub fn variant_group(ui: &Ui) -> (&str, &'static str, &'static [ToggleKind]) {
    (
        ui.bugs_variants(),
        "variants",
        &[ToggleKind::Bug, ToggleKind::Variant],
    )
}

/// The labels of the policy's numbers, in [`Retry::numbers`]' order.
fn retry_labels(ui: &Ui) -> [&str; 5] {
    [
        ui.retry_timeout(),
        ui.retry_attempts(),
        ui.retry_backoff(),
        ui.retry_jitter(),
        ui.retry_deadline(),
    ]
}

/// The client's retry policy as the five numbers the reader changes (`n`, the
/// run's: [`Retry::numbers`]), under the switches (which hold its presets; the
/// client pane shows the policy and its schedule): written once per scenario;
/// [`show_policy`] keeps their values.
pub fn policy(ui: &Ui, n: [u64; 5]) -> Markup {
    let mut h = Html::new();
    h.open(
        "fieldset",
        &[
            ("class", "policy"),
            ("id", &Ctl::Policy.id()),
            ("data-testid", "retry-form"),
        ],
    );
    h.el("legend", &[], ui.retry_policy());
    for (i, label) in retry_labels(ui).into_iter().enumerate() {
        h.open("label", &[]).el("span", &[], label);
        h.open("input", &[("type", "number"), ("value", &n[i].to_string())]);
        Action::Retry(i).put(&mut h);
        h.close("label");
    }
    // How many retries the parallel fault fires at once is the client's too: it waits
    // here while the fault's button is in the first screen (issue 26).
    h.open("label", &[]).el("span", &[], ui.parallel_count());
    h.open(
        "input",
        &[
            ("type", "number"),
            ("min", "2"),
            ("max", "10"),
            ("value", "3"),
            ("id", &Ctl::ParallelN.id()),
            ("data-testid", "parallel-n"),
            ("data-act", Act::ParallelN.name()),
        ],
    );
    h.close("label").close("fieldset");
    h.finish()
}

/// The notice for number `i` of a policy out of range (a link's or a field's).
pub fn retry_range(ui: &Ui, i: usize, typed: &str, used: u64) -> String {
    let (lo, hi) = Retry::BOUNDS[i];
    fill(
        ui.retry_range(),
        &[
            retry_labels(ui)[i],
            &lo.to_string(),
            &hi.to_string(),
            &echo(typed),
            &used.to_string(),
        ],
    )
}

/// Shows a step count like "Step 3 of 9" for screen readers.
pub fn step_of(ui: &Ui, k: usize, n: usize) -> String {
    fill(ui.step_of(), &[&k.to_string(), &n.to_string()])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lesson::ui;

    /// Each scenario opens with the one fault it is about, and it is one the lab offers.
    #[test]
    fn each_scenario_leads_with_the_fault_it_is_about() {
        let lead = |id: &str| lead_fault(&idem_sim::scenario::by_id(id).unwrap());
        assert_eq!(lead("naive-post"), Fault::Ack);
        assert_eq!(lead("concurrent-duplicates"), Fault::Parallel);
        assert_eq!(lead("ttl-expiry"), Fault::H25);
        for s in idem_sim::scenario::all() {
            assert!(
                offered_faults(&s.nodes()).contains(&lead_fault(s)),
                "{}",
                s.id
            );
        }
    }

    /// The patch found the controls by CSS selectors of its own, apart from the markup
    /// that wrote them. Now each is reached by its [`Ctl`]'s id: every control the lab
    /// writes with one is a control the patch reaches for that scenario, and every
    /// control it reaches is written, in each scenario.
    #[test]
    fn every_control_the_markup_writes_is_one_the_patch_reaches() {
        let ui = ui(Lang::En);
        for s in idem_sim::scenario::all() {
            let nodes = s.nodes();
            let offered: Vec<Toggle> = s.toggles.iter().map(|(t, _)| *t).collect();
            // What the lab writes for the scenario (`app::grid`).
            let mut html = lab_head(ui, Lang::En, s.id).to_string();
            html += &playback(ui);
            html += &future_switch(ui);
            html += &faults(ui, &offered_faults(&nodes));
            html += &switches(ui, &offered, s.id, defence_group(ui));
            html += &switches(ui, &offered, s.id, variant_group(ui));
            if nodes.contains(&NodeId::Client) {
                let n = s.retry_policy(s.default_toggles()).numbers();
                html += &policy(ui, n);
            }
            let written: std::collections::BTreeSet<&str> = html
                .match_indices(" id=\"c-")
                .filter_map(|(i, _)| html[i + 5..].split('"').next())
                .collect();
            let reached: Vec<String> = Ctl::of(&nodes, &offered).into_iter().map(Ctl::id).collect();
            let reached = reached.iter().map(String::as_str).collect();
            assert_eq!(written, reached, "{}", s.id);
            assert!(written.len() >= 10, "{}: {written:?}", s.id);
        }
    }

    /// The fix-it question found the defences' section by `details[data-sec=defences]`,
    /// and Copy link its field by `[data-testid=share-link]`: selectors of their own,
    /// apart from the markup. Now each is reached by the id its handle writes.
    #[test]
    fn every_section_and_field_is_reached_by_the_id_its_markup_writes() {
        let ui = ui(Lang::En);
        let body = Markup::text("x");
        let mut ids = std::collections::BTreeSet::new();
        for sec in Sec::ALL {
            let html = section(sec, "s", &body).to_string();
            let id = sec.id();
            assert!(
                html.starts_with(&format!("<details class=\"more\" id=\"{id}\">")),
                "{html}"
            );
            assert!(ids.insert(id), "{sec:?}: an id twice");
        }
        let field = share_input(ui, "?a=1&b=2").to_string();
        assert!(
            field.contains(&format!(" id=\"{}\"", Ctl::ShareLink.id())),
            "{field}"
        );
        assert!(field.contains("value=\"?a=1&amp;b=2\""), "{field}");
        // No control of the lab takes the field's id.
        for s in idem_sim::scenario::all() {
            let offered: Vec<Toggle> = s.toggles.iter().map(|(t, _)| *t).collect();
            assert!(!Ctl::of(&s.nodes(), &offered).contains(&Ctl::ShareLink));
        }
        // The page reaches them by these handles, not by selectors of its own.
        for (path, text) in crate::source_files(std::path::Path::new("src")) {
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            for sel in ["data-sec", "[data-testid=share-link]"] {
                assert!(!code.contains(sel), "{}: {sel}", path.display());
            }
        }
    }

    #[test]
    fn markup_names_every_control() {
        let ui = ui(Lang::En);
        let p = playback(ui);
        for act in ["back", "play", "step", "end", "restart", "speed", "scrub"] {
            assert!(p.contains(&format!("data-act=\"{act}\"")), "{act}");
        }
        let f = faults(
            ui,
            &offered_faults(&[NodeId::Client, NodeId::Api(0), NodeId::Redis]),
        );
        assert!(
            f.contains("data-act=\"ack\"") && f.contains("data-node=\"api-a\""),
            "{f}"
        );
        assert!(!faults(ui, &offered_faults(&[NodeId::Api(0)])).contains("btn-drop-ack"));
        let offered = [Toggle::Fingerprint, Toggle::NewKeyPerRetry];
        let id = ScenarioId::IdempotencyKey;
        let d = switches(ui, &offered, id, defence_group(ui));
        let v = switches(ui, &offered, id, variant_group(ui));
        assert!(d.contains("data-testid=\"defences\"") && v.contains("data-testid=\"variants\""));
        assert!(!d.contains("new-key-per-retry") && !v.contains("fingerprint"));
        assert_eq!(
            switches(ui, &[Toggle::Fingerprint], id, variant_group(ui)),
            ""
        );
        let sec = section(Sec::Defences, "Try a defence", &d);
        assert!(
            sec.starts_with("<details class=\"more\" id=\"s-defences\""),
            "{sec}"
        );
        assert_eq!(
            section(Sec::Client, "Change the client", &Markup::default()),
            ""
        );
        assert!(
            picker(ui, Lang::En, ScenarioId::TtlExpiry).contains("<option value=\"naive-post\">")
        );
        assert!(picker(ui, Lang::En, ScenarioId::TtlExpiry)
            .contains("<option value=\"ttl-expiry\" selected=\"\">"));
        let head = lab_head(ui, Lang::En, ScenarioId::NaivePost);
        assert!(!p.contains("show-future") && future_switch(ui).contains("show-future"));
        assert!(
            head.starts_with("<div class=\"lab__head\"><h2 id=\"lab-title\""),
            "{head}"
        );
    }
}
