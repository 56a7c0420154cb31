// Page object for the interactive lab: the data-testid contract of issue 4 and the
// moves a reader makes (step, play, faults, toggles, language), each of which waits
// for the page to reach the state it asked for, never for a fixed time.

import assert from 'node:assert/strict';
import { after, before } from 'node:test';

import { launchChromium } from './browser.mjs';
import { assertDistBuilt, DIST } from './dist.mjs';
import { LessonPage } from './lesson-page.mjs';
import { startServer } from './server.mjs';

/**
 * For a test file's `describe`: starts the release build's server and Chromium before
 * its tests and stops them after. `env.server` and `env.browser` are set in `before`;
 * `env.withLab(query, fn, options)` opens the lab in a fresh context (options as
 * LabPage.openLab), runs `fn`, then asserts no console error, page error or failed
 * request, and closes the context.
 */
export function releaseBuildHarness() {
  const env = {};
  before(async () => {
    assertDistBuilt();
    env.server = await startServer({ root: DIST });
    env.browser = await launchChromium();
  });
  after(async () => {
    await env.browser?.close();
    await env.server?.close();
  });
  env.withLab = async (query, fn, options = {}) => {
    const lab = await LabPage.openLab(env.browser, env.server, query, options);
    try {
      await fn(lab);
      assert.deepEqual(lab.problems, [], 'no console error, page error or failed request');
    } finally {
      await lab.close();
    }
  };
  /** The lab with predict-then-reveal on (the reader's default) unless `progress` says otherwise, once the prose is there. */
  env.withLesson = (query, fn, options = {}) =>
    env.withLab(
      query,
      async (lab) => {
        await lab.byId('prose-before').locator('section').first().waitFor();
        await fn(lab);
      },
      { progress: null, ...options },
    );
  return env;
}

/** In the page: whether every shown element matching `sel` lies wholly inside the viewport. */
function wholeInView(sel) {
  const els = [...document.querySelectorAll(sel)].filter((e) => e.getClientRects().length > 0);
  return els.length > 0 && els.every((e) => {
    const r = e.getBoundingClientRect();
    return r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth;
  });
}

/** The seed scenarios, in picker order (from the catalogue). */
export { SEED_SCENARIOS } from './catalogue.mjs';

/** Any Cyrillic letter. */
export const CYRILLIC = /[\u0400-\u04FF]/;

/** Numbers and statuses of the outcome and state panes, by test id (absent ones are left out). */
export const VALUE_IDS = [
  'charge-count',
  'customer-charged',
  'ledger-rows',
  'account-balance',
  'account-version',
  'post-likes',
  'order-status',
  'redis-keys',
];

const tid = (id) => `[data-testid="${id}"]`;

/** "12 / 31" → {k: 12, n: 31}. */
export function parseCounter(text) {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text ?? '');
  if (!m) throw new Error(`step counter reads ${JSON.stringify(text)}, not "k / n"`);
  return { k: Number(m[1]), n: Number(m[2]) };
}

export class LabPage extends LessonPage {
  /**
   * Opens the lab with a query string (`?scenario=…`) on `server`.
   * @param {import('playwright-core').Browser} browser
   * @param {{url: string}} server
   * @param {string} query
   * @param {{viewport?: {width: number, height: number}, context?: object}} [options]
   * @returns {Promise<LabPage>}
   */
  /** Opens the lab. Predict-then-reveal is off unless `progress` says otherwise: these tests drive the lab. */
  static async openLab(browser, server, query = '', { viewport, context, progress = 'p=0', sections = 'open' } = {}) {
    return LabPage.open(browser, server.url + query, viewport ?? { width: 1440, height: 900 }, context, progress, sections);
  }

  byId(id) {
    return this.page.getByTestId(id);
  }

  /** Text of a test id, or null when the page does not have it. */
  async text(id) {
    const loc = this.byId(id);
    if ((await loc.count()) === 0) return null;
    return (await loc.first().textContent()).trim();
  }

  async has(id) {
    return (await this.byId(id).count()) > 0;
  }

  async counter() {
    return parseCounter(await this.byId('step-counter').textContent());
  }

  /** Waits until the step counter reads `k / …` (and `k / n` when n is given). */
  async waitForStep(k, n) {
    try {
      await this.page.waitForFunction(
        ([sel, k, n]) => {
          const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(document.querySelector(sel)?.textContent ?? '');
          return m && Number(m[1]) === k && (n == null || Number(m[2]) === n);
        },
        [tid('step-counter'), k, n ?? null],
        { timeout: 10_000 },
      );
    } catch (e) {
      // Say what the counter read instead, and whether the lab was playing (a failure seen once in CI).
      const seen = await this.page.evaluate((sel) => document.querySelector(sel)?.textContent, tid('step-counter')).catch(() => '?');
      const playing = await this.byId('btn-play').getAttribute('aria-pressed').catch(() => '?');
      throw new Error(`waited for step ${k}${n == null ? '' : ' / ' + n}; the counter reads '${seen}', playing: ${playing}, url: ${this.page.url()}`, { cause: e });
    }
    return this.counter();
  }

