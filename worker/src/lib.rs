//! The explorer's Web Worker: a second wasm module, built from the core alone
//! (no Leptos), fetched only when the reader first opens the Explore panel.
//!
//! `worker/loader.js` (the worker's script) starts this module and hands it
//! every message. A message is a `Uint32Array` of words
//! ([`idem_sim::wire::Request`]); the answers go back the same way
//! ([`idem_sim::wire::Reply`]), progress between installments of the search.
//! The page cancels a search by terminating the worker.

use idem_sim::answer::{answer, CHUNK};
use idem_sim::wire::Request;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// The worker's global `postMessage`: the words arrive as a `Uint32Array`.
    #[wasm_bindgen(js_name = postMessage)]
    fn post_message(words: Vec<u32>);
}

/// Answers one request; a malformed one is ignored (the page never sends one).
#[wasm_bindgen]
pub fn handle(words: Vec<u32>) {
    if let Some(req) = Request::decode(&words) {
        answer(&req, CHUNK, &mut |r| post_message(r.encode()));
    }
}
