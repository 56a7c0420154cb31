//! The explorer's Web Worker: a second wasm module, built from the core alone
//! (no Leptos), fetched only when the reader first opens the Explore panel.
//!
//! `worker/loader.js` (the worker's script) starts this module, fetches the
//! labels of the page's language (`text/<lang>.txt`: the module carries
//! neither language) and hands it every message with the page's language. A message is a `Uint32Array` of
//! words ([`idem_sim::wire::Request`]); the worker answers with the panel's
//! markup ([`view`]), one message per element it fills: the element's id, a
//! newline, the markup. The page only puts it in place. The page cancels a
//! search by terminating the worker.

#![deny(unsafe_code)]

pub mod key;
pub mod view;

/// The page's allocator, shared: size classes and free lists in place of
/// dlmalloc, 3.2 KB gzip lighter (the room the explorer's shared parts took,
/// `idem_sim::explore`). Only in the module: host builds keep the system's.
#[cfg(target_arch = "wasm32")]
#[allow(unsafe_code)]
#[path = "../../src/heap.rs"]
mod heap;

/// The page's markup writer, shared: the worker writes the panel as the page writes the lab.
#[path = "../../src/html.rs"]
pub mod html;

/// The page's label templates, shared: the worker fills and counts its labels as the page does.
#[path = "../../src/template.rs"]
pub mod template;

use idem_sim::answer::{answer, CHUNK};
use idem_sim::wire::Request;
use std::cell::Cell;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// The worker's global `postMessage`.
    #[wasm_bindgen(js_name = postMessage)]
    fn post_message(text: &str);
    /// The wall clock, for the states per second (the core never reads one).
    #[wasm_bindgen(js_namespace = Date)]
    fn now() -> f64;
}

thread_local! {
    /// The labels of the page's language ([`labels`]).
    static TEXT: Cell<Option<view::Text>> = const { Cell::new(None) };
}

/// Takes the labels of the page's language (`text/<lang>.txt`, fetched by the
/// loader before the first request is handled). Called once per worker. A text
/// without one line per label (a failed fetch) is refused, and the worker then
/// answers nothing, as when its module fails to load.
#[wasm_bindgen]
pub fn labels(text: String) {
    // `try_with`, not `set`/`get`: their `expect` would link the Debug of
    // an access error (a worker's thread local is never destroyed).
    let _ = TEXT.try_with(|t| t.set(view::Text::new(Box::leak(text.into_boxed_str()))));
}

/// Answers one request in `lang` (`ru` or `en`); a malformed one is ignored
/// (the page never sends one).
#[wasm_bindgen]
pub fn handle(words: Vec<u32>, lang: &str) {
    let Some(req) = Request::decode(&words) else {
        return;
    };
    let Some(text) = TEXT.try_with(Cell::get).ok().flatten() else {
        return;
    };
    let Some(mut view) = view::View::new(&req, lang, text) else {
        return;
    };
    let t0 = now();
    answer(&req, CHUNK, &mut |r| {
        for (id, html) in view.reply(r, now() - t0) {
            post_message(&format!("{id}\n{html}"));
        }
    });
}
