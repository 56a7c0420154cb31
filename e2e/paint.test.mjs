// Issue 13, item 3: the lesson's text at first paint. Each language has its page with the
// prose prerendered (en.html English, ru.html Russian): the text is in the HTTP
// response before any script runs, it reads without JavaScript, and without WebAssembly
// the whole lesson stays with one line saying the lab needs it. The module enhances the
// page (the prose nodes stay, nothing above the lab moves, no id twice); deep links,
// the browser's language and the language switch land on the right page, and the bare
// address (index.html, a chooser of a few hundred bytes) costs a reader of either language
// at most 2 KB more than their page's own load (issue 28, item 4).

import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';

import { BARE_EXTRA_BYTES, DIST, LANGS, PAGES, compressedSizes } from './dist.mjs';
import { CYRILLIC, LabPage, releaseBuildHarness } from './lab-page.mjs';
import { ARTIFACTS, LessonPage } from './lesson-page.mjs';

/** The ids and titles of the prose sections of `lang`, from the fragment the page is built from. */
function sectionsOf(lang) {
  const fragment = readFileSync(path.join(DIST, 'public', 'lesson', `${lang}.html`), 'utf8');
  return [...fragment.matchAll(/<section class="prose" id="([^"]+)"[^>]*><h2 id="[^"]+">([^<]+)</g)].map(([, id, title]) => ({
    id,
    title,
  }));
}

/** The page a URL is on: its file name, `index.html` for the bare directory. */
const fileOf = (url) => new URL(url).pathname.split('/').pop() || 'index.html';

/**
 * A page at 1440 px whose wasm module is held back until `release()` is called: what
 * the reader sees before the module starts. The caller closes `ctx`.
 */
async function withModuleHeld(browser) {
  const ctx = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  let release;
  const held = new Promise((r) => (release = r));
  await ctx.route('**/*_bg.wasm', async (route) => {
    await held;
    await route.continue();
  });
  return { ctx, lesson: new LessonPage(await ctx.newPage()), release };
}

/** Every id that is on the page more than once. */
const duplicateIds = (page) =>
  page.evaluate(() => {
    const seen = new Map();
    for (const el of document.querySelectorAll('[id]')) seen.set(el.id, (seen.get(el.id) ?? 0) + 1);
    return [...seen].filter(([, n]) => n > 1).map(([id]) => id);
  });

/** A fresh page in its own context; `init` runs before any script of the page. */
async function openRaw(browser, url, { viewport = { width: 1440, height: 900 }, context = {}, init } = {}) {
  const ctx = await browser.newContext({ ...context, viewport });
  if (init) await ctx.addInitScript(init);
  const lesson = new LessonPage(await ctx.newPage());
  await lesson.page.goto(url);
  return lesson;
}

