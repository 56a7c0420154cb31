// The counter's loader, as the lesson's (boot.js at the root) without its language and
// fallback duties: no inline script, so the counter runs under the bench server's CSP.
const app = document.querySelector('meta[name="wasm-app"]');
const { default: init } = await import(new URL(app.dataset.js, document.baseURI).href);
await init({ module_or_path: new URL(app.dataset.wasm, document.baseURI) });
