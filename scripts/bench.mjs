// `make bench`: budgets of the release build in dist/.
//
// 1. Each file of dist/ with raw, gzip (-9) and brotli (-q 11) bytes, and the total.
// 2. Time from navigation start to interactive in headless Chromium, median of RUNS cold
//    loads (fresh browser context each), for the lesson and for a plain static HTML page
//    of the same raw size served by the same server in the same run, and their ratio.
//    "Interactive" = the element [data-testid="app-ready"] is in the DOM: for the lesson
//    that is when the wasm app has mounted; for the static page, when the parser adds it.
//    Measured inside the page with performance.now(), whose origin is navigation start.
// 3. Animation: frame intervals while the lab plays with 50 messages in flight (five
//    bursts of ten parallel requests), measured with requestAnimationFrame in the page.
// Prints figures only; it asserts nothing about time.

import { launchChromium } from '../e2e/browser.mjs';
import { assertDistBuilt, DIST, distSizes, GZIP_BUDGET_BYTES, LANGS, pageLoadSizes } from '../e2e/dist.mjs';
import { startServer } from '../e2e/server.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const BASELINE_PATH = '/__bench_baseline.html';

const kb = (n) => (n / 1024).toFixed(1).padStart(7) + ' KB';
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** A plain HTML page of about `bytes` bytes: static text, no script, no wasm. */
function baselinePage(bytes) {
  const words = ['retry', 'request', 'payment', 'timeout', 'ledger', 'charge', 'idempotency',
    'key', 'client', 'server', 'duplicate', 'store', 'response', 'network', 'processor'];
  let seed = 12345;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
  const head = '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
    '<title>Baseline</title><link rel="icon" href="public/favicon.svg"></head><body><main data-testid="app-ready"><h1>Baseline</h1>\n';
  const tail = '</main></body></html>\n';
  const parts = [head];
  let size = head.length + tail.length;
  while (size < bytes) {
    const sentence = Array.from({ length: 12 }, () => words[next() % words.length]).join(' ');
    const p = `<p>${sentence}.</p>\n`;
    parts.push(p);
    size += p.length;
  }
  parts.push(tail);
  return parts.join('');
}

function printSizes({ files, total }, title = 'dist/ sizes (release build), every file') {
  const width = Math.max(...files.map((f) => f.file.length), 'total'.length);
  console.log(title);
  console.log(`  ${'file'.padEnd(width)}  ${'raw'.padStart(10)}  ${'gzip'.padStart(10)}  ${'brotli'.padStart(10)}`);
  for (const f of files) {
    console.log(`  ${f.file.padEnd(width)}  ${kb(f.raw)}  ${kb(f.gzip)}  ${kb(f.brotli)}`);
  }
  console.log(`  ${'total'.padEnd(width)}  ${kb(total.raw)}  ${kb(total.gzip)}  ${kb(total.brotli)}`);
  console.log(`  (${total.raw} / ${total.gzip} / ${total.brotli} bytes)`);
}

/** What one page load transfers, per language, against the budget. */
function printPageLoads() {
  for (const lang of LANGS) {
    const load = pageLoadSizes(lang);
    printSizes(load, `page load in ${lang} (the heaviest scenario text open)`);
    console.log(`  gzip budget ${GZIP_BUDGET_BYTES} bytes: ${((100 * load.total.gzip) / GZIP_BUDGET_BYTES).toFixed(1)}% used`);
  }
}

/** Milliseconds from navigation start until [data-testid="app-ready"] exists, one cold load. */
async function timeToReady(browser, url) {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  await context.addInitScript(() => {
    const mark = () => {
      if (window.__readyAt === undefined && document.querySelector('[data-testid="app-ready"]')) {
        window.__readyAt = performance.now();
      }
    };
    new MutationObserver(mark).observe(document, { childList: true, subtree: true });
    document.addEventListener('DOMContentLoaded', mark);
  });
  try {
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    await page.goto(url);
    await page.waitForFunction(() => window.__readyAt !== undefined, null, { timeout: 20_000 });
    if (errors.length) throw new Error(`errors while loading ${url}: ${errors.join('; ')}`);
    return await page.evaluate(() => window.__readyAt);
  } finally {
    await context.close();
  }
}

/** Frame intervals while playing with 50 messages in flight. */
async function animation(browser, url) {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${url}?scenario=naive-post&seed=1&lang=en&speed=0.5`);
  await page.waitForSelector('[data-testid="app-ready"]');
  await page.fill('[data-testid="parallel-n"]', '10');
  await page.dispatchEvent('[data-testid="parallel-n"]', 'change');
  for (let i = 0; i < 5; i++) await page.click('[data-testid="btn-parallel-retries"]');
  const inFlight = await page.locator('[data-testid="msg"]:not(.hidden)').count();
  await page.click('[data-testid="btn-play"]');
  const frames = await page.evaluate(
    () =>
      new Promise((resolve) => {
        const t = [];
        const tick = (now) => {
          t.push(now);
          if (now - t[0] < 3000) requestAnimationFrame(tick);
          else resolve(t.slice(1).map((x, i) => x - t[i]));
        };
        requestAnimationFrame(tick);
      }),
  );
  await context.close();
  const sorted = [...frames].sort((a, b) => a - b);
  const p95 = sorted[Math.floor(sorted.length * 0.95)];
  console.log('');
  console.log(`animation, playing at 0.5x with ${inFlight} messages drawn, 3 s of frames`);
  console.log(`  frames ${frames.length}, interval median ${median(frames).toFixed(1)} ms, p95 ${p95.toFixed(1)} ms, ` +
    `max ${sorted[sorted.length - 1].toFixed(1)} ms (${(1000 / median(frames)).toFixed(0)} fps)`);
}

async function main() {
  assertDistBuilt();
  const sizes = distSizes();
  printPageLoads();
  printSizes(sizes);

  const server = await startServer({
    root: DIST,
    extraFiles: { [BASELINE_PATH]: baselinePage(sizes.total.raw) },
  });
  const browser = await launchChromium();
  try {
    const lessonUrl = server.url;
    const baselineUrl = server.origin + BASELINE_PATH;
    // Warm up the browser process and the OS file cache; not counted.
    await timeToReady(browser, lessonUrl);
    await timeToReady(browser, baselineUrl);
    const lesson = [];
    const baseline = [];
    for (let i = 0; i < RUNS; i++) {
      lesson.push(await timeToReady(browser, lessonUrl));
      baseline.push(await timeToReady(browser, baselineUrl));
    }
    const fmt = (xs) => xs.map((x) => x.toFixed(0)).join(', ');
    const [ml, mb] = [median(lesson), median(baseline)];
    console.log('');
    console.log(`time from navigation to interactive, headless Chromium, ${RUNS} cold loads each`);
    console.log(`  lesson (wasm app mounted)        median ${ml.toFixed(1).padStart(6)} ms   runs: ${fmt(lesson)}`);
    console.log(`  static HTML page, ${kb(sizes.total.raw).trim()}   median ${mb.toFixed(1).padStart(6)} ms   runs: ${fmt(baseline)}`);
    console.log(`  ratio lesson / static page: ${(ml / mb).toFixed(2)}x`);
    await animation(browser, lessonUrl);
  } finally {
    await browser.close();
    await server.close();
  }
}

await main();
