// Robustness (issue 13, item 5), against the release build under the strict CSP:
//
// - a seeded monkey: ≥ 500 random actions of a reader (clicks on every control, keys,
//   the scrubber, the picker, answers, language switches, links of the prose, window
//   widths) across scenarios, both languages and widths; no console error, page error
//   or failed request, no horizontal scroll, and the lab still responds at the end;
// - a URL fuzz: ≥ 200 generated links (garbage, huge, repeated, percent-broken and
//   markup-carrying values of every parameter); no error, no injected markup, no
//   horizontal scroll at 360 px, and every notice short.
//
// Both are seeded (ROBUST_SEED, default 13): a failure prints the seed and the action or
// URL, so it can be replayed.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { SCENARIOS } from './catalogue.mjs';
import { releaseBuildHarness } from './lab-page.mjs';
import { leftBehind } from './lesson-page.mjs';

const SEED = Number(process.env.ROBUST_SEED ?? 13);

/** mulberry32: a small seeded PRNG returning floats in [0, 1). */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TOGGLES = ['unique-constraint', 'fingerprint', 'same-transaction', 'key-to-processor', 'atomic-claim', 'zzz'];

/** Waits until no request of the page is in flight (and none started) for two frames. */
async function settle(page, inflight) {
  for (let quiet = 0; quiet < 2; ) {
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))));
    quiet = inflight.size === 0 ? quiet + 1 : 0;
  }
}

/**
 * Tracks the requests of a page that have not finished yet. The explorer's worker's
 * (`worker/`) are left out: the page terminates a worker whenever a search is cancelled
 * or replaced, and a terminated worker's request may never report its end.
 */
function trackRequests(page) {
  const inflight = new Set();
  page.on('request', (r) => {
    if (!new URL(r.url()).pathname.includes('/worker/')) inflight.add(r);
  });
  page.on('requestfinished', (r) => inflight.delete(r));
  page.on('requestfailed', (r) => inflight.delete(r));
  return inflight;
}

/**
 * One random action, chosen and done inside the page (fast: no actionability waits).
 * `r` is a list of random numbers. Returns what was done, for the log.
 */
function actInPage(r) {
  const pick = (list, x) => list[Math.floor(x * list.length)];
  const visible = (el) => el.getClientRects().length > 0 && !el.closest('[hidden]');
  const all = (sel) => [...document.querySelectorAll(sel)].filter((el) => visible(el) && !el.disabled);
  const kind = Math.floor(r[0] * 7);
  if (kind <= 2) {
    // The lab's and the lesson's buttons and switches (not the copy-link button: it
    // needs the clipboard permission headless Chromium does not grant).
    const els = all('#lab button, #lab input[type=checkbox], [data-testid=predict] input, .lang button, [data-act=clear], [data-act=predict], [data-testid=notice] button')
      .filter((el) => el.dataset.act !== 'copy');
    const el = pick(els, r[1]);
    if (!el) return 'no button';
    el.click();
    return `click ${el.dataset.act ?? el.dataset.testid ?? el.tagName}`;
  }
  if (kind === 3) {
    const sel = pick(all('#lab select'), r[1]);
    if (!sel) return 'no select';
    sel.selectedIndex = Math.floor(r[2] * sel.options.length);
    sel.dispatchEvent(new Event('change', { bubbles: true }));
    return `select ${sel.dataset.act} ${sel.value}`;
  }
  if (kind === 4) {
    const input = pick(all('#lab input[type=range], #lab input[type=number], form[data-act=calc] input'), r[1]);
    if (!input) return 'no input';
    const values = ['', '0', '-5', '3', '7', '11', '1e9', 'abc', String(Math.floor(r[2] * 60))];
    input.value = pick(values, r[2]);
    input.dispatchEvent(new Event('input', { bubbles: true }));
    input.dispatchEvent(new Event('change', { bubbles: true }));
    return `input ${input.name || input.dataset.act} = ${input.value}`;
  }
  if (kind === 5) {
    // A message in flight (loses it), an arrow of the sequence diagram, a scenario link.
    const el = pick(all('#lab [data-msg], #lab [data-step], a[data-scenario]'), r[1]);
    if (!el) return 'nothing to click';
    el.dispatchEvent(new MouseEvent('click', { bubbles: true, cancelable: true, button: 0 }));
    return `click ${el.tagName} ${el.dataset.scenario ?? el.dataset.msg ?? el.dataset.step ?? ''}`;
  }
  return 'key';
}

