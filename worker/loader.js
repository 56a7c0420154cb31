// The explorer's Web Worker (a classic worker script, same origin, no inline code):
// loads wasm-bindgen's glue for the worker module (explore-worker.js, which defines
// `wasm_bindgen`), starts the module, and hands it each message from the page.
// Messages are Uint32Arrays (idem_sim::wire); nothing here reads them.
importScripts('./explore-worker.js');
const ready = wasm_bindgen({ module_or_path: './explore-worker_bg.wasm' });
onmessage = (e) => ready.then(() => wasm_bindgen.handle(e.data));
