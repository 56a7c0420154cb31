//! The lab's state: which run is shown, at which step, how it plays. The
//! simulation computes everything; this only keeps the reader's position in
//! it and forwards the reader's commands to it.

use crate::lesson::{ui, Lang, Ui};
use crate::narrate::fill;
use crate::ui::var::Var;
use idem_sim::scenario::{Retry, ScenarioId, Toggle, Toggles};
use idem_sim::trace::StepRecord;
use idem_sim::{Command, Config, Run, World};
use leptos::prelude::*;

/// Milliseconds per step at 1× speed.
pub const STEP_MS: f64 = 1100.0;

/// Handles to the lab's state, each a [`Var`]. `Copy`, so every component and closure can hold one.
#[derive(Clone, Copy)]
pub struct Lab {
    pub lang: Var<Lang>,
    /// How many times the reader has opened a scenario, the open one too: at each, the
    /// lab and the lesson's question are built anew as for a new scenario. (A count:
    /// Leptos's `Trigger` was a type of its own.)
    pub opened: Var<u32>,
    /// The run's seed (fixed for the page's life; it is in the URL).
    pub seed: u64,
    pub run: Var<Run>,
    /// Steps taken: 0 is the start, `run.len()` the end.
    pub cursor: Var<usize>,
    pub playing: Var<bool>,
    pub speed: Var<f64>,
    /// Progress (0..1) of the animated transition into the current step.
    pub anim: Var<f64>,
    /// Notices for the reader: fallbacks from the URL, refused commands.
    pub notices: Var<Vec<String>>,
    /// How many parallel copies the "parallel retries" button fires.
    pub parallel_n: Var<u32>,
    /// Portrait layout for narrow screens.
    pub tall: Var<bool>,
    /// The sequence diagram also draws the steps to come (off by default: it would
    /// give the run's outcome away).
    pub future: Var<bool>,
    pub embed: bool,
    pub reduced_motion: bool,
    /// What the reader's step shows ([`Step`]): written with the run and the cursor,
    /// by [`Lab::shown`].
    pub step: Var<Step>,
    /// The step the sequence diagram marks: where a run opened from the Explore
    /// panel leaves the reader's; 0 (never a step that differs) marks none, and
    /// any other load clears it.
    pub mark: Var<usize>,
    /// Two sets of defences side by side: 0 compares nothing; else bit 31 and, in
    /// bit i, the scenario's defence i (`Scenario::defences`) of the run shown
    /// beside the reader's (`ui::explore::compared`). A `u32`, as `parallel_n`.
    pub cmp: Var<u32>,
    /// The whole lab is drawn: false only while the page starts (for a lab out of view),
    /// when the lab's core (its markup and the listener) is built in the module's first
    /// task, and the controls' state, the notices, the topology, the narration, the
    /// panes, the diagram and the lesson's parts in a task after the next frame
    /// (`app::app`), so the reader can act sooner: the lab is below the top of the page,
    /// not even laid out then (content-visibility). Where it is on screen at once (a link
    /// to the lab, an embedded lab) it is built whole at once; so is a scenario or
    /// language opened later.
    pub whole: Var<bool>,
    /// Which glide is current: each move starts a new one, and a frame of an older one
    /// stops (not tracked by anything; a `Var` all the same: a `StoredValue` brought its
    /// own copy of Leptos's arena machinery).
    anim_gen: Var<u32>,
}

/// What the reader's step shows: one value, as its three parts change together, written
/// by the methods that move the cursor or change the run (not a memo: the page's only
/// memo brought Leptos's memo machinery, ~1 KB gzip; issue 28, item 5).
pub struct Step {
    /// The world after the current step.
    pub world: World,
    /// The world after the one before.
    pub prev: World,
    /// What the current step did (`None` at the start).
    pub record: Option<StepRecord>,
}

impl Step {
    /// Step `k` of `run`.
    fn at(run: &Run, k: usize) -> Step {
        Step {
            world: run.state_at(k),
            prev: run.state_at(k.saturating_sub(1)),
            record: k.checked_sub(1).and_then(|i| run.trace.get(i).cloned()),
        }
    }
}

