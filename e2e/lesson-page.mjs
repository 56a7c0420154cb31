// Page object for the lesson page: every selector the tests use lives here.

import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The page's localStorage key for the reader's progress (src/progress.rs). */
export const PROGRESS_KEY = 'idempotency-lab:progress';

export const ARTIFACTS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'artifacts');

export const NODE_IDS = ['node-client', 'node-api', 'node-redis', 'node-postgres', 'node-processor'];
export const LINK_IDS = ['link-client-api', 'link-api-redis', 'link-api-postgres', 'link-api-processor'];

const READY = '[data-testid="app-ready"]';
/** The lab drawn whole: the panes and the diagram come a frame after its core (`Lab::whole`). */
export const WHOLE = '[data-testid="pane-sequence"] .sequence > svg';
/** The scenario's text has arrived (the last fetch of a page load): its listing is drawn. */
export const TEXT_IN = '[data-testid="code-pane"] ol.code > li';

/**
 * Whether a failed request belongs to a document the page has since left: aborted by
 * the browser (`net::ERR_ABORTED`) once its frame started to navigate elsewhere. boot.js replaces a
 * page by the page of the reader's language before anything is drawn; what the
 * browser had started to fetch for the page it left is aborted, and is no failure;
 * nor is the icon's fetch, aborted by a reload.
 * @param {import('playwright-core').Page} page
 * @returns {(req: import('playwright-core').Request) => boolean}
 */
export function leftBehind(page) {
  // A document's generation: the number of navigations its frame started before it.
  const generation = new Map();
  const born = new WeakMap();
  page.on('request', (req) => {
    let frame;
    try {
      frame = req.frame();
    } catch {
      return; // a service worker's request: no frame
    }
    // A navigation request opens the next generation (and is its document: a page left
    // while its own HTML is still arriving is aborted too).
    const now = (generation.get(frame) ?? 0) + (req.isNavigationRequest() ? 1 : 0);
    generation.set(frame, now);
    born.set(req, [frame, now]);
  });
  return (req) => {
    const [frame, then] = born.get(req) ?? [];
    if (req.failure()?.errorText !== 'net::ERR_ABORTED') return false;
    // The icon is the browser's own fetch, not the page's; a reload can abort it after
    // the next document's request has started (seen once in lesson.test's reload).
    if (new URL(req.url()).pathname.endsWith('/favicon.svg')) return true;
    return frame !== undefined && then < (generation.get(frame) ?? 0);
  };
}

/**
 * Whether a failed request is the explorer's worker's (`worker/`), aborted by the browser
 * (`net::ERR_ABORTED`): the page terminated that worker (Cancel, a new search, another
 * scenario or language), which aborts what it was still loading. No failure either; a
 * missing file is still an HTTP error.
 * @param {import('playwright-core').Request} req
 */
export function terminatedWorker(req) {
  return req.failure()?.errorText === 'net::ERR_ABORTED' && new URL(req.url()).pathname.includes('/worker/');
}

export class LessonPage {
  /** @param {import('playwright-core').Page} page */
  constructor(page) {
    this.page = page;
    /** Console errors, page errors, failed requests and HTTP errors seen so far. */
    this.problems = [];
    /** Console warnings seen so far (a clean page load has none). */
    this.warnings = [];
    page.on('console', (msg) => {
      if (msg.type() === 'error') this.problems.push(`console error: ${msg.text()}`);
      if (msg.type() === 'warning') this.warnings.push(msg.text());
    });
    page.on('pageerror', (err) => this.problems.push(`page error: ${err.message}`));
    const left = leftBehind(page);
    page.on('requestfailed', (req) => {
      if (!left(req) && !terminatedWorker(req)) this.problems.push(`request failed: ${req.url()} (${req.failure()?.errorText})`);
    });
    page.on('response', (res) => {
      if (res.status() >= 400) this.problems.push(`HTTP ${res.status()}: ${res.url()}`);
    });
  }

