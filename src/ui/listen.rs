//! The page's **one** event listener. Controls are markup with a `data-act`
//! ([`Act`]); this module parses the event's type and the action once, and hands
//! each to the module that owns it: the topology's messages, the sequence
//! diagram's arrows, the controls, the Explore panel, the lesson, the keyboard.
//! One closure for all of it keeps the module small: a typed Leptos event handler
//! costs ~1 KB of wasm each. It imports the UI's modules; none imports it back but
//! `app`, which installs it.

use super::act::{Act, Action};
use super::controls::{self, Near};
use super::lesson::{self, Learn};
use super::state::Lab;
use super::{closest, explore, panes, topology};
use leptos::prelude::*;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;

/// Below this width the lab is laid out for a phone (the topology in portrait).
const NARROW_PX: f64 = 700.0;

/// The event types the listener takes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Ev {
    Click,
    Change,
    Input,
    Submit,
    Keydown,
    Resize,
    /// Another tab saved the progress.
    Storage,
    /// The explorer's worker posted a result.
    Message,
    /// The end-to-end test of the failure box (see `crate::crash`).
    Panic,
}

impl Ev {
    /// The types the window listens to (the worker's `message` comes through
    /// [`explore::LISTENER`]).
    const WINDOW: [Ev; 8] = [
        Ev::Click,
        Ev::Change,
        Ev::Input,
        Ev::Submit,
        Ev::Keydown,
        Ev::Resize,
        Ev::Storage,
        Ev::Panic,
    ];

    fn name(self) -> &'static str {
        match self {
            Ev::Click => "click",
            Ev::Change => "change",
            Ev::Input => "input",
            Ev::Submit => "submit",
            Ev::Keydown => "keydown",
            Ev::Resize => "resize",
            Ev::Storage => "storage",
            Ev::Message => "message",
            Ev::Panic => crate::crash::PANIC_EVENT,
        }
    }

    fn of(e: &web_sys::Event) -> Option<Ev> {
        let t = e.type_();
        Ev::WINDOW
            .into_iter()
            .chain([Ev::Message])
            .find(|k| k.name() == t)
    }
}

/// Installs the listener on the window, for the page's life.
pub fn install(lab: Lab, learn: Learn) {
    let handler =
        Closure::<dyn Fn(web_sys::Event)>::new(move |e: web_sys::Event| on_event(lab, learn, &e));
    for ev in Ev::WINDOW {
        let _ =
            window().add_event_listener_with_callback(ev.name(), handler.as_ref().unchecked_ref());
    }
    // The Explore panel's worker speaks to the same listener.
    explore::LISTENER.with(|l| *l.borrow_mut() = Some(handler.as_ref().clone().unchecked_into()));
    handler.forget();
}

fn on_event(lab: Lab, learn: Learn, e: &web_sys::Event) {
    let Some(ev) = Ev::of(e) else { return };
    // The lab's first stage may have computed the run only as far as its step, and not
    // read the stored progress.
    lab.finish();
    learn.load(lab);
    dispatch(lab, learn, ev, e);
    // Whatever the reader did to the run or its step, the lesson follows (the worker's
    // messages and a resize move nothing).
    if !matches!(ev, Ev::Message | Ev::Resize) {
        learn.moved(lab);
    }
}