/// What the page starts from, read at the edge.
pub struct Start {
    pub lang: Lang,
    /// The run, with the link's commands already applied; where the lab starts out of
    /// view, computed only as far as `step` ([`Lab::finish`] computes the rest).
    pub run: Run,
    pub seed: u64,
    pub step: usize,
    pub speed: f64,
    pub embed: bool,
    /// The link points at the lab: open the page scrolled to it.
    pub to_lab: bool,
    pub reduced_motion: bool,
    pub tall: bool,
    pub notices: Vec<String>,
}

pub fn new_run(id: ScenarioId, toggles: Toggles, seed: u64) -> Run {
    Run::new(
        id.scenario().clone(),
        Config {
            toggles,
            seed,
            random: Default::default(),
        },
    )
}

impl Lab {
    pub fn new(start: Start) -> Lab {
        let run = Var::new(start.run);
        let cursor = Var::new(start.step.min(run.with_untracked(|r| r.len())));
        let step = Var::new(run.with_untracked(|r| Step::at(r, cursor.get_untracked())));
        Lab {
            lang: Var::new(start.lang),
            opened: Var::new(0),
            seed: start.seed,
            run,
            cursor,
            playing: Var::new(false),
            speed: Var::new(start.speed),
            anim: Var::new(1.0),
            notices: Var::new(start.notices),
            parallel_n: Var::new(3),
            tall: Var::new(start.tall),
            future: Var::new(false),
            embed: start.embed,
            reduced_motion: start.reduced_motion,
            step,
            mark: Var::new(0),
            cmp: Var::new(0),
            // A link to the lab, an embedded lab: on screen at once, built whole at once.
            whole: Var::new(start.to_lab || start.embed),
            anim_gen: Var::new(0),
        }
    }