describe('the text at first paint (release build, strict CSP)', { timeout: 300_000 }, () => {
  const env = releaseBuildHarness();

  for (const lang of LANGS) {
    const page = PAGES[lang];
    const sections = sectionsOf(lang);

    test(`${lang}: ${page} holds the whole lesson in its HTML, before any script runs`, async () => {
      assert.ok(sections.length >= 10, `sections of ${lang}: ${sections.length}`);
      const res = await fetch(env.server.url + page);
      assert.equal(res.status, 200);
      const html = await res.text();
      assert.match(html, new RegExp(`<html lang="${lang}"`));
      for (const { id, title } of sections) {
        assert.ok(html.includes(`id="${id}"`) && html.includes(title), `${id}: "${title}" in ${page}`);
      }
      assert.ok(html.includes('data-testid="lab-off"') && html.includes('<noscript>'), 'the lines for a reader without the lab');
      assert.ok(!html.includes('data-prerender'), 'every slot of the shell is filled');
      const text = html.replace(/<[^>]+>/g, ' ');
      if (lang === 'en') assert.doesNotMatch(text.replace(/Русский|RU/g, ''), CYRILLIC);
      else assert.match(text, CYRILLIC);
    });

    test(`${lang}: without JavaScript, the whole lesson reads and one line says the lab needs it`, async () => {
      const lesson = await openRaw(env.browser, env.server.url + page, { context: { javaScriptEnabled: false } });
      try {
        for (const { id } of sections) {
          assert.ok(await lesson.page.locator(`#${id} h2`).isVisible(), `section ${id} visible`);
        }
        assert.ok(await lesson.page.getByTestId('lab-noscript').isVisible(), 'the noscript line');
        assert.equal(await lesson.page.getByTestId('lab-off').isVisible(), false, 'not the WebAssembly line');
        assert.equal(await lesson.page.getByTestId('try-lab').isVisible(), false, 'no Try button that cannot work');
        assert.equal(await lesson.page.getByTestId('lang-ru').isVisible(), false, 'no language switch that cannot work');
        assert.equal(await lesson.page.locator('[data-testid="app-ready"]').count(), 0);
        await lesson.screenshot(`paint-nojs-${lang}.png`);
        // No request refused either (the page has no preload link that scripting off would refuse).
        assert.deepEqual(lesson.problems, []);
      } finally {
        await lesson.close();
      }
    });

    for (const [how, options] of [
      ['a browser without WebAssembly', { init: () => delete globalThis.WebAssembly }],
      ['a module that cannot be loaded', { route: true }],
    ]) {
      test(`${lang}: with ${how}, the whole lesson and the line that the lab needs WebAssembly`, async () => {
        const ctx = await env.browser.newContext({ viewport: { width: 360, height: 800 } });
        if (options.init) await ctx.addInitScript(options.init);
        if (options.route) await ctx.route('**/*_bg.wasm', (route) => route.fulfill({ status: 404, body: 'gone' }));
        const lesson = new LessonPage(await ctx.newPage());
        try {
          await lesson.page.goto(env.server.url + `?lang=${lang}`);
          await lesson.page.waitForSelector('html.no-lab');
          assert.equal(fileOf(lesson.page.url()), page);
          const line = lesson.page.getByTestId('lab-off');
          assert.ok(await line.isVisible(), 'the line is shown');
          const said = await line.textContent();
          assert.match(said, /WebAssembly/);
          assert.equal(CYRILLIC.test(said), lang === 'ru', `the line in ${lang}: ${said}`);
          for (const { id } of sections) {
            assert.ok(await lesson.page.locator(`#${id} h2`).isVisible(), `section ${id} visible`);
          }
          assert.equal(await lesson.page.getByTestId('try-lab').isVisible(), false, 'no Try button that cannot work');
          assert.equal(await lesson.page.locator('[data-testid="app-ready"]').count(), 0);
          const errors = lesson.problems.filter((p) => !(options.route && /404|_bg\.wasm/.test(p)));
          assert.deepEqual(errors, [], 'no page error, no console error');
          assert.ok(!lesson.problems.some((p) => p.startsWith('page error')), lesson.problems.join('\n'));
          if (options.init) {
            // The language switch opens the other language's page, lab or no lab.
            const other = lang === 'ru' ? 'en' : 'ru';
            await lesson.page.getByTestId(`lang-${other}`).click();
            await lesson.page.waitForURL((u) => fileOf(u.href) === PAGES[other] && u.searchParams.get('lang') === other);
            await lesson.page.waitForSelector('html.no-lab');
            assert.equal(await lesson.page.getAttribute('html', 'lang'), other);
            await lesson.page.goBack();
            await lesson.page.waitForSelector('html.no-lab');
            await lesson.page.locator('#lab').scrollIntoViewIfNeeded();
            mkdirSync(ARTIFACTS, { recursive: true });
            await lesson.page.screenshot({ path: path.join(ARTIFACTS, `paint-nowasm-${lang}.png`) });
          }
        } finally {
          await ctx.close();
        }
      });
    }

    test(`${lang}: the module enhances the page: the prose stays, nothing above the lab moves, no id twice`, async () => {
      const { ctx, lesson, release } = await withModuleHeld(env.browser);
      try {
        await lesson.page.goto(env.server.url + page, { waitUntil: 'domcontentloaded' });
        // The module is held back: the text is there without it.
        const place = () =>
          lesson.page.evaluate(() => {
            const top = (sel) => Math.round(document.querySelector(sel).getBoundingClientRect().top);
            return { h1: top('h1'), hero: top('.hero'), first: top('section.prose'), lab: top('#lab') };
          });
        await lesson.page.getByTestId('prose-before').locator('section.prose').first().waitFor();
        assert.ok(await lesson.page.locator('h1').isVisible());
        const before = await place();
        await lesson.page.evaluate(() => {
          document.querySelector('[data-testid=prose-before]').__kept = true;
          document.querySelector('[data-testid=prose-after]').__kept = true;
        });
        release();
        await lesson.waitUntilReady();
        assert.deepEqual(await place(), before, 'the header, the prose and the lab start where they were');
        assert.ok(
          await lesson.page.evaluate(
            () => document.querySelector('[data-testid=prose-before]').__kept && document.querySelector('[data-testid=prose-after]').__kept,
          ),
          'the prerendered prose is the same nodes, not drawn again',
        );
        assert.deepEqual(await duplicateIds(lesson.page), []);
        assert.equal(await lesson.page.getByTestId('lab-off').count(), 0, 'the placeholder is gone');
        assert.ok(await lesson.page.getByTestId('scenario-title').isVisible());
        assert.deepEqual(lesson.problems, []);
      } finally {
        await ctx.close();
      }
    });
  }

  test('the bare address follows the browser language; lang= of a link wins, on either page', async () => {
    for (const [locale, url, landing, lang] of [
      ['ru-RU', '', 'ru.html', 'ru'],
      ['en-US', '', 'en.html', 'en'],
      ['de-DE', '', 'en.html', 'en'],
      ['en-US', '?lang=ru', 'ru.html', 'ru'],
      ['ru-RU', '?lang=en', 'en.html', 'en'],
      ['ru-RU', 'index.html?lang=ru-RU#lab', 'ru.html', 'ru'],
      ['ru-RU', 'ru.html?lang=EN-gb', 'en.html', 'en'],
      ['en-US', 'ru.html', 'ru.html', 'ru'],
      ['ru-RU', 'en.html', 'en.html', 'en'],
    ]) {
      const ctx = await env.browser.newContext({ locale, viewport: { width: 1440, height: 900 } });
      const lesson = new LessonPage(await ctx.newPage());
      try {
        await lesson.page.goto(env.server.url + url);
        await lesson.waitUntilReady();
        assert.equal(fileOf(lesson.page.url()), landing, `${locale} ${url}`);
        assert.equal(await lesson.page.getAttribute('html', 'lang'), lang, `${locale} ${url}`);
        const h1 = await lesson.page.locator('h1').textContent();
        assert.equal(CYRILLIC.test(h1), lang === 'ru', `${locale} ${url}: ${h1}`);
        assert.deepEqual(lesson.problems, []);
      } finally {
        await ctx.close();
      }
    }
  });

  // What a load transfers, as the budget counts it: the gzip bytes of every file of dist/
  // the page fetched (e2e/server.mjs sends them uncompressed; a host would compress them).
  const transferred = async (locale, url) => {
    const ctx = await env.browser.newContext({ locale, viewport: { width: 1440, height: 900 } });
    const lesson = new LessonPage(await ctx.newPage());
    const files = [];
    lesson.page.on('requestfinished', (r) => {
      const u = new URL(r.url());
      if (u.origin === new URL(env.server.url).origin) files.push(decodeURIComponent(u.pathname).replace(/^\//, '') || 'index.html');
    });
    try {
      await lesson.page.goto(env.server.url + url);
      await lesson.waitUntilReady();
      const lang = await lesson.page.getAttribute('html', 'lang');
      const gzip = files.reduce((n, f) => n + compressedSizes(readFileSync(path.join(DIST, f))).gzip, 0);
      return { lang, files, gzip };
    } finally {
      await ctx.close();
    }
  };

  test(`from the bare address a reader of either language transfers at most their page's own load + ${BARE_EXTRA_BYTES} bytes gzip`, async (t) => {
    for (const [locale, url, lang] of [
      ['ru-RU', '', 'ru'],
      ['en-US', '?lang=ru', 'ru'],
      ['en-US', '', 'en'],
      ['ru-RU', '?lang=en', 'en'],
    ]) {
      const own = await transferred(locale, PAGES[lang] + url);
      const bare = await transferred(locale, url);
      t.diagnostic(`${locale} '${url}': ${bare.gzip} bytes gzip from the bare address, ${own.gzip} from ${PAGES[lang]}`);
      assert.equal(bare.lang, lang, `${locale} '${url}' lands in ${lang}`);
      const other = PAGES[lang === 'ru' ? 'en' : 'ru'];
      assert.ok(!bare.files.includes(other), `${locale} '${url}': ${other} is not fetched: ${bare.files.join(', ')}`);
      assert.ok(
        bare.gzip <= own.gzip + BARE_EXTRA_BYTES,
        `${locale} '${url}': ${bare.gzip} bytes gzip from the bare address, more than ${PAGES[lang]}'s ${own.gzip} + ${BARE_EXTRA_BYTES}: ${bare.files.join(', ')}`,
      );
    }
  });

  test('a deep link lands on its page at its step, scrolled to the lab', async () => {
    for (const lang of LANGS) {
      const query = `?lang=${lang}&scenario=ttl-expiry&step=5&seed=3&cmd=2:ack`;
      const lab = await LabPage.openLab(env.browser, env.server, query);
      try {
        assert.equal(fileOf(lab.page.url()), PAGES[lang]);
        assert.deepEqual(await lab.counter().then((c) => c.k), 5);
        assert.equal(lab.params().scenario, 'ttl-expiry');
        assert.equal(lab.params().cmd, '2:ack');
        await lab.page.waitForFunction(() => Math.abs(document.getElementById('lab').getBoundingClientRect().top) < 2);
        assert.deepEqual(await duplicateIds(lab.page), []);
        assert.deepEqual(lab.problems, []);
      } finally {
        await lab.close();
      }
    }
  });

  test('the language switch writes the other language in place, names its page, and back', async () => {
    await env.withLab('?lang=en&scenario=naive-post&step=3', async (lab) => {
      const ru = sectionsOf('ru');
      const en = sectionsOf('en');
      await lab.byId('lang-ru').click();
      await lab.page.waitForFunction((t) => document.querySelector('#why-retries h2')?.textContent === t, ru[0].title);
      assert.match(await lab.page.locator('h1').textContent(), CYRILLIC);
      assert.equal(await lab.byId('lang-ru').getAttribute('aria-pressed'), 'true');
      await lab.focusIs('[data-lang=ru]', 'the focus stays on the switch');
      assert.equal(await lab.page.locator(`#${ru.at(-1).id} h2`).textContent(), ru.at(-1).title, 'the prose after the lab too');
      await lab.page.waitForFunction(() => location.pathname.endsWith('/ru.html') && location.search.includes('lang=ru'));
      assert.equal((await lab.counter()).k, 3, 'the lab stays at its step');
      assert.deepEqual(await duplicateIds(lab.page), []);
      // A reload opens the Russian page directly.
      await lab.page.reload();
      await lab.waitUntilReady();
      assert.equal(await lab.page.getAttribute('html', 'lang'), 'ru');
      await lab.byId('lang-en').click();
      await lab.page.waitForFunction((t) => document.querySelector('#why-retries h2')?.textContent === t, en[0].title);
      await lab.page.waitForFunction(() => location.pathname.endsWith('/en.html') && location.search.includes('lang=en'));
      assert.doesNotMatch(await lab.page.locator('h1').textContent(), CYRILLIC);
    });
  });

  test('embed=1 never shows the prose, before or after the module starts', async () => {
    const { ctx, lesson, release } = await withModuleHeld(env.browser);
    try {
      await lesson.page.goto(env.server.url + PAGES.ru + '?lang=ru&embed=1&scenario=naive-post', { waitUntil: 'domcontentloaded' });
      assert.equal(await lesson.page.locator('#why-retries').isVisible(), false, 'no prose before the module');
      assert.equal(await lesson.page.locator('h1').isVisible(), false, 'no header before the module');
      release();
      await lesson.waitUntilReady();
      assert.equal(await lesson.page.locator('#why-retries').count(), 0, 'no prose after');
      assert.equal(await lesson.page.locator('h1').count(), 0, 'no header after');
      assert.ok(await lesson.page.getByTestId('scenario-title').isVisible());
      assert.deepEqual(lesson.problems, []);
    } finally {
      await ctx.close();
    }
  });
});
