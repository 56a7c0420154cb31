// The release build in headless Chromium, served with the strict CSP by e2e/server.mjs.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { launchChromium } from './browser.mjs';
import { assertDistBuilt, DIST, PAGES } from './dist.mjs';
import { mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import path from 'node:path';

import { LabPage } from './lab-page.mjs';
import { ARTIFACTS, LINK_IDS, LessonPage, NODE_IDS, TEXT_IN, WHOLE } from './lesson-page.mjs';
import { CSP, policyOf, startServer } from './server.mjs';

const SUB_PATH = '/courses/reliability/idempotency-lab/';
// A host page that embeds the lesson, as an LMS would.
const EMBED_HTML = `<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Embedding page</title><link rel="icon" href="${SUB_PATH}public/favicon.svg"></head><body>
<iframe src="${SUB_PATH}" title="Idempotency Lab" width="800" height="600"></iframe>
</body></html>`;

/** Reads `read()` until `done` holds of what it read (a condition, not a pause); returns that. */
async function until(read, done, what, timeout = 10_000) {
  const end = Date.now() + timeout;
  for (;;) {
    const got = await read();
    if (done(got)) return got;
    assert.ok(Date.now() < end, `${what} within ${timeout} ms: ${JSON.stringify(got)}`);
  }
}

describe('lesson page (release build, strict CSP)', { timeout: 120_000 }, () => {
  let server;
  let subPathServer;
  let browser;

  before(async () => {
    assertDistBuilt();
    server = await startServer({ root: DIST });
    subPathServer = await startServer({
      root: DIST,
      prefix: SUB_PATH,
      extraFiles: { '/embed.html': EMBED_HTML },
    });
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    await subPathServer?.close();
  });

  const withPage = async (viewport, fn, url = server.url) => {
    const lesson = await LessonPage.open(browser, url, viewport);
    try {
      await fn(lesson);
      assert.deepEqual(lesson.problems, [], 'no console error, page error or failed request');
    } finally {
      await lesson.close();
    }
  };

  test('loads under the CSP header with no console error or failed request', async () => {
    await withPage({ width: 1440, height: 900 }, async (lesson) => {
      assert.equal(lesson.response.status(), 200);
      // The page's own policy (its inline style and boot.js by hash), which is the strict one's
      // sources plus those two hashes.
      const policy = lesson.response.headers()['content-security-policy'];
      assert.equal(policy, policyOf(readFileSync(path.join(DIST, PAGES.en), 'utf8')));
      assert.equal(policy.replace(/ 'sha256-[A-Za-z0-9+/=]+'/g, ''), CSP);
      assert.equal(await lesson.title(), 'Idempotency Lab');
      assert.equal(await lesson.page.title(), 'Idempotency Lab');
      // Not even a warning (once: the wasm preload's ignored `integrity` attribute), by the
      // time the page has used what it fetched last: the scenario's text.
      await lesson.page.locator(TEXT_IN).first().waitFor({ state: 'attached' });
      assert.deepEqual(lesson.warnings, [], 'no console warning on load');
    }, server.url + PAGES.en);
  });

  test("under a host's own strict policy (no hashes) the page is styled and its lab plays, in both languages", async () => {
    // As many LMSs and CDNs send: the page's inline style and boot.js are refused, and
    // its fallback script (build/prerender.mjs) brings both as files.
    const host = await startServer({ root: DIST, policy: () => CSP });
    try {
      // From the bare address the chooser's inline script is refused too, and its file
      // sends the reader on (build/prerender.mjs, `chooser`).
      for (const [lang, page] of [['en', ''], ['ru', 'ru.html']]) {
        const refused = page === '' ? 3 : 2;
        const lab = await LabPage.open(browser, `${host.url}${page}?scenario=naive-post`, { width: 1440, height: 900 }, {}, 'p=0');
        try {
          assert.equal(lab.response.headers()['content-security-policy'], CSP);
          assert.equal(await lab.page.evaluate(() => document.documentElement.lang), lang);
          // The style sheet applies: the page's font and the topology's node colour.
          const styled = await lab.page.evaluate(() => ({
            bg: getComputedStyle(document.documentElement).getPropertyValue('--bg').trim(),
            margin: getComputedStyle(document.body).margin,
          }));
          assert.notEqual(styled.bg, '', `the style sheet applies in ${lang}: ${JSON.stringify(styled)}`);
          assert.notEqual(styled.margin, '8px', `the body is styled in ${lang}`);
          await lab.stepForward();
          await lab.stepForward();
          assert.equal((await lab.counter()).k, 2, `the lab steps in ${lang}`);
          // Only the two refusals of the inline elements, nothing else.
          const other = lab.problems.filter((p) => !/Content Security Policy/.test(p));
          assert.deepEqual(other, [], `no other problem in ${lang}`);
          assert.equal(lab.problems.length, refused, `the inline style and boot.js refused, once each: ${lab.problems.join(' | ')}`);
        } finally {
          await lab.close();
        }
      }
    } finally {
      await host.close();
    }
  });

  test('draws the five nodes and the four links of the topology', async () => {
    await withPage({ width: 1440, height: 900 }, async (lesson) => {
      assert.deepEqual((await lesson.nodeIds()).sort(), [...NODE_IDS].sort());
      assert.deepEqual((await lesson.linkIds()).sort(), [...LINK_IDS].sort());
      for (const id of NODE_IDS) {
        const box = await lesson.nodeBox(id);
        assert.ok(box && box.width > 20 && box.height > 20, `${id} is drawn: ${JSON.stringify(box)}`);
      }
      for (const id of LINK_IDS) {
        const link = await lesson.linkGeometry(id);
        assert.ok(link.length > 10, `${id} has a length: ${JSON.stringify(link)}`);
        assert.ok(link.visible && link.stroke !== 'none', `${id} is stroked: ${JSON.stringify(link)}`);
        assert.ok(link.startsAtFrom && link.endsAtTo, `${id} joins its two nodes: ${JSON.stringify(link)}`);
      }
      await lesson.screenshot('page-1440.png');
    });
  });

  test('fits a 360 px wide screen without horizontal scrolling', async () => {
    await withPage({ width: 360, height: 740 }, async (lesson) => {
      const width = await lesson.scrollWidth();
      assert.ok(width <= 360, `document.documentElement.scrollWidth is ${width}`);
      for (const id of NODE_IDS) {
        const box = await lesson.nodeBox(id);
        assert.ok(box.x >= 0 && box.x + box.width <= 360, `${id} is inside the viewport`);
      }
      await lesson.screenshot('page-360.png');
    });
  });

  test('inside an LMS iframe of another origin it posts its height whenever it changes', async () => {
    const context = await browser.newContext({ viewport: { width: 1024, height: 768 } });
    const host = new LessonPage(await context.newPage());
    // A host page of another origin (localhost, not 127.0.0.1, another port) that acts as
    // Canvas does: it resizes the frame on lti.frameResize and records every message. Its
    // own tiny server, so it is not under the lesson's CSP.
    const html = `<!doctype html><html><head><title>LMS</title></head><body style="margin:0">
<iframe id="lesson" src="${subPathServer.url}?embed=1&lang=en&scenario=idempotency-key" title="Idempotency Lab" style="width:100%;height:300px;border:0"></iframe>
<script>
  window.messages = [];
  addEventListener('message', (e) => {
    const data = typeof e.data === 'string' ? JSON.parse(e.data) : e.data;
    window.messages.push({ origin: e.origin, raw: typeof e.data, data });
    if (data.subject === 'lti.frameResize') document.getElementById('lesson').style.height = data.height + 'px';
  });
</script></body></html>`;
    const lmsServer = createServer((req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end(html));
    await new Promise((resolve) => lmsServer.listen(0, '127.0.0.1', resolve));
    const lms = `http://localhost:${lmsServer.address().port}/course/unit-1`;
    try {
      await host.page.goto(lms);
      const frame = host.page.frameLocator('iframe');
      await frame.getByTestId('app-ready').waitFor({ timeout: 20_000 });
      await frame.locator(WHOLE).first().waitFor({ state: 'attached' });
      const messages = () => host.page.evaluate(() => window.messages);
      // The frame's height on the host page, and the lesson's height inside it (another origin).
      const fits = async () => ({
        frame: await host.page.evaluate(() => document.getElementById('lesson').getBoundingClientRect().height),
        content: await host.page.frames()[1].evaluate(() => document.documentElement.scrollHeight),
        inner: await host.page.frames()[1].evaluate(() => window.innerHeight),
      });
      // The frame was resized to the lesson: it no longer scrolls inside.
      await host.page.waitForFunction(() => {
        const f = document.getElementById('lesson');
        return f.getBoundingClientRect().height > 1000;
      });
      // The messages and the frame's height read in one go: the lesson may still grow
      // (and post again) between two reads.
      const { first, frameHeight } = await host.page.evaluate(() => ({
        first: window.messages,
        frameHeight: document.getElementById('lesson').getBoundingClientRect().height,
      }));
      const lti = first.filter((m) => m.data.subject === 'lti.frameResize');
      const own = first.filter((m) => m.data.type === 'idempotency-lab:height');
      assert.ok(lti.length > 0 && own.length === lti.length, `both messages, as often: ${JSON.stringify(first)}`);
      assert.equal(lti[0].raw, 'string', 'lti.frameResize is a JSON string, as Canvas and Sakai expect');
      assert.equal(own[0].raw, 'object');
      assert.equal(lti[0].origin, subPathServer.origin);
      assert.deepEqual(Object.keys(lti.at(-1).data).sort(), ['height', 'subject']);
      const before = lti.at(-1).data.height;
      assert.equal(own.at(-1).data.height, before);
      assert.equal(Math.round(frameHeight), before, 'the host set the frame to the posted height');
      // A narrower window: the lesson reflows, taller; the page says so, once per change.
      await host.page.setViewportSize({ width: 420, height: 768 });
      await host.page.waitForFunction((h) =>
        window.messages.filter((m) => m.data.subject === 'lti.frameResize').at(-1).data.height > h, before);
      // Settled: the frame fits the reflowed lesson (the last height posted is its height).
      const settled = ({ frame: fh, content, inner }) => Math.abs(fh - content) <= 1 && content <= inner;
      const { frame: fh, content, inner } = await until(fits, settled, 'the frame fits the lesson');
      const after = (await messages()).filter((m) => m.data.subject === 'lti.frameResize');
      const heights = after.map((m) => m.data.height);
      assert.ok(heights.every((h, i) => i === 0 || h !== heights[i - 1]), `only changes are posted: ${heights}`);
      assert.ok(settled({ frame: fh, content, inner }), `the frame fits the lesson: frame ${fh}, content ${content}, inner ${inner}`);
      mkdirSync(ARTIFACTS, { recursive: true });
      await host.page.screenshot({ path: path.join(ARTIFACTS, 'lms-iframe-420.png') });
      // Copy link in a frame without clipboard permission: the link is offered in a
      // selectable field, next to the button, with no console error.
      await frame.getByTestId('btn-copy-link').click();
      const field = frame.getByTestId('share-link');
      await field.waitFor();
      const link = new URL(await field.inputValue());
      assert.equal(link.searchParams.get('scenario'), 'idempotency-key', 'the field holds the lesson\'s own link');
      assert.equal(await field.evaluate((el) => el.readOnly && el.selectionEnd - el.selectionStart === el.value.length), true, 'the link is selected, ready to copy');
      assert.deepEqual(host.problems, [], 'no console error, page error or failed request');
    } finally {
      await context.close();
      lmsServer.closeAllConnections();
      await new Promise((resolve) => lmsServer.close(resolve));
    }
  });

  test('a panic shows a box in the reader\'s language with a reload link to the same state', async () => {
    for (const [lang, title, reload] of [['ru', 'Лаборатория остановилась', 'Перезагрузить урок'], ['en', 'The lab has stopped', 'Reload the lesson']]) {
      const lesson = await LessonPage.open(browser, `${server.url}?lang=${lang}&scenario=ttl-expiry&seed=5`, { width: 360, height: 740 });
      try {
        await lesson.page.getByTestId('btn-step').click();
        await lesson.page.waitForFunction(() => /^\s*1\s*\//.test(document.querySelector('[data-testid=step-counter]').textContent));
        const state = lesson.page.url();
        assert.match(state, /step=1/);
        // The test-only trigger: an event only a script of the page's origin can send.
        await lesson.page.evaluate(() => setTimeout(() => dispatchEvent(new Event('idempotency-lab:panic'))));
        const box = lesson.page.getByTestId('crash');
        await box.waitFor({ timeout: 5_000 });
        assert.equal(await box.locator('h2').textContent(), title);
        assert.equal(await box.getAttribute('role'), 'alert');
        assert.equal(await lesson.page.getByTestId('crash-reload').textContent(), reload);
        await lesson.focusIs('[data-testid=crash-reload]');
        assert.equal(await lesson.page.getByTestId('crash-link').textContent(), state, 'the link to report is the current state');
        assert.match(await box.textContent(), /idempotency-lab:panic/, 'what happened');
        const b = await box.boundingBox();
        assert.ok(b.x >= 0 && b.x + b.width <= 360 && b.y >= 0, `the box is on screen: ${JSON.stringify(b)}`);
        if (lang === 'ru') await lesson.page.screenshot({ path: path.join(ARTIFACTS, 'crash-360.png') });
        // The module is gone (its trap is the one expected error); reloading restores the state.
        assert.deepEqual(lesson.problems, ['page error: unreachable'], 'only the trap');
        lesson.problems.length = 0;
        await lesson.page.getByTestId('crash-reload').click();
        await lesson.page.waitForSelector('[data-testid="app-ready"]');
        await lesson.page.waitForFunction(() => /^\s*1\s*\//.test(document.querySelector('[data-testid=step-counter]').textContent));
        assert.equal(await lesson.page.getByTestId('crash').count(), 0);
        await lesson.page.locator(TEXT_IN).first().waitFor({ state: 'attached' });
        assert.deepEqual(lesson.problems, []);
      } finally {
        await lesson.close();
      }
    }
  });

  test('runs from a sub-path inside an iframe (relative asset paths)', async () => {
    const context = await browser.newContext({ viewport: { width: 1024, height: 768 } });
    const host = new LessonPage(await context.newPage());
    try {
      await host.page.goto(subPathServer.origin + '/embed.html');
      const frame = host.page.frameLocator('iframe');
      await frame.getByTestId('app-ready').waitFor({ timeout: 20_000 });
      // The lab is below the frame's fold here: its topology comes with the second stage (`Lab::whole`).
      await frame.locator(WHOLE).first().waitFor({ state: 'attached' });
      assert.equal(await frame.locator('[data-testid^="node-"]').count(), NODE_IDS.length);
      await frame.locator(TEXT_IN).first().waitFor({ state: 'attached' });
      assert.deepEqual(host.problems, [], 'no console error, page error or failed request');
    } finally {
      await context.close();
    }
  });
});
