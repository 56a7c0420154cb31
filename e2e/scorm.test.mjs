// The SCORM 1.2 package (make scorm) in an LMS: the package is built from dist/,
// unpacked, and served next to a host page on the same origin (the SCO reaches the
// LMS's API through window.parent). The LMS is scorm-again's Scorm12API (npm, pinned),
// a real SCORM 1.2 run-time, not a stub; the test reads the calls it saw and its data.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { launchChromium } from './browser.mjs';
import { SCENARIOS } from './catalogue.mjs';
import { assertDistBuilt, distFiles, REPO } from './dist.mjs';
import { ARTIFACTS, LessonPage, PROGRESS_KEY } from './lesson-page.mjs';
import { startServer } from './server.mjs';

const ZIP = path.join(REPO, 'target', 'scorm', 'idempotency-lab.zip');
const SCORM12 = path.join(REPO, 'e2e', 'node_modules', 'scorm-again', 'dist', 'scorm12.js');
/** How many scenarios, so how many questions (the score's maximum). */
const N = SCENARIOS.length;

// The LMS's page: the API on its window, then the lesson in a frame. The starting data
// comes in the query (`cmi`: JSON for loadFromJSON), the lesson's address in `src`.
const HOST_HTML = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>LMS</title>
<link rel="icon" href="/content/idempotency-lab/public/favicon.svg"><script src="scorm12.js"></script><script src="host.js" defer></script></head>
<body><h1>An LMS</h1></body></html>`;
const HOST_JS = `
window.calls = [];
const q = new URLSearchParams(location.search);
window.API = new Scorm12API({ autocommit: false, lmsCommitUrl: false });
API.loadFromJSON(JSON.parse(q.get('cmi') || '{}'));
for (const name of ['LMSInitialize', 'LMSCommit', 'LMSFinish']) API.on(name, () => calls.push([name]));
API.on('LMSSetValue.cmi.*', (element, value) => calls.push(['LMSSetValue', element, String(value)]));
const frame = document.createElement('iframe');
frame.title = 'Idempotency Lab';
frame.style.cssText = 'width:100%;height:1200px;border:0';
frame.src = q.get('src');
document.body.append(frame);
`;

describe('the SCORM 1.2 package in an LMS (scorm-again Scorm12API)', { timeout: 180_000 }, () => {
  let unpacked;
  let server;
  let browser;

  before(async () => {
    assertDistBuilt();
    execFileSync('node', [path.join(REPO, 'scripts', 'scorm.mjs')], { cwd: REPO, stdio: 'pipe' });
    unpacked = mkdtempSync(path.join(tmpdir(), 'idempotency-lab-scorm-'));
    execFileSync('unzip', ['-q', ZIP, '-d', unpacked]);
    server = await startServer({
      root: unpacked,
      prefix: '/content/idempotency-lab/',
      extraFiles: {
        '/lms/player.html': HOST_HTML,
        '/lms/host.js': HOST_JS,
        '/lms/scorm12.js': readFileSync(SCORM12),
      },
    });
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    if (unpacked) rmSync(unpacked, { recursive: true, force: true });
  });

  test('the zip holds dist/ and a SCORM 1.2 manifest at its root, with one SCO launching index.html', () => {
    const inZip = distFiles(unpacked);
    const manifest = readFileSync(path.join(unpacked, 'imsmanifest.xml'), 'utf8');
    assert.match(manifest, /<schema>ADL SCORM<\/schema>\s*<schemaversion>1\.2<\/schemaversion>/);
    const scos = [...manifest.matchAll(/<resource\b[^>]*adlcp:scormtype="sco"[^>]*>/g)];
    assert.equal(scos.length, 1, 'one SCO');
    assert.match(scos[0][0], /href="index\.html"/);
    const listed = [...manifest.matchAll(/<file href="([^"]+)"\/>/g)].map((m) => m[1]).sort();
    assert.deepEqual(listed, distFiles(), 'the manifest lists every file of dist/');
    assert.deepEqual(inZip, [...listed, 'imsmanifest.xml'].sort(), 'the zip holds exactly dist/ and the manifest');
  });

  /** Opens the LMS page with `cmi` as the learner's stored data, the lesson at `query`. */
  const openLms = async (cmi, query, { localProgress = null, locale = 'en-US' } = {}) => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale });
    if (localProgress != null) {
      // The browser's own progress (another learner's, on a shared computer).
      await context.addInitScript(([key, value]) => {
        if (location.pathname.startsWith('/content/')) localStorage.setItem(key, value);
      }, [PROGRESS_KEY, localProgress]);
    }
    const host = new LessonPage(await context.newPage());
    const src = `/content/idempotency-lab/index.html${query}`;
    await host.page.goto(`${server.origin}/lms/player.html?cmi=${encodeURIComponent(JSON.stringify(cmi))}&src=${encodeURIComponent(src)}`);
    const frame = host.page.frameLocator('iframe');
    await frame.getByTestId('app-ready').waitFor({ state: 'attached', timeout: 20_000 }).catch((e) => {
      throw new Error(`${e.message}\n${host.problems.join('\n')}`);
    });
    await frame.getByTestId('progress-summary').waitFor();
    return { host, frame, calls: () => host.page.evaluate(() => window.calls) };
  };
  const lms = (host, element) => host.page.evaluate((e) => window.API.LMSGetValue(e), element);

  const show = (t, seen) => t.diagnostic(seen.map((c) => (c.length > 1 ? `${c[0]}(${c[1]}, ${JSON.stringify(c[2])})` : `${c[0]}()`)).join(' → '));

  test('a launch in a Russian browser goes to ru.html first: one session, opened there', async () => {
    const ru = await openLms({}, '', { locale: 'ru-RU' });
    try {
      await ru.host.page.waitForFunction(() => window.calls.some((c) => c[1] === 'cmi.suspend_data'));
      const seen = await ru.calls();
      assert.deepEqual(seen.filter((c) => c[0] === 'LMSInitialize' || c[0] === 'LMSFinish'), [['LMSInitialize']]);
      assert.match(await ru.frame.locator('h1').textContent(), /[\u0400-\u04FF]/);
      assert.ok(ru.host.page.frames().some((f) => f.url().includes('/content/idempotency-lab/ru.html')));
      assert.deepEqual(ru.host.problems, [], 'no console error, page error or failed request');
    } finally {
      await ru.host.close();
    }
  });

  test(`a first launch: LMSInitialize, incomplete, the progress line and a score of 0 of ${N}, LMSCommit`, async (t) => {
    const { host, calls } = await openLms({}, '?lang=en');
    try {
      await host.page.waitForFunction(() => window.calls.some((c) => c[1] === 'cmi.suspend_data'));
      const seen = await calls();
      show(t, seen);
      assert.deepEqual(seen[0], ['LMSInitialize']);
      const set = Object.fromEntries(seen.filter((c) => c[0] === 'LMSSetValue').map((c) => [c[1], c[2]]));
      assert.deepEqual(set, {
        'cmi.core.lesson_status': 'incomplete',
        'cmi.core.exit': 'suspend',
        'cmi.suspend_data': 'w=;a=;p=1',
        'cmi.core.score.min': '0',
        'cmi.core.score.max': String(N),
        'cmi.core.score.raw': '0',
      });
      assert.equal(seen.at(-1)[0], 'LMSCommit', 'every change is committed');
      assert.equal(await lms(host, 'cmi.core.lesson_status'), 'incomplete');
      assert.deepEqual(host.problems, [], 'no console error, page error or failed request');
    } finally {
      await host.close();
    }
  });

  test('a learner resumes from the LMS (not from the browser), finishes the last scenario: completed, the score, LMSFinish on leaving', async (t) => {
    // Every scenario but counter-increment done, two of their questions answered wrong.
    const rest = SCENARIOS.filter((id) => id !== 'counter-increment');
    const line = `w=${rest.join(',')};a=${rest.map((id, i) => `${id}:${i < 2 ? 0 : 1}`).join(',')};p=1`;
    const { host, frame, calls } = await openLms(
      { core: { lesson_status: 'incomplete', score: { raw: String(N - 3) } }, suspend_data: line },
      '?lang=en&scenario=counter-increment&step=decisive',
      { localProgress: 'w=naive-post;a=;p=1' },
    );
    try {
      const summary = () => frame.getByTestId('progress-summary').textContent();
      assert.match(await summary(), new RegExp(`Watched to the end: ${N - 1} of ${N} · Question answered: ${N - 1} of ${N}`), 'the LMS\'s progress, not the browser\'s');

            // The question of counter-increment, answered right (the second answer: 102), then its run to the end.
      await frame.getByTestId('predict').locator('input[value="1"]').check();
      await frame.getByTestId('predict-check').click();
      await frame.getByTestId('predict-verdict').waitFor();
      await frame.getByTestId('predict-continue').click();
      await frame.getByTestId('btn-end').click();
      await host.page.waitForFunction(() => window.API.LMSGetValue('cmi.core.lesson_status') === 'completed');
      assert.match(await summary(), new RegExp(`${N} of ${N} · Question answered: ${N} of ${N}`));
      assert.equal(await lms(host, 'cmi.core.score.raw'), String(N - 2), `${N - 2} of ${N} answered right`);
      assert.equal(await lms(host, 'cmi.core.score.max'), String(N));
      const stored = await lms(host, 'cmi.suspend_data');
      assert.match(stored, /counter-increment:1/);
      assert.equal(
        stored,
        await host.page.frames()[1].evaluate((k) => localStorage.getItem(k), PROGRESS_KEY),
        'the LMS holds the line the page keeps',
      );
      mkdirSync(ARTIFACTS, { recursive: true });
      await frame.getByTestId('progress-summary').scrollIntoViewIfNeeded();
      await host.page.screenshot({ path: path.join(ARTIFACTS, 'scorm-lms-1280.png') });

      // Leaving the lesson: pagehide commits and finishes.
      await host.page.evaluate(() => document.querySelector('iframe').remove());
      await host.page.waitForFunction(() => window.calls.some((c) => c[0] === 'LMSFinish'));
      const seen = await calls();
      show(t, seen);
      assert.deepEqual(seen.at(-1), ['LMSFinish']);
      assert.deepEqual(seen.at(-2), ['LMSCommit']);
      const statuses = seen.filter((c) => c[1] === 'cmi.core.lesson_status').map((c) => c[2]);
      assert.deepEqual(statuses, ['incomplete', 'completed']);
      assert.match(seen.find((c) => c[1] === 'cmi.core.session_time')[2], /^\d{2,4}:\d{2}:\d{2}$/);
      assert.equal(await host.page.evaluate(() => window.API.isTerminated()), true);
      assert.deepEqual(host.problems, [], 'no console error, page error or failed request');
    } finally {
      await host.close();
    }
  });

  test('without an LMS the package is the lesson as always: no API calls, no attribute, progress from the browser', async () => {
    const lesson = await LessonPage.open(browser, `${server.origin}/content/idempotency-lab/index.html?lang=en`, undefined, {}, 'w=naive-post;a=naive-post:1;p=1');
    try {
      assert.equal(await lesson.page.evaluate(() => document.documentElement.hasAttribute('data-lms-progress')), false);
      assert.match(await lesson.page.getByTestId('progress-summary').textContent(), new RegExp(`Watched to the end: 1 of ${N}`));
      assert.deepEqual(lesson.problems, []);
    } finally {
      await lesson.close();
    }
  });
});
