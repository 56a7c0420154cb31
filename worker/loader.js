// The explorer's Web Worker (a classic worker script, same origin, no inline code):
// loads wasm-bindgen's glue for the worker module (explore-worker.js, which defines
// `wasm_bindgen`), starts the module and, at the same time, fetches the labels of the
// page's language (this script's query: loader.js?ru) from text/<lang>.txt, then hands
// the module each message from the page with that language. Requests are Uint32Arrays
// (idem_sim::wire); the answers are the panel's markup (worker/src/view.rs).
importScripts('./explore-worker.js');
const lang = location.search.slice(1) === 'ru' ? 'ru' : 'en';
const ready = Promise.all([
  wasm_bindgen({ module_or_path: './explore-worker_bg.wasm' }),
  fetch(`./text/${lang}.txt`).then((r) => (r.ok ? r.text() : '')),
]).then(([, text]) => wasm_bindgen.labels(text));
onmessage = (e) => ready.then(() => wasm_bindgen.handle(e.data, lang));