/// Does what event `e` (of kind `ev`) asks of the lab.
fn dispatch(lab: Lab, learn: Learn, ev: Ev, e: &web_sys::Event) {
    match ev {
        Ev::Message => return explore::message(lab, e),
        Ev::Resize => return lab.tall.set(is_narrow()),
        Ev::Storage => return lesson::storage(learn, e),
        Ev::Panic => panic!("{}", crate::crash::PANIC_EVENT),
        // No form of the page goes to a server.
        Ev::Submit => e.prevent_default(),
        _ => {}
    }
    let target = closest(e, "[data-act]");
    if let Some(el) = target {
        match Action::parse(&|name| el.get_attribute(name)) {
            Ok(action) => {
                if let Some(place) = near(action.act()) {
                    controls::near(place);
                    controls::near_control(&el);
                }
                if on_action(lab, learn, ev, action, &el, e) {
                    return;
                }
            }
            // A bug of the page's markup: said, and the page goes on.
            Err(bad) => {
                if matches!(ev, Ev::Click | Ev::Change | Ev::Input) {
                    lab.notices.update(|n| n.push(bad.notice()));
                }
                return;
            }
        }
    }
    if let Some(k) = e.dyn_ref::<web_sys::KeyboardEvent>() {
        if !panes::arrow_key(e, &k.key()) {
            on_key(lab, k);
        }
    }
}

/// Where the notices go after a control of `act` is used (`None`: where they were).
fn near(act: Act) -> Option<Near> {
    use Act::*;
    Some(match act {
        Copy | Scenario => Near::Head,
        Ack | Parallel | Crash | H1 | H25 => Near::Faults,
        Toggle => Near::Switches,
        Retry | ParallelN => Near::Policy,
        Lang => Near::Top,
        Clear | Predict | Continue | Check => Near::Text,
        Dismiss | Jump | Open | Calc | XShow => return None,
        _ => Near::Play,
    })
}

/// Does what control `el` asks (`action`) on `ev`; `false` if nothing.
fn on_action(
    lab: Lab,
    learn: Learn,
    ev: Ev,
    action: Action,
    el: &web_sys::Element,
    e: &web_sys::Event,
) -> bool {
    use Act::*;
    // Enter or Space on a message or an arrow (focusable SVG, not buttons) is a click.
    let key = e.dyn_ref::<web_sys::KeyboardEvent>().map(|k| k.key());
    let pressed = ev == Ev::Click || matches!(key.as_deref(), Some("Enter" | " "));
    match (ev, action) {
        (_, Action::Lose(id)) if pressed => {
            if !topology::lose(lab, id) {
                return false;
            }
            if key.is_some() {
                e.prevent_default();
            }
        }
        (_, Action::Jump(k)) if pressed => {
            if key.is_some() {
                e.prevent_default();
            }
            panes::jump(lab, k, key.is_some());
        }
        (Ev::Click, Action::Open { scenario, at_start }) => {
            if plain_click(e) {
                e.prevent_default();
                lesson::open_link(lab, learn, scenario, at_start);
            }
        }
        (Ev::Click, Action::Crash(n)) => controls::crash(lab, n),
        (Ev::Click, Action::Lang(l)) => lesson::switch(lab, l, move || learn.opened(lab, false)),
        (Ev::Change, Action::Toggle(t)) => controls::toggle(lab, t, checked(el)),
        (Ev::Change, Action::Retry(i)) => controls::retry(lab, i, el),
        (Ev::Click, Action::XShow { href, mark, note }) => {
            if plain_click(e) {
                e.prevent_default();
                explore::show(lab, &href, mark, note);
            }
        }
        (ev, Action::Do(act)) => match (ev, act) {
            (Ev::Click, Back) => lab.step_back(),
            (Ev::Click, Play) => lab.toggle_play(),
            (Ev::Click, Step) => {
                lab.playing.set(false);
                lab.step_forward();
            }
            (Ev::Click, End) => lab.to_end(),
            (Ev::Click, Restart) => lab.restart(),
            (Ev::Click, Ack) => lab.command(idem_sim::Command::LoseNextResponse),
            (Ev::Click, Parallel) => lab.command(idem_sim::Command::ParallelRetries(
                lab.parallel_n.get_untracked(),
            )),
            (Ev::Click, H1) => lab.command(idem_sim::Command::AdvanceClock(idem_sim::Millis::HOUR)),
            (Ev::Click, H25) => {
                lab.command(idem_sim::Command::AdvanceClock(idem_sim::timing::PAST_TTL))
            }
            (Ev::Click, Copy) => controls::copy_link(lab),
            (Ev::Click, Dismiss) => {
                controls::share_link(true);
                lab.notices.set(Vec::new());
            }
            (Ev::Click, Try) => controls::try_lab(lab),
            (Ev::Change, Scenario) => controls::pick_scenario(lab, learn, el),
            (Ev::Change, Speed) => controls::speed(lab, el),
            (Ev::Input, ParallelN) => controls::parallel_typed(lab, el),
            (Ev::Change, ParallelN) => controls::parallel_left(lab, el),
            (Ev::Input, Scrub) => controls::scrub(lab, el),
            (Ev::Change, Future) => lab.future.set(checked(el)),
            (Ev::Input, Calc) => lesson::recalc(lab.lang.get_untracked(), el),
            (Ev::Click, Explore) => explore::start(lab),
            (Ev::Click, XCancel) => explore::cancel(lab),
            (Ev::Change, Cmp) => explore::compare(lab),
            (Ev::Submit, Check) => lesson::check(lab, learn, el),
            (Ev::Click, Continue) => lesson::go_on(lab, learn),
            (Ev::Click, Clear) => lesson::clear(lab, learn),
            (Ev::Change, Predict) => lesson::set_predict(learn, checked(el)),
            _ => return false,
        },
        _ => return false,
    }
    true
}

