//! A stand-in for wasm-streams 0.5: the two conversions Leptos's server functions
//! name (server_fn's `browser` feature, which `leptos` always enables), and none of
//! the crate's `#[wasm_bindgen]` exports. The real crate exports three classes
//! (`IntoUnderlyingSource`, `IntoUnderlyingByteSource`, `IntoUnderlyingSink`) that
//! the linker must keep although nothing calls them, with the futures they run:
//! 17 KB of the page's wasm and 7 KB of its glue (7.4 KB gzip per page load). The
//! lab has no server function, so no code path reaches a stream; converting one
//! panics, as any other unreachable code.

use futures_util::Stream;
use wasm_bindgen::JsValue;

/// A `ReadableStream` of the page, as wasm-streams names it.
pub struct ReadableStream(web_sys::ReadableStream);

impl ReadableStream {
    /// Wraps a browser stream.
    pub fn from_raw(raw: web_sys::ReadableStream) -> Self {
        Self(raw)
    }

    /// The browser stream.
    pub fn into_raw(self) -> web_sys::ReadableStream {
        self.0
    }

    /// A browser stream reading a Rust stream: only a server function's streaming
    /// request body makes one, and the lab has none.
    pub fn from_stream<St>(_stream: St) -> Self
    where
        St: Stream<Item = Result<JsValue, JsValue>> + 'static,
    {
        unreachable!("wasm-streams stand-in: no server functions")
    }

    /// A Rust stream reading the browser stream: only a server function's streaming
    /// response makes one, and the lab has none.
    pub fn into_stream(self) -> futures_util::stream::Empty<Result<JsValue, JsValue>> {
        unreachable!("wasm-streams stand-in: no server functions")
    }
}