  /** Clicks a control that should move the run by `delta` steps, and waits for it. */
  async clickAndStep(id, delta = 1) {
    const { k } = await this.counter();
    await this.byId(id).click();
    return this.waitForStep(k + delta);
  }

  async stepForward() {
    return this.clickAndStep('btn-step', 1);
  }

  async stepBack() {
    return this.clickAndStep('btn-back', -1);
  }

  /** Runs to the end (btn-end; disabled when already there) and waits for "n / n". */
  async toEnd() {
    const { k, n } = await this.counter();
    if (k !== n) await this.byId('btn-end').click();
    await this.page.waitForFunction((sel) => {
      const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(document.querySelector(sel)?.textContent ?? '');
      return m && m[1] === m[2];
    }, tid('step-counter'));
    return this.counter();
  }

  async playing() {
    return (await this.byId('btn-play').getAttribute('aria-pressed')) === 'true';
  }

  /** Picks a scenario in the picker and waits until the title and the counter follow. */
  async pickScenario(id) {
    const before = await this.byId('scenario-title').textContent();
    await this.byId('scenario-picker').selectOption(id);
    await this.page.waitForFunction(
      ([sel, id]) => new URL(location.href).searchParams.get('scenario') === id && document.querySelector(sel),
      [tid('step-counter'), id],
    );
    return { before, after: await this.byId('scenario-title').textContent() };
  }

  /** The picker's option values, in order. */
  scenarioIds() {
    return this.byId('scenario-picker').locator('option').evaluateAll((os) => os.map((o) => o.value));
  }

  /** Sets a defence or variant toggle and waits until the checkbox says so. */
  async setToggle(id, on) {
    const box = this.byId(`toggle-${id}`);
    await box.setChecked(on);
    await this.page.waitForFunction(([sel, on]) => document.querySelector(sel)?.checked === on, [
      tid(`toggle-${id}`),
      on,
    ]);
  }

  /** Sets "N parallel retries" and commits it (the input listens to `change`). */
  async setParallelN(n) {
    const input = this.byId('parallel-n');
    await input.fill(String(n));
    await input.dispatchEvent('change');
  }

  /** data-status of the invariant summary: "holds" or "violated". */
  invariantStatus() {
    return this.byId('invariant-status').getAttribute('data-status');
  }

  /** Every value the panes show, by test id, plus each pane's visible text: what a reader reads at this step. */
  snapshot() {
    return this.page.evaluate((ids) => {
      const q = (id) => document.querySelector(`[data-testid="${id}"]`);
      const out = {};
      for (const id of ids) {
        const el = q(id);
        if (el) out[id] = el.textContent.trim();
      }
      out.invariant = q('invariant-status')?.getAttribute('data-status') ?? null;
      out.belief = q('client-belief')?.getAttribute('data-belief') ?? null;
      out.invariants = [...document.querySelectorAll('[data-testid^="inv-"]')].map(
        (el) => `${el.dataset.testid}:${el.className}`,
      );
      for (const pane of ['outcome', 'pane-client', 'pane-redis', 'pane-postgres', 'pane-processor', 'pane-broker']) {
        const el = q(pane);
        if (el) out[pane] = el.innerText;
      }
      out.narration = q('narration-text')?.innerText ?? null;
      out.command = q('step-command')?.innerText ?? null;
      out.clock = q('clock')?.textContent ?? null;
      out.messages = [...document.querySelectorAll('[data-testid="msg"]')].map((g) => g.dataset.msg).sort();
      return out;
    }, VALUE_IDS);
  }

  /**
   * Steps the run from where it is to its end with the arrow key and returns, for each
   * step k, what the page renders of the core's verdict: the app's belief
   * (data-belief), the phone's screen and the step's narration.
   */
  async walk() {
    await this.focusBody();
    const { k: from, n } = await this.counter();
    const seen = async (k) => {
      const s = await this.page.evaluate(() => ({
        belief: document.querySelector('[data-testid="client-belief"]')?.getAttribute('data-belief') ?? null,
        phone: document.querySelector('[data-testid="phone-screen"]')?.textContent.trim() ?? null,
        narration: document.querySelector('[data-testid="narration-text"]')?.innerText ?? '',
      }));
      return { k, ...s };
    };
    const steps = [await seen(from)];
    for (let k = from + 1; k <= n; k++) {
      await this.page.keyboard.press('ArrowRight');
      await this.waitForStep(k);
      steps.push(await seen(k));
    }
    return steps;
  }

