//! The lab's parts. The lab's markup is written once per scenario and language
//! (`app::grid`); each part keeps its place in step with the [`state::Lab`] by effects.

pub mod act;
pub mod controls;
pub mod explore;
pub mod lesson;
pub mod listen;
pub mod panes;
pub mod state;
pub mod topology;
pub mod var;

use crate::html::Markup;
use leptos::prelude::Effect;

/// A value the page provides to its components (the [`state::Lab`], the
/// [`lesson::Learn`]: `app` provides both, once, before it builds a view). Not
/// Leptos's contexts: the page has one lab for its whole life, and Leptos keeps
/// contexts in a hash map per owner (its insert, lookup and rehash, ~1 KB gzip of
/// every page load; issue 28, item 5). Nor its `expect_context`: that message, if
/// one were missing, Debug-formats the type's name, which brought Rust's Debug
/// escaping of strings and its Unicode tables into the module (~2 KB gzip).
pub trait Provided: Copy + 'static {
    /// Where the page keeps it.
    fn slot() -> &'static std::thread::LocalKey<std::cell::Cell<Option<Self>>>;
}

thread_local! {
    static LAB: std::cell::Cell<Option<state::Lab>> = const { std::cell::Cell::new(None) };
    static LEARN: std::cell::Cell<Option<lesson::Learn>> = const { std::cell::Cell::new(None) };
}

impl Provided for state::Lab {
    fn slot() -> &'static std::thread::LocalKey<std::cell::Cell<Option<Self>>> {
        &LAB
    }
}

impl Provided for lesson::Learn {
    fn slot() -> &'static std::thread::LocalKey<std::cell::Cell<Option<Self>>> {
        &LEARN
    }
}

/// Provides `value` to every component built after it.
pub fn provide<T: Provided>(value: T) {
    T::slot().with(|s| s.set(Some(value)));
}

/// The value `app` provided.
pub fn context<T: Provided>() -> T {
    T::slot()
        .with(|s| s.get())
        .expect("the page provides the lab's context")
}

/// An effect: `f` runs (after the current task) and again whenever a signal it read
/// changes. Every effect of the page is this one (`f` boxed), so the module holds one
/// copy of Leptos's effect machinery instead of one per closure (issue 28, item 5).
pub fn effect(f: impl Fn() + 'static) {
    let f: Box<dyn Fn()> = Box::new(f);
    Effect::new(move |_| f());
}

/// An effect of the lab's second stage ([`state::Lab::whole`]): `f` runs once the whole
/// lab is drawn, and again whenever a signal it read changes; before, only the check runs.
/// `f` is called through a pointer, so it stays a function of its own (wasm-opt inlines a
/// function that has one caller): the browser compiles a module's functions on their
/// first call, so `f` is compiled at the second stage, not in the task that mounts the
/// lab's core, where the compiling was about half the time (issue 28, item 3).
pub fn staged(lab: state::Lab, f: impl Fn() + 'static) {
    stage(lab, Box::new(f));
}

fn stage(lab: state::Lab, f: Box<dyn Fn()>) {
    effect(move || {
        if lab.whole.get() {
            f();
        }
    });
}

/// The first element of the page that matches `sel` (for what no typed handle names).
pub fn find(sel: &str) -> Option<web_sys::Element> {
    leptos::prelude::document()
        .query_selector(sel)
        .ok()
        .flatten()
}

/// The element of the event's target matching `selector`, itself or an ancestor: how
/// the page's one delegated listener finds what an event is for.
pub fn closest(ev: &web_sys::Event, selector: &str) -> Option<web_sys::Element> {
    use wasm_bindgen::JsCast;
    ev.target()?
        .dyn_into::<web_sys::Element>()
        .ok()?
        .closest(selector)
        .ok()?
}

// The page's only ways into `innerHTML`: each takes a [`Markup`] (escaped by
// construction). `tests/markup.rs` fails if any other code writes markup.

/// Writes `m` as `el`'s content.
pub fn set_inner(el: &web_sys::Element, m: &Markup) {
    el.set_inner_html(m.as_str());
}

/// Writes `m` in place of `el`.
pub fn set_outer(el: &web_sys::Element, m: &Markup) {
    el.set_outer_html(m.as_str());
}

#[cfg(test)]
mod tests {
    /// Every `Effect::new` body of the page's sources, with its file.
    fn effects() -> Vec<(String, String)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut out = Vec::new();
        for (p, src) in crate::source_files(&root) {
            // Leptos's `Effect::new` itself, and the page's effects made by `ui::effect`
            // and `ui::staged` (each opener with the length of what precedes the body).
            let openers = [
                (concat!("Effect", "::new("), 12),
                (concat!("effect", "(move"), 7),
                (concat!("staged", "(lab, move"), 12),
            ];
            let starts = openers
                .iter()
                .flat_map(|(o, skip)| src.match_indices(o).map(move |(i, _)| i + skip));
            for start in starts.collect::<Vec<_>>() {
                let body = &src[start..];
                let mut depth = 1;
                let end = body
                    .char_indices()
                    .find(|(_, c)| {
                        depth += match c {
                            '(' => 1,
                            ')' => -1,
                            _ => 0,
                        };
                        depth == 0
                    })
                    .map_or(body.len(), |(j, _)| j);
                out.push((p.display().to_string(), body[..end].to_string()));
            }
        }
        out
    }

    /// Data flows one way: an effect only synchronizes the outside world (the DOM,
    /// the URL, storage, a worker, a timer) with the signals it reads, and writes no
    /// signal, so no effect writes what another effect reads back. State that follows
    /// other state is a memo or a closure; what follows a reader's action is done by
    /// the handler of that action (as `Learn::moved`). (The lesson's question was
    /// asked by a chain of three effects that fed each other.)
    #[test]
    fn no_effect_writes_a_signal() {
        let all = effects();
        assert!(all.len() >= 8, "only {} effects found", all.len());
        for (file, body) in &all {
            for write in [
                ".set(",
                ".update(",
                ".notify()",
                ".write()",
                ".maybe_update(",
            ] {
                assert!(
                    !body.contains(write),
                    "an effect in {file} writes a signal ({write}):\n{body}"
                );
            }
        }
    }
}