describe('robustness (release build, strict CSP)', { timeout: 300_000 }, () => {
  const env = releaseBuildHarness();

  test('a seeded monkey: 520 random actions across scenarios, languages and widths', async (t) => {
    const rand = prng(SEED);
    const sessions = [
      { lang: 'en', width: 360, height: 740, motion: 'reduce' },
      { lang: 'ru', width: 1440, height: 900, motion: 'no-preference' },
      { lang: 'ru', width: 360, height: 740, motion: 'no-preference' },
      { lang: 'en', width: 1024, height: 768, motion: 'reduce' },
    ];
    const ACTIONS = 130;
    let done = 0;
    const all = [];
    for (const [i, s] of sessions.entries()) {
      const scenario = SCENARIOS[Math.floor(rand() * SCENARIOS.length)];
      const query = `?seed=${i + 1}&lang=${s.lang}&scenario=${scenario}`;
      // Predict-then-reveal on (progress null): the question comes up mid-run.
      await env.withLab(query, async (lab) => {
        const { page } = lab;
        const inflight = trackRequests(page);
        const log = [];
        for (let a = 0; a < ACTIONS; a++) {
          const r = [rand(), rand(), rand()];
          let what = await page.evaluate(actInPage, r);
          if (what === 'key') {
            const key = ['Space', 'ArrowRight', 'ArrowLeft', 'Tab', 'Enter'][Math.floor(r[1] * 5)];
            await page.keyboard.press(key);
            what = `key ${key}`;
          }
          if (r[2] < 0.03) {
            const width = [360, 700, 1440][Math.floor(r[1] * 3)];
            await page.setViewportSize({ width, height: 800 });
            what += ` / width ${width}`;
          }
          log.push(what);
          all.push(what);
          await page.evaluate(() => new Promise((res) => requestAnimationFrame(() => res())));
          assert.deepEqual(lab.problems, [], `seed ${SEED}, session ${i} (${query}), action ${a}: ${log.slice(-5).join(' → ')}`);
          done++;
        }
        await settle(page, inflight);
        // The lab still responds: restart, one step.
        await page.setViewportSize({ width: s.width, height: s.height });
        await page.evaluate(() => document.querySelector('[data-testid=btn-restart]').click());
        await lab.waitForStep(0);
        await page.evaluate(() => document.querySelector('[data-testid=btn-step]').click());
        await lab.waitForStep(1);
        const width = await lab.scrollWidth();
        assert.ok(width <= s.width, `seed ${SEED}, session ${i}: scrollWidth ${width} at ${s.width} px`);
      }, { viewport: { width: s.width, height: s.height }, context: { reducedMotion: s.motion }, progress: null });
    }
    const kinds = {};
    for (const w of all) kinds[w.split(' ').slice(0, 2).join(' ')] = (kinds[w.split(' ').slice(0, 2).join(' ')] ?? 0) + 1;
    t.diagnostic(`${done} actions: ${JSON.stringify(kinds)}`);
    assert.ok(done >= 500, `${done} actions`);
  });

  test('a URL fuzz: 200 generated links raise no error, inject no markup, never scroll sideways', async (t) => {
    const rand = prng(SEED * 7919);
    const pick = (list) => list[Math.floor(rand() * list.length)];
    const huge = (n) => Array.from({ length: n }, () => pick([...'abcxyz019-_.,:%<>"\'&é€я😀'])).join('');
    const INJECT = [
      '<img src=x onerror=alert(1) data-injected>',
      '"><b data-injected="1">x</b>',
      "'><svg data-injected onload=alert(1)>",
      '<script data-injected>alert(1)</script>',
      '</p><p data-injected>',
    ];
    const GARBAGE = [
      '', '-1', '0', '1e9', '99999999999999999999999', 'NaN', '%', '%zz', '%E0%A4%A', '%00', '\u202e', 'null',
      'undefined', '../../etc/passwd', 'decisive', 'Decisive', ' ', '+', '1.5', '0x10',
    ];
    const value = (key) => {
      const x = rand();
      if (x < 0.15) return encodeURIComponent(pick(INJECT));
      if (x < 0.2) return pick(INJECT); // raw: the browser escapes what it must
      // One long value per URL at most (the test server, like most hosts, takes ~16 KB of URL):
      // 10,000 ASCII characters, or 1,000 of anything.
      if (x < 0.27 && !long) {
        long = true;
        return rand() < 0.5 ? 'x'.repeat(9990) + huge(10) : encodeURIComponent(huge(1000));
      }
      if (x < 0.5) return pick(GARBAGE);
      switch (key) {
        case 'scenario': return pick(SCENARIOS);
        case 'step': return String(Math.floor(rand() * 80));
        case 'seed': return String(Math.floor(rand() * 1e6));
        case 'lang': return pick(['ru', 'en', 'RU', 'de', 'en-US']);
        case 'speed': return pick(['0.25', '0.5', '1', '2', '4', '3', '.5']);
        case 'embed': return pick(['1', 'true', '0', 'yes']);
        case 'on':
        case 'off': return Array.from({ length: 1 + Math.floor(rand() * (rand() < 0.2 ? 500 : 4)) }, () => pick(TOGGLES)).join(',');
        case 'cmd': return Array.from({ length: 1 + Math.floor(rand() * (rand() < 0.1 ? 300 : 5)) }, () =>
          `${Math.floor(rand() * 40)}:${pick(['ack', 'p3', 'p11', 'p0', 'm1', 'm999', 'xapi-a', 'rapi-a', 'xredis', 't3600000', 't-1', 'd50', 'zz', ''])}`).join(',');
        default: return huge(5);
      }
    };
    const KEYS = ['scenario', 'step', 'seed', 'lang', 'speed', 'embed', 'on', 'off', 'cmd', 'junk', '%3Cx%3E'];
    let long = false;
    const urls = Array.from({ length: 200 }, () => {
      long = false;
      const n = 1 + Math.floor(rand() * 5);
      const parts = Array.from({ length: n }, () => { const k = pick(KEYS); return `${k}=${value(k)}`; });
      if (rand() < 0.3) parts.push('lang=' + pick(['ru', 'en']));
      return '?' + parts.join('&');
    });
    const width = 360;
    const { browser, server } = env;
    const context = await browser.newContext({ viewport: { width, height: 740 } });
    try {
      const page = await context.newPage();
      const problems = [];
      page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
      page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
      const left = leftBehind(page);
      page.on('requestfailed', (r) => { if (!left(r)) problems.push(`request failed: ${r.url()} (${r.failure()?.errorText})`); });
      page.on('response', (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`); });
      const inflight = trackRequests(page);
      let checked = 0;
      let noticed = 0;
      for (const [i, query] of urls.entries()) {
        const where = `seed ${SEED}, URL ${i}: ${query.slice(0, 300)}`;
        const response = await page.goto(server.url + query).catch((e) => assert.fail(`${where}: ${e.message.slice(0, 200)}`));
        assert.equal(response.status(), 200, where);
        await page.waitForSelector('[data-testid="app-ready"]', { timeout: 20_000 });
        await settle(page, inflight);
        const seen = await page.evaluate(() => ({
          injected: document.querySelectorAll('[data-injected]').length,
          scripts: [...document.scripts].map((s) => (s.src ? s.src.split('/').pop().replace(/-[0-9a-f]+\.js$/, '') : 'inline')).sort(),
          width: document.documentElement.scrollWidth,
          notice: document.querySelector('[data-testid=notice]')?.textContent.length ?? 0,
        }));
        assert.deepEqual(problems, [], where);
        assert.equal(seen.injected, 0, `${where}: injected markup`);
        // boot.js and scorm.js (one inline script) and the fallback for a host's strict policy (build/prerender.mjs).
        assert.deepEqual(seen.scripts, ['fallback', 'inline'], `${where}: only boot.js and scorm.js (inline) and the fallback are scripts`);
        assert.ok(seen.width <= width, `${where}: scrollWidth ${seen.width}`);
        assert.ok(seen.notice < 1500, `${where}: a notice of ${seen.notice} characters`);
        checked++;
        if (seen.notice > 0) noticed++;
      }
      t.diagnostic(`${checked} URLs, ${noticed} with a notice`);
      assert.ok(checked >= 200, `${checked} URLs`);
    } finally {
      await context.close();
    }
  });
});
