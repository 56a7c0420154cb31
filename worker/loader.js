// The explorer's Web Worker (a classic worker script, same origin, no inline code):
// loads wasm-bindgen's glue for the worker module (explore-worker.js, which defines
// `wasm_bindgen`), starts the module, and hands it each message from the page with the
// page's language (this script's query: loader.js?ru). Requests are Uint32Arrays
// (idem_sim::wire); the answers are the panel's markup (worker/src/view.rs).
importScripts('./explore-worker.js');
const ready = wasm_bindgen({ module_or_path: './explore-worker_bg.wasm' });
const lang = location.search.slice(1);
onmessage = (e) => ready.then(() => wasm_bindgen.handle(e.data, lang));
