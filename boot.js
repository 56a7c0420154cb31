// Starts the WebAssembly app without any inline script, so the page keeps a strict
// Content-Security-Policy (script-src 'self' 'wasm-unsafe-eval').
//
// Trunk normally inlines this loader into index.html. Trunk.toml's `pattern_script`
// makes it emit only <meta name="wasm-app" data-js data-wasm> with the hashed file
// names instead; this module (hashed and given an integrity attribute by Trunk) reads
// them. Module scripts run after the document is parsed, so the meta element exists.

// Inside an iframe (an LMS page, any origin), tell the parent the page's height whenever
// it changes, so the frame can fit the lesson instead of a height guessed by hand. Two
// messages, the same height (CSS pixels, the whole document):
//   '{"subject":"lti.frameResize","height":N}'  (a JSON string: Canvas, Sakai, Moodle's
//                                               LTI Message Handler plugin)
//   {type: 'idempotency-lab:height', height: N} (an object: the lesson's own, for any host)
// It runs before the module starts, so it works even if the module cannot.
if (window.parent !== window) {
  let sent = -1;
  const post = () => {
    const height = Math.ceil(document.documentElement.getBoundingClientRect().height);
    if (height === sent) return;
    sent = height;
    window.parent.postMessage(JSON.stringify({ subject: 'lti.frameResize', height }), '*');
    window.parent.postMessage({ type: 'idempotency-lab:height', height }, '*');
  };
  new ResizeObserver(post).observe(document.documentElement);
}

const app = document.querySelector('meta[name="wasm-app"]');
if (!app) {
  throw new Error('boot.js: <meta name="wasm-app"> is missing; check Trunk.toml pattern_script');
}
const { default: init } = await import(new URL(app.dataset.js, document.baseURI).href);
const wasm = await init({ module_or_path: new URL(app.dataset.wasm, document.baseURI) });
dispatchEvent(new CustomEvent('TrunkApplicationStarted', { detail: { wasm } }));