  /**
   * Opens the lesson in a fresh browser context and waits until the wasm app has mounted.
   * @param {import('playwright-core').Browser} browser
   * @param {string} url
   * @param {{width: number, height: number}} viewport
   * @param {import('playwright-core').BrowserContextOptions} [contextOptions]  e.g. colorScheme, reducedMotion
   */
  /**
   * `progress`: the reader's stored progress to start from (the page's
   * localStorage format, e.g. 'p=0' = do not pause to predict); null leaves it empty.
   */
  /**
   * `sections`: 'open' opens each of the lab's sections (the defences, the client,
   * what else could happen) as it is drawn, as a reader who opened them all: the
   * tests that drive those controls reach them at once; 'closed' leaves them as a
   * new reader finds them (e2e/layout.test.mjs).
   */
  static async open(browser, url, viewport = { width: 1440, height: 900 }, contextOptions = {}, progress = null, sections = 'open') {
    const context = await browser.newContext({ ...contextOptions, viewport });
    if (sections === 'open') {
      await context.addInitScript(() => {
        const open = () => document.querySelectorAll('details.more:not([open])').forEach((d) => (d.open = true));
        new MutationObserver(open).observe(document, { childList: true, subtree: true });
      });
    }
    if (progress != null) {
      // Only where nothing is stored yet, so a reload keeps what the page saved.
      await context.addInitScript(([key, value]) => {
        if (localStorage.getItem(key) === null) localStorage.setItem(key, value);
      }, [PROGRESS_KEY, progress]);
    }
    // `this`: a subclass (LabPage) opens as itself.
    const lesson = new this(await context.newPage());
    lesson.response = await lesson.page.goto(url);
    await lesson.waitUntilReady();
    return lesson;
  }

  /** The module has mounted the lab (`app-ready`) and drawn it whole. */
  async waitUntilReady() {
    await this.page.waitForSelector(READY, { timeout: 20_000 });
    await this.page.locator(WHOLE).first().waitFor({ state: 'attached' });
  }

  /**
   * Waits until the focused element matches `selector`. The page moves the focus a frame
   * after its render (`focus_later`, `keep_focus`), so a test reads it only once it has
   * come; if it never does, the failure names where the focus is instead.
   */
  async focusIs(selector, what = selector) {
    const came = await this.page
      .waitForFunction((s) => document.activeElement?.matches(s), selector, { timeout: 5_000 })
      .then(() => true, () => false);
    if (!came) {
      const at = await this.page.evaluate(() => document.activeElement?.outerHTML.slice(0, 120) ?? 'nothing');
      throw new Error(`${what}: the focus should be on ${selector}, it is on ${at}`);
    }
  }

  async close() {
    await this.page.context().close();
  }

  title() {
    return this.page.locator('h1').textContent();
  }

  /** data-testid values present in the page that start with `prefix`, in document order. */
  testIds(prefix) {
    return this.page
      .locator(`[data-testid^="${prefix}"]`)
      .evaluateAll((els) => els.map((el) => el.getAttribute('data-testid')));
  }

  nodeIds() {
    return this.testIds('node-');
  }

  linkIds() {
    return this.testIds('link-');
  }

  /** Rendered size of a node box in CSS pixels. */
  async nodeBox(id) {
    return this.page.getByTestId(id).boundingBox();
  }

  /**
   * Geometry of a link in SVG user units: its length, stroke, and whether its two ends
   * touch the boxes of the nodes named in its id (link-FROM-TO).
   */
  linkGeometry(id) {
    return this.page.getByTestId(id).evaluate((path, tolerance) => {
      const [, from, to] = path.getAttribute('data-testid').split('-');
      const box = (node) => document.querySelector(`[data-testid="node-${node}"]`).getBBox();
      const near = (p, b) =>
        p.x >= b.x - tolerance &&
        p.x <= b.x + b.width + tolerance &&
        p.y >= b.y - tolerance &&
        p.y <= b.y + b.height + tolerance;
      const length = path.getTotalLength();
      const start = path.getPointAtLength(0);
      const end = path.getPointAtLength(length);
      const style = getComputedStyle(path);
      return {
        length,
        stroke: style.stroke,
        visible: style.visibility !== 'hidden' && style.display !== 'none',
        startsAtFrom: near(start, box(from)),
        endsAtTo: near(end, box(to)),
      };
    }, 8);
  }

  /** Width of the whole document, to detect horizontal scrolling. */
  scrollWidth() {
    return this.page.evaluate(() => document.documentElement.scrollWidth);
  }

  async screenshot(name) {
    mkdirSync(ARTIFACTS, { recursive: true });
    const file = path.join(ARTIFACTS, name);
    await this.page.screenshot({ path: file, fullPage: true });
    return file;
  }
}
