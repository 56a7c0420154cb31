// Starts the WebAssembly app without any inline script, so the page keeps a strict
// Content-Security-Policy (script-src 'self' 'wasm-unsafe-eval').
//
// Trunk normally inlines this loader into index.html. Trunk.toml's `pattern_script`
// makes it emit only <meta name="wasm-app" data-js data-wasm> with the hashed file
// names instead; this module (hashed and given an integrity attribute by Trunk) reads
// them. Module scripts run after the document is parsed, so the meta element exists.
const app = document.querySelector('meta[name="wasm-app"]');
if (!app) {
  throw new Error('boot.js: <meta name="wasm-app"> is missing; check Trunk.toml pattern_script');
}
const { default: init } = await import(new URL(app.dataset.js, document.baseURI).href);
const wasm = await init({ module_or_path: new URL(app.dataset.wasm, document.baseURI) });
dispatchEvent(new CustomEvent('TrunkApplicationStarted', { detail: { wasm } }));
