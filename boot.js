// The page's first script: a classic script in <head>, which the build's last hook
// (build/prerender.mjs) writes into each page, so it runs as the parser reaches it, before
// anything is drawn and with no round trip; the page's policy allows it by its hash
// (script-src 'self' 'wasm-unsafe-eval' 'sha256-…').
//
// It stands after Trunk's <meta name="wasm-app">, which it reads (see 3).
//
// 1. The page of the reader's language. The lesson is prerendered once per language
//    (build/prerender.mjs): en.html in English and ru.html in Russian, side by side,
//    so relative paths work from any sub-path; the bare address (index.html) is a tiny
//    page that sends the reader to theirs, by `lang=` or the browser's language
//    (build/prerender.mjs, `chooser`). Here the language is `lang=` of the link
//    (`ru`, `en`, any case, with or without a region, as Lang::parse in
//    src/lesson/mod.rs); without one, the page's own. If that is not this page's,
//    it replaces the location by the other page with the same query and hash and marks
//    <html data-redirect>: style/main.css draws nothing, scorm.js opens no LMS session,
//    and nothing below runs. `embed=1` marks <html class="embed"> at once, so an
//    embedded lab never flashes the prose the module removes. The module still parses
//    every parameter itself (src/params.rs) and is their one judge; this reads two early.
// 2. Inside an iframe (an LMS page, any origin), it tells the parent the page's height
//    whenever it changes, so the frame can fit the lesson instead of a height guessed by
//    hand. Two messages, the same height (CSS pixels, the whole document):
//      '{"subject":"lti.frameResize","height":N}'  (a JSON string: Canvas, Sakai,
//                                                   Moodle's LTI Message Handler plugin)
//      {type: 'idempotency-lab:height', height: N} (an object: the lesson's own)
//    It works even if the module cannot start.
// 3. It starts loading the module at once and runs it once the page is parsed and its first
//    frame drawn. Trunk
//    normally inlines a loader into index.html; Trunk.toml's `pattern_script` makes it
//    emit only <meta name="wasm-app" data-js data-wasm> with the hashed file names
//    instead, and this script reads them, imports the glue and instantiates the wasm
//    (compiled while the page is parsed and drawn). The lesson's
//    text is in the page already; the module adds the lab. A browser without
//    WebAssembly, or a module that fails to start, leaves the text as it is and shows,
//    where the lab would be, the line that it needs WebAssembly (<html class="no-lab">,
//    style/main.css); its language switch then opens the other language's page. A panic while starting is not that: the panic hook has drawn its
//    own box (src/crash.rs), and the error goes on.
(() => {
  // Once: where a host's policy refused this script inline, the page's fallback script
  // runs it again as a file (build/prerender.mjs, `fallback`); the mark tells it not to.
  if (window.idemBoot) return;
  window.idemBoot = true;
  const html = document.documentElement;
  const pages = { en: 'en.html', ru: 'ru.html' };
  const query = new URLSearchParams(location.search);
  // The page a language tag names (`ru`, `EN-us`, `ru_RU`: its primary subtag), or null.
  // The chooser runs this same text (build/prerender.mjs, `chooser`): its one home.
  const tag = (s) => {
    const primary = String(s ?? '').trim().split(/[-_]/)[0].toLowerCase();
    return Object.hasOwn(pages, primary) ? primary : null;
  };
  const own = html.lang;
  const want = tag(query.get('lang')) ?? own;
  if (query.get('embed') === '1') html.classList.add('embed');
  if (want !== own) {
    html.setAttribute('data-redirect', want);
    location.replace(pages[want] + location.search + location.hash);
    return;
  }

  if (window.parent !== window) {
    // While the page loads, the height only grows (the lab mounts in stages, and the
    // host page would jump if its frame shrank and grew again); from the reader's
    // first key or touch on, every change is posted.
    let sent = -1;
    let loading = true;
    const post = () => {
      const height = Math.ceil(html.getBoundingClientRect().height);
      if (height === sent || (loading && height < sent)) return;
      sent = height;
      window.parent.postMessage(JSON.stringify({ subject: 'lti.frameResize', height }), '*');
      window.parent.postMessage({ type: 'idempotency-lab:height', height }, '*');
    };
    new ResizeObserver(post).observe(html);
    const settle = () => {
      loading = false;
      post();
    };
    for (const ev of ['pointerdown', 'keydown']) addEventListener(ev, settle, { once: true, capture: true });
  }

  const noLab = (why) => {
    html.classList.add('no-lab');
    // The language switch is the module's; without it, a switch opens the other page.
    addEventListener('click', (e) => {
      const lang = e.target.closest?.('[data-act=lang]')?.dataset.lang;
      if (pages[lang]) location.assign(`${pages[lang]}?lang=${lang}`);
    });
    console.warn(`Idempotency Lab: the lab did not start: ${why}`);
  };
  // The glue and the module start loading and compiling now, while the page is parsed
  // and drawn; the module is instantiated (and mounts the lab) once the page is parsed.
  // A server that sends the module with another type than application/wasm cannot
  // stream it: the glue then fetches it again its own way.
  const app = document.querySelector('meta[name="wasm-app"]');
  // (Trunk.toml's pattern_script writes it; the message is short: it is in every page.)
  if (!app) throw Error('boot.js: no <meta name="wasm-app">');
  const wasmUrl = new URL(app.dataset.wasm, document.baseURI);
  const wasm = typeof WebAssembly === 'object';
  const glue = wasm && import(new URL(app.dataset.js, document.baseURI).href);
  if (glue) glue.catch(() => {}); // handled in start(); not an unhandled rejection meanwhile
  const compiled = wasm && WebAssembly.compileStreaming(fetch(wasmUrl)).catch(() => wasmUrl);
  const start = async () => {
    if (!wasm) return noLab('this browser has no WebAssembly');
    try {
      const { default: init } = await glue;
      const instance = await init({ module_or_path: await compiled });
      dispatchEvent(new CustomEvent('TrunkApplicationStarted', { detail: { wasm: instance } }));
    } catch (e) {
      if (document.querySelector('[data-testid="crash"]')) throw e;
      noLab(e);
    }
  };
  // The module is compiled by the time the page is parsed (boot.js is inline and starts
  // it at once), so starting it then would run the lab's mount, a long task, before the
  // first frame, and the text would wait for it. It starts after the first frame is
  // drawn (a task after the frame's callbacks), or after 100 ms where no frame comes (a
  // hidden page); in the next task where the text was painted already (the parser
  // yielded to a paint before the page was parsed), without waiting for another frame.
  // Measured and left (issue 28, item 3; `make bench`, 15 loads): starting in the task
  // after any frame drawn before DOMContentLoaded (the first-contentful-paint entry comes
  // only once the frame is presented) made the lab responsive 7 ms sooner but painted
  // the text 12-16 ms later: on two cores the lab's start competes with the frame's raster.
  const afterPaint = () => {
    let started = false;
    const go = () => started || ((started = true), start());
    if (performance.getEntriesByName('first-contentful-paint').length) return setTimeout(go);
    requestAnimationFrame(() => setTimeout(go));
    setTimeout(go, 100);
  };
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', afterPaint);
  else start();
})();