  /**
   * Ids of messages drawn in flight once the glide is over: not yet delivered
   * (`.hidden`) and not broken off (`.msg--lost`).
   */
  inFlightMessageIds() {
    return this.page
      .locator('[data-testid="msg"]:not(.hidden):not(.msg--lost)')
      .evaluateAll((gs) => gs.map((g) => g.dataset.msg));
  }

  message(id) {
    return this.page.locator(`[data-testid="msg"][data-msg="${id}"]`);
  }

  /** The page's search parameters as an object. */
  params() {
    return Object.fromEntries(new URL(this.page.url()).searchParams);
  }

  bodyText() {
    return this.page.evaluate(() => document.body.innerText);
  }

  /** Lines of visible text that contain Cyrillic. */
  async cyrillicLines() {
    return (await this.bodyText()).split('\n').filter((l) => CYRILLIC.test(l));
  }

  /** Switches the language with the lang-ru / lang-en buttons and waits for <html lang>. */
  async switchLang(code) {
    await this.byId(`lang-${code}`).click();
    await this.page.waitForFunction((code) => document.documentElement.lang === code, code);
    await this.byId('app-ready').waitFor();
  }

  /**
   * Visible headings of the lab (pane titles, fieldset legends, the scenario title),
   * each as its own text without the counts and clocks nested in it.
   */
  headings() {
    return this.page.evaluate(() =>
      [...document.querySelectorAll('h1, h2, .pane h3, .pane h4, fieldset legend')]
        .filter((el) => el.getClientRects().length > 0)
        .map((el) => ({
          where: el.closest('[data-testid]')?.dataset.testid ?? el.tagName,
          text: [...el.childNodes]
            .filter((n) => n.nodeType === Node.TEXT_NODE)
            .map((n) => n.textContent)
            .join('')
            .trim(),
        })),
    );
  }

  /**
   * Clicks btn-step from inside the page and reads every message's `transform`
   * before the click and at each of the next `frames` animation frames.
   * @returns {Promise<{before: Record<string,string>, frames: Record<string,string>[]}>}
   */
  stepAndSampleTransforms(frames = 8) {
    return this.page.evaluate(async (frames) => {
      const read = () =>
        Object.fromEntries(
          [...document.querySelectorAll('[data-testid="msg"]')].map((g) => [g.dataset.msg, g.getAttribute('transform')]),
        );
      const before = read();
      document.querySelector('[data-testid="btn-step"]').click();
      const out = [];
      for (let i = 0; i < frames; i++) {
        await new Promise((resolve) => requestAnimationFrame(() => resolve()));
        out.push(read());
      }
      return { before, frames: out };
    }, frames);
  }

  /**
   * For every arrow of the sequence diagram: its step (data-step), its label, and
   * what a click on the middle of its line would hit (the step of the arrow found
   * there by elementFromPoint, or null). Scrolls each arrow into view to look.
   */
  seqArrowMiddles() {
    return this.page.evaluate(() => {
      const arrows = [...document.querySelectorAll('[data-testid="seq-arrow"]')];
      return arrows.map((g, i) => {
        g.scrollIntoView({ block: 'center', inline: 'center' });
        const line = g.querySelector('line');
        const [x1, y1, x2, y2] = ['x1', 'y1', 'x2', 'y2'].map((a) => line[a].baseVal.value);
        const p = new DOMPoint((x1 + x2) / 2, (y1 + y2) / 2).matrixTransform(line.getScreenCTM());
        const hit = document.elementFromPoint(p.x, p.y);
        const there = hit?.closest('[data-testid="seq-arrow"]');
        return {
          index: i,
          step: Number(g.dataset.step),
          label: g.querySelector('title')?.textContent ?? '',
          hitIndex: there ? arrows.indexOf(there) : null,
          hitStep: there ? Number(there.dataset.step) : null,
          hitClass: hit?.getAttribute('class') ?? hit?.tagName ?? null,
        };
      });
    });
  }

  /**
   * Clicks the `i`-th arrow of the sequence diagram with the mouse on the middle of
   * its line, where a reader would, and returns the step that arrow carries.
   */
  async clickSeqArrow(i) {
    const arrow = this.byId('seq-arrow').nth(i);
    await arrow.scrollIntoViewIfNeeded();
    const { x, y, step } = await arrow.evaluate((g) => {
      const line = g.querySelector('line');
      const [x1, y1, x2, y2] = ['x1', 'y1', 'x2', 'y2'].map((a) => line[a].baseVal.value);
      const p = new DOMPoint((x1 + x2) / 2, (y1 + y2) / 2).matrixTransform(line.getScreenCTM());
      return { x: p.x, y: p.y, step: Number(g.dataset.step) };
    });
    await this.page.mouse.click(x, y);
    return step;
  }

