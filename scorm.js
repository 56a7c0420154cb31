// The SCORM 1.2 adapter: when the page runs inside an LMS that offers the SCORM 1.2
// run-time API, report the reader's progress to it. With no LMS it does nothing at all.
//
// Kept out of the WebAssembly module (the page has a size budget). The build writes it
// into the page's inline script after boot.js, in a scope of its own (build/prerender.mjs),
// so it runs as the parser reaches <head>, before boot.js starts the module. It meets the
// module at two points only (src/lms.rs), so the progress format is read and written by
// the module alone:
//   - it puts the progress the LMS kept for this learner (cmi.suspend_data, maybe empty)
//     on <html data-lms-progress>; the module starts from it instead of localStorage;
//   - the module dispatches `idempotency-lab:progress` on window whenever the progress
//     changes (and once at start), detail {line, right, questions, complete}.
//
// What it reports:
//   cmi.core.lesson_status  'incomplete' from the first launch, 'completed' once every
//                           scenario was watched and every question answered; never
//                           taken back (clearing the checklist does not undo it)
//   cmi.core.score.raw      questions answered right (the first answer to each), with
//   cmi.core.score.min/max  0 and the number of questions; never lowered
//   cmi.suspend_data        the progress line
//   cmi.core.exit           'suspend', so the LMS gives the progress back next time
//   cmi.core.session_time   on leaving
// then LMSCommit after each change, and LMSFinish on pagehide.

const EVENT = 'idempotency-lab:progress';
const RESTORED = 'data-lms-progress';

/** ADL's search: this window and its parents up to the top, then the opener's. */
const findApi = () => {
  for (let start of [window, window.opener]) {
    for (let w = start, n = 0; w && n < 100; w = w.parent, n++) {
      try {
        if (w.API && typeof w.API.LMSInitialize === 'function') return w.API;
      } catch {
        // Another origin's window: not an LMS that frames us; look further up.
      }
      if (w.parent === w) break;
    }
  }
  return null;
};

// Not on a page that boot.js is replacing by the other language's: the session opens there.
const api = document.documentElement.hasAttribute('data-redirect') ? null : findApi();
if (api && String(api.LMSInitialize('')) === 'true') {
  const get = (k) => String(api.LMSGetValue(k) ?? '');
  const set = (k, v) => api.LMSSetValue(k, String(v));
  const started = Date.now();
  let done = /^(completed|passed)$/.test(get('cmi.core.lesson_status'));
  let best = Number(get('cmi.core.score.raw')) || 0;
  document.documentElement.setAttribute(RESTORED, get('cmi.suspend_data'));
  if (!done) set('cmi.core.lesson_status', 'incomplete');
  set('cmi.core.exit', 'suspend');
  api.LMSCommit('');

  addEventListener(EVENT, ({ detail }) => {
    set('cmi.suspend_data', detail.line);
    set('cmi.core.score.min', 0);
    set('cmi.core.score.max', detail.questions);
    best = Math.max(best, detail.right);
    set('cmi.core.score.raw', best);
    if (detail.complete && !done) {
      done = true;
      set('cmi.core.lesson_status', 'completed');
    }
    api.LMSCommit('');
  });

  addEventListener(
    'pagehide',
    () => {
      // CMITimespan: HHHH:MM:SS
      const s = Math.round((Date.now() - started) / 1000);
      const two = (n) => String(n).padStart(2, '0');
      set('cmi.core.session_time', `${two(Math.min(9999, Math.floor(s / 3600)))}:${two(Math.floor(s / 60) % 60)}:${two(s % 60)}`);
      api.LMSCommit('');
      api.LMSFinish('');
    },
    { once: true },
  );
}
