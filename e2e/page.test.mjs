// The release build in headless Chromium, served with the strict CSP by e2e/server.mjs.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { launchChromium } from './browser.mjs';
import { assertDistBuilt, DIST } from './dist.mjs';
import { LINK_IDS, LessonPage, NODE_IDS } from './lesson-page.mjs';
import { CSP, startServer } from './server.mjs';

const SUB_PATH = '/courses/reliability/idempotency-lab/';
// A host page that embeds the lesson, as an LMS would.
const EMBED_HTML = `<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Embedding page</title><link rel="icon" href="${SUB_PATH}public/favicon.svg"></head><body>
<iframe src="${SUB_PATH}" title="Idempotency Lab" width="800" height="600"></iframe>
</body></html>`;

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
      assert.equal(lesson.response.headers()['content-security-policy'], CSP);
      assert.equal(await lesson.title(), 'Idempotency Lab');
      assert.equal(await lesson.page.title(), 'Idempotency Lab');
    });
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

  test('runs from a sub-path inside an iframe (relative asset paths)', async () => {
    const context = await browser.newContext({ viewport: { width: 1024, height: 768 } });
    const host = new LessonPage(await context.newPage());
    try {
      await host.page.goto(subPathServer.origin + '/embed.html');
      const frame = host.page.frameLocator('iframe');
      await frame.getByTestId('app-ready').waitFor({ timeout: 20_000 });
      assert.equal(await frame.locator('[data-testid^="node-"]').count(), NODE_IDS.length);
      await host.page.waitForLoadState('networkidle');
      assert.deepEqual(host.problems, [], 'no console error, page error or failed request');
    } finally {
      await context.close();
    }
  });
});