  /**
   * Node labels of the topology that do not fit inside their node's box with
   * `pad` SVG units to spare on each side, as readable strings.
   */
  overflowingNodeLabels(pad = 2) {
    return this.page.evaluate((pad) => {
      const out = [];
      for (const g of document.querySelectorAll('[data-testid^="node-"]')) {
        const r = g.querySelector('.node__box').getBBox();
        for (const t of g.querySelectorAll('text')) {
          if (!t.textContent.trim()) continue;
          const b = t.getBBox();
          const inside =
            b.x >= r.x + pad && b.x + b.width <= r.x + r.width - pad && b.y >= r.y && b.y + b.height <= r.y + r.height;
          if (!inside) {
            const f = (v) => Math.round(v);
            out.push(
              `${g.dataset.testid} "${t.textContent}": text x ${f(b.x)}..${f(b.x + b.width)}, box x ${f(r.x)}..${f(r.x + r.width)}`,
            );
          }
        }
      }
      return out;
    }, pad);
  }

  /** Bounding box of a test id in CSS pixels. */
  box(id) {
    return this.byId(id).boundingBox();
  }

  /** Brings the lab on screen (the keys drive it only then) and leaves the focus on the page. */
  focusBody() {
    return this.page.evaluate(() => {
      document.getElementById('lab').scrollIntoView();
      document.activeElement?.blur?.();
      return document.activeElement === document.body;
    });
  }

  /** Presses Tab (or Shift+Tab) until the element with test id `id` has focus (at most `max` times). */
  async tabTo(id, { backwards = false, max = 60 } = {}) {
    for (let i = 0; i < max; i++) {
      await this.page.keyboard.press(backwards ? 'Shift+Tab' : 'Tab');
      const at = await this.page.evaluate(() => document.activeElement?.dataset?.testid ?? null);
      if (at === id) return i + 1;
    }
    throw new Error(`Tab never reached ${id} in ${max} presses`);
  }
  /** Scrolls the lab to the top of the viewport, as a "Try it" or a lab link does. */
  scrollToLab() {
    return this.page.evaluate(() => document.getElementById('lab').scrollIntoView());
  }

  /** Whether every element with test id `id` that is shown lies wholly inside the viewport. */
  inViewport(id) {
    return this.page.evaluate(wholeInView, `[data-testid="${id}"]`);
  }

  /**
   * Whether the element with test id `id` comes wholly into the viewport within a few
   * frames: for what the page itself brings into view once it is laid out.
   */
  async comesIntoView(id) {
    return this.page
      .waitForFunction(wholeInView, `[data-testid="${id}"]`, { timeout: 5_000 })
      .then(() => true, () => false);
  }

  /**
   * Where the elements with test id `id` are, and what the page was doing: what a failed
   * `comesIntoView` prints, so a failure seen once in CI says why.
   */
  whereIs(id) {
    return this.page.evaluate((sel) => JSON.stringify({
      els: [...document.querySelectorAll(sel)].map((e) => {
        const r = e.getBoundingClientRect();
        return {
          text: e.textContent.slice(0, 80),
          top: Math.round(r.top), bottom: Math.round(r.bottom), left: Math.round(r.left), right: Math.round(r.right),
          after: e.parentElement?.previousElementSibling?.className ?? null,
          near: e.parentElement?.dataset.near ?? null,
        };
      }),
      scrollX: Math.round(scrollX), scrollY: Math.round(scrollY), innerHeight, innerWidth,
      docWidth: document.documentElement.scrollWidth, focus: document.hasFocus(),
      active: document.activeElement?.dataset?.testid ?? document.activeElement?.tagName,
    }), `[data-testid="${id}"]`);
  }

  /**
   * Elements of the lab cut at their box: content wider than the box that neither fits
   * nor scrolls with a visible affordance (the scroll shadow of style/main.css).
   */
  clippedInLab() {
    return this.page.evaluate(() => [...document.querySelectorAll('#lab *')]
      // Visually hidden text (1 px boxes: .sr-only, a phone's table heads) is left out.
      .filter((e) => e.clientWidth > 1 && e.scrollWidth > e.clientWidth + 1)
      .filter((e) => {
        const cs = getComputedStyle(e);
        const scrolls = cs.overflowX === 'auto' || cs.overflowX === 'scroll';
        return !(scrolls && cs.backgroundImage.includes('gradient'));
      })
      .filter((e) => getComputedStyle(e).overflowX !== 'visible' || e.tagName === 'svg')
      .map((e) => `${e.tagName}.${e.className?.baseVal ?? e.className} ${e.scrollWidth}>${e.clientWidth}`));
  }
}