/// A checkbox's state.
fn checked(el: &web_sys::Element) -> bool {
    el.dyn_ref::<web_sys::HtmlInputElement>()
        .is_some_and(|i| i.checked())
}

/// A click with no modifier: a modified one (new tab or window) follows the link's href.
fn plain_click(e: &web_sys::Event) -> bool {
    e.dyn_ref::<web_sys::MouseEvent>()
        .is_some_and(|m| !(m.ctrl_key() || m.meta_key() || m.shift_key() || m.button() != 0))
}

/// The keyboard (Space, ←, →): only from inside the lab, or from the page while the lab
/// is on screen, so Space still scrolls the prose; never from a link or a form control.
fn on_key(lab: Lab, e: &web_sys::KeyboardEvent) {
    let target = e
        .target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok());
    let tag = target
        .as_ref()
        .map(|el| el.tag_name().to_ascii_lowercase())
        .unwrap_or_default();
    // A focused scrollable region (a listing, a wide table, the sequence diagram) scrolls
    // with the keys, as it would anywhere else.
    let region = target
        .as_ref()
        .is_some_and(|t| t.closest("[role=region]").ok().flatten().is_some());
    let native = region
        || matches!(tag.as_str(), "input" | "select" | "textarea" | "a")
        || (tag == "button" && e.key() == " ")
        || e.alt_key()
        || e.ctrl_key()
        || e.meta_key();
    let in_lab = target.is_some_and(|t| t.closest("#lab").ok().flatten().is_some());
    if native || !(in_lab || lab_on_screen()) {
        return;
    }
    match e.key().as_str() {
        " " => {
            e.prevent_default();
            lab.toggle_play();
        }
        "ArrowRight" => {
            e.prevent_default();
            lab.playing.set(false);
            lab.step_forward();
        }
        "ArrowLeft" => {
            e.prevent_default();
            lab.step_back();
        }
        _ => {}
    }
}

/// Whether part of the lab is inside the viewport.
fn lab_on_screen() -> bool {
    let height = window()
        .inner_height()
        .ok()
        .and_then(|h| h.as_f64())
        .unwrap_or(0.0);
    document().get_element_by_id("lab").is_some_and(|el| {
        let r = el.get_bounding_client_rect();
        r.top() < height && r.bottom() > 0.0
    })
}

/// Whether the window is as narrow as a phone's.
pub fn is_narrow() -> bool {
    window()
        .inner_width()
        .ok()
        .and_then(|w| w.as_f64())
        .is_some_and(|w| w < NARROW_PX)
}