    /// The UI text in the current language. Not reactive: the page is built
    /// anew when the language changes (see `app::grid`), so labels are plain text.
    pub fn ui(&self) -> &'static Ui {
        ui(self.lang.get_untracked())
    }

    /// The open scenario: the run's (not tracked; a memo of its own, or of the
    /// switches, cost its own copy of Leptos's memo, and every effect that follows them
    /// follows the run, or the reader's opening a scenario: `opened`).
    pub fn scenario(&self) -> ScenarioId {
        self.run.with_untracked(|r| r.scenario.id)
    }

    /// The run's switches (not tracked, as [`Lab::scenario`]).
    pub fn toggles(&self) -> Toggles {
        self.run.with_untracked(|r| r.config.toggles)
    }

    /// Computes the rest of a run the page started with only as far as its step
    /// (`app::read_start`, `Run::head`): before the lab's second stage draws it and
    /// before any event is handled, so nothing but the first stage sees it partial.
    pub fn finish(&self) {
        if !self.run.with_untracked(Run::is_whole) {
            self.run.update(Run::finish);
        }
    }

    /// The number of steps of the run (computed so far: see [`Lab::finish`]).
    pub fn steps(&self) -> usize {
        self.run.with(|r| r.len())
    }

    /// Moves to step `k`. One step forward glides; any other move jumps.
    pub fn go(&self, k: usize) {
        let k = k.min(self.run.with_untracked(|r| r.len()));
        let from = self.cursor.get_untracked();
        if k != from {
            self.cursor.set(k);
            self.shown();
        }
        self.anim_gen.update(|g| *g += 1);
        if k == from + 1 && !self.reduced_motion {
            self.anim.set(0.0);
            let dur = (STEP_MS * 0.8 / self.speed.get_untracked()).clamp(120.0, 900.0);
            animate(*self, self.anim_gen.get_untracked(), now_ms(), dur);
        } else {
            self.anim.set(1.0);
        }
    }

    pub fn step_forward(&self) {
        let k = self.cursor.get_untracked();
        if k < self.run.with_untracked(|r| r.len()) {
            self.go(k + 1);
        }
    }

    pub fn step_back(&self) {
        self.playing.set(false);
        self.go(self.cursor.get_untracked().saturating_sub(1));
    }

    pub fn to_end(&self) {
        self.playing.set(false);
        self.go(usize::MAX);
    }

    /// A fresh run of the same scenario and toggles, from the start (the reader's commands are dropped).
    pub fn restart(&self) {
        self.playing.set(false);
        self.rebuild(0);
    }

    pub fn toggle_play(&self) {
        if self.playing.get_untracked() {
            self.playing.set(false);
        } else {
            if self.cursor.get_untracked() >= self.run.with_untracked(|r| r.len()) {
                self.go(0);
            }
            self.playing.set(true);
        }
    }

    /// Called by the playback timer.
    pub fn tick(&self) {
        if self.cursor.get_untracked() >= self.run.with_untracked(|r| r.len()) {
            self.playing.set(false);
        } else {
            self.step_forward();
        }
    }

    /// Opens another scenario with its default toggles, at `step`.
    pub fn open(&self, id: ScenarioId, step: usize) {
        let defaults = id.scenario().default_toggles();
        self.load(new_run(id, defaults, self.seed), step);
        self.opened.update(|n| *n += 1);
    }

    /// Flips a toggle: the run is computed again under the new configuration, at
    /// the same step, with the reader's commands (the run's log) that still apply;
    /// the others are named in a notice.
    pub fn set_toggle(&self, t: Toggle, on: bool) {
        let (r, toggles) = self
            .run
            .with_untracked(|r| (r.scenario.retry, r.config.toggles.with(t, on)));
        self.rerun(r, toggles);
    }

    /// The run computed again with the client under `retry` (the reader's numbers)
    /// and `toggles`, as [`Lab::set_toggle`] does.
    pub fn rerun(&self, retry: Retry, toggles: Toggles) {
        let (run, dropped) = self.run.with_untracked(|r| r.with_policy(retry, toggles));
        let ui = self.ui();
        for d in dropped {
            let text = crate::params::dropped_text(&d);
            self.notices
                .update(|n| n.push(fill(ui.dropped_command(), &[&text])));
        }
        self.show(run, self.cursor.get_untracked());
    }

    fn rebuild(&self, step: usize) {
        let run = self
            .run
            .with_untracked(|r| Run::new((*r.scenario).clone(), r.config));
        self.load(run, step);
    }

    /// Shows `run` (its scenario under its toggles) at `step`: a fresh run, or a
    /// branch the Explore panel opens.
    pub fn load(&self, run: Run, step: usize) {
        self.playing.set(false);
        self.mark.set(0);
        self.show(run, step);
    }

    /// `run` in place of the one shown, at `step` (or its end), without a glide.
    fn show(&self, run: Run, step: usize) {
        let len = run.len();
        self.run.set(run);
        self.anim.set(1.0);
        self.cursor.set(step.min(len));
        self.shown();
    }

    /// The step shown written anew from the run and the cursor: after every change to either
    /// (the step's worlds are not compared: a derived `PartialEq` over the whole world
    /// costs kilobytes of wasm).
    fn shown(&self) {
        let k = self.cursor.get_untracked();
        self.step.set(self.run.with_untracked(|r| Step::at(r, k)));
    }

    /// Applies a command at the current step; the future is replaced by its consequences.
    pub fn command(&self, cmd: Command) {
        let k = self.cursor.get_untracked();
        let mut result = Ok(());
        self.run.update(|r| result = r.apply_at(k, cmd));
        match result {
            Ok(()) => self.go(k + 1),
            Err(e) => {
                self.shown();
                let ui = ui(self.lang.get_untracked());
                let why = self
                    .run
                    .with_untracked(|r| crate::narrate::refusal(ui, &r.scenario, &e));
                let msg = fill(ui.command_failed(), &[&why]);
                self.notices.update(|n| n.push(msg));
            }
        }
    }
}

/// One frame of the glide into the current step.
fn animate(lab: Lab, gen: u32, start: f64, dur: f64) {
    request_animation_frame(move || {
        if lab.anim_gen.get_untracked() != gen {
            return;
        }
        let p = ((now_ms() - start) / dur).clamp(0.0, 1.0);
        lab.anim.set(p);
        if p < 1.0 {
            animate(lab, gen, start, dur);
        }
    });
}

fn now_ms() -> f64 {
    window().performance().map(|p| p.now()).unwrap_or(0.0)
}
