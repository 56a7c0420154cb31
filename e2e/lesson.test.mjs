// The lesson around the lab (issue 5) in headless Chromium against the release
// build, served with the strict CSP: the prose of both languages, predict-then-reveal
// by keyboard, progress across a reload, the ADR calculator, scenario links, the code
// pane, what a page load fetches, and a lesson text that fails to load.

import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';

import { SCENARIOS } from './catalogue.mjs';
import { PAGES, pageLoadFiles } from './dist.mjs';
import { CYRILLIC, LabPage, releaseBuildHarness } from './lab-page.mjs';
import { ARTIFACTS } from './lesson-page.mjs';

/** How many scenarios the catalogue has: the progress counts' total. */
const N = SCENARIOS.length;

const q = (params) => '?' + new URLSearchParams({ seed: '1', ...params }).toString();

/**
 * Texts that stay as they are in Russian: product names, protocol and API names,
 * identifiers. A Russian-mode text block made only of these (and digits, signs) is fine.
 */
const AS_IS =
  /\b(Redis|Postgres(QL)?|Apache|Kafka|RabbitMQ|Stripe|Square|PayPal|Amazon|SQS|FIFO|DynamoDB|etcd|Flink|Spring|MySQL|IETF|HTTP|RFC|API|UUID|TTL|ADR|POST|PUT|PATCH|GET|HEAD|DELETE|JSON|SHA-256|If-Match|Idempotency-Key|PayPal-Request-Id|MessageDeduplicationId|HashMap|RU|EN|ms|ID|id|OK|KB|MB|GB)\b/g;

describe('the lesson (release build, strict CSP)', { timeout: 300_000 }, () => {
  const env = releaseBuildHarness();

  /**
   * Visible text blocks of the page, each with its own text minus code (code and
   * identifiers are the same in both languages).
   */
  const textBlocks = (page) =>
    page.evaluate(() =>
      [...document.querySelectorAll('h1,h2,h3,p,li,th,td,dt,label,legend,button,a,option,summary')]
        .filter((el) => el.getClientRects().length > 0 || el.tagName === 'OPTION')
        .filter((el) => !el.closest('pre, .code, svg, .sequence, .pane table'))
        .map((el) => {
          const copy = el.cloneNode(true);
          copy.querySelectorAll('code, p, li, ul, ol, label, button, a, select').forEach((c) => c.remove());
          return { where: el.closest('[id]')?.id ?? el.tagName, text: copy.textContent.replace(/\s+/g, ' ').trim() };
        })
        .filter((b) => b.text.length > 0),
    );

  test('Russian mode is Russian in every block of text; English mode has no Cyrillic at all', async () => {
    await env.withLesson(q({ lang: 'ru', scenario: 'idempotency-key' }), async (lab) => {
      await lab.byId('about').locator('p').first().waitFor();
      const untranslated = (await textBlocks(lab.page))
        .filter((b) => /[A-Za-z]{3,}/.test(b.text.replace(/\d+/g, ' ').replace(AS_IS, '')) && !CYRILLIC.test(b.text))
        .map((b) => `${b.where}: ${b.text.slice(0, 80)}`);
      assert.deepEqual(untranslated, [], 'every block of text with words in it is Russian');
      const sections = await lab.page.locator('section.prose').count();
      assert.equal(sections, 13, 'all thirteen sections are on the page');

      await lab.switchLang('en');
      await lab.page.waitForFunction((n) => !/[А-Яа-яЁё]/.test(document.body.innerText) &&
        document.querySelectorAll('section.prose').length === n && document.querySelector('[data-testid=about] p'), sections);
      assert.deepEqual(await lab.cyrillicLines(), [], 'no Cyrillic left in English mode');
      assert.match(await lab.page.locator('#h-why-retries').textContent(), /Why retries are inevitable/);

      await lab.switchLang('ru');
      await lab.page.waitForFunction(() => /Почему/.test(document.querySelector('#h-why-retries')?.textContent ?? ''));
    });
  });

  test('the prose fits its column at 360 and 1440 px: tables wrap, nothing scrolls sideways', async () => {
    for (const viewport of [{ width: 360, height: 740 }, { width: 1440, height: 900 }]) {
      await env.withLesson(q({ lang: 'ru', scenario: 'idempotency-key' }), async (lab) => {
        const tables = await lab.page.evaluate(() =>
          [...document.querySelectorAll('section.prose .table')].map((box) => ({
            id: box.closest('section').id,
            table: Math.round(box.querySelector('table').getBoundingClientRect().width),
            box: box.clientWidth,
          })),
        );
        assert.ok(tables.length >= 5, 'the sections have their tables');
        const wide = tables.filter((t) => t.table > t.box + 1);
        assert.deepEqual(wide, [], `at ${viewport.width} px every table fits its column`);
        assert.ok((await lab.scrollWidth()) <= viewport.width, 'no horizontal scroll');
        await lab.page.locator('#real-world').scrollIntoViewIfNeeded();
        mkdirSync(ARTIFACTS, { recursive: true });
        await lab.page.screenshot({ path: path.join(ARTIFACTS, `lesson-real-world-${viewport.width}.png`) });
      }, { viewport });
    }
  });

  test('predict, then reveal: the question pauses the run and is answered with the keyboard', async () => {
    await env.withLesson(q({ lang: 'en', scenario: 'naive-post', speed: '4' }), async (lab) => {
      assert.equal(await lab.focusBody(), true);
      await lab.page.keyboard.press('Space');
      const form = lab.byId('predict');
      await form.waitFor();
      assert.equal(await lab.playing(), false, 'the run paused at the decisive step');
      const { k } = await lab.counter();
      const decisive = await lab.page.evaluate(async (id) => {
        // The same step as the link to the decisive moment names.
        const a = document.querySelector(`a[data-scenario="${id}"]`);
        return a ? new URL(a.href).searchParams.get('step') : null;
      }, 'naive-post');
      assert.equal(decisive, 'decisive');
      assert.match(await lab.text('narration'), /decisive moment/, `step ${k} is the decisive moment`);
      // Asked before the server has done anything with the retry: no charge told, no charge line lit.
      assert.doesNotMatch(await lab.text('narration'), /processor|ch_\d/i, 'the question comes before the effects');
      assert.doesNotMatch(
        (await lab.page.locator('[data-testid=code-pane] li.cur').textContent().catch(() => '')) ?? '',
        /processor\.charge/,
        'the code pane does not light the charge yet',
      );
      await lab.focusIs('[name=predict]', 'focus is on the answers');
      assert.equal(await form.locator('input[type=radio]').count(), 4);
      // Check with nothing chosen says so beside the button, and goes back to the answers.
      await lab.byId('predict-check').click();
      assert.match(await lab.text('predict-hint'), /Pick an answer first/);
      await lab.focusIs('[name=predict]', 'focus is back on the answers');

      await lab.page.keyboard.press('ArrowDown'); // the second answer: the card is charged again
      await lab.page.keyboard.press('Enter');
      const verdict = lab.byId('predict-verdict');
      await verdict.waitFor();
      assert.match(await verdict.textContent(), /^Correct\./);
      assert.equal(await form.locator('.answer.right input').getAttribute('value'), '1');
      await lab.focusIs('[data-act=continue]', 'focus is on Continue');
      assert.match(await lab.page.locator('#announce').textContent(), /^Correct\./, 'the verdict is announced');
      await lab.page.keyboard.press('Enter');
      await lab.page.waitForFunction(() =>
        document.querySelector('[data-testid="btn-play"]').getAttribute('aria-pressed') === 'true');
      assert.equal(await form.count(), 0, 'the question is gone');
      await lab.focusIs('[data-act=play]', 'focus is on Play');
      assert.match(await lab.text('progress-summary'), new RegExp(`Question answered: 1 of ${N}`));
    });
  });

  test('reading the prose, Space scrolls the page and leaves the lab alone', async () => {
    await env.withLesson(q({ lang: 'en', scenario: 'naive-post' }), async (lab) => {
      await lab.page.evaluate(() => window.scrollTo(0, 0));
      await lab.page.locator('body').click({ position: { x: 5, y: 5 } });
      await lab.page.keyboard.press('Space');
      await lab.page.waitForFunction(() => window.scrollY > 0);
      assert.equal(await lab.playing(), false, 'the lab did not start playing off-screen');
      assert.deepEqual(await lab.counter(), { k: 0, n: (await lab.counter()).n });
    });
  });

  test('a control keeps its state when the lab is built anew for another scenario', async () => {
    await env.withLesson(q({ lang: 'en', scenario: 'naive-post' }), async (lab) => {
      await lab.byId('parallel-n').fill('7');
      await lab.byId('parallel-n').press('Tab');
      await lab.page.waitForFunction(() => /7/.test(document.querySelector('[data-testid=btn-parallel-retries]').textContent));
      await lab.pickScenario('idempotency-key');
      assert.equal(await lab.byId('parallel-n').inputValue(), '7');
      assert.match(await lab.text('btn-parallel-retries'), /7/);
    });
  });

  test('a wrong answer is shown against the right one; the switch turns the questions off', async () => {
    await env.withLesson(q({ lang: 'en', scenario: 'idempotency-key', step: 'decisive' }), async (lab) => {
      const form = lab.byId('predict');
      await form.waitFor();
      await form.locator('input[value="0"]').check();
      await lab.byId('predict-check').click();
      assert.match(await lab.byId('predict-verdict').textContent(), /^Not quite\./);
      assert.equal(await form.locator('.answer.wrong input').getAttribute('value'), '0');
      assert.equal(await form.locator('.answer.right input').getAttribute('value'), '2');
      await lab.byId('predict-continue').click();
      assert.equal(await lab.playing(), false, 'continue after a question met by stepping does not start playing');

      await lab.byId('predict-toggle').uncheck();
      await lab.pickScenario('naive-post');
      await lab.byId('btn-play').click();
      await lab.page.waitForFunction(() =>
        document.querySelector('[data-testid="btn-play"]').getAttribute('aria-pressed') === 'false');
      assert.equal(await lab.byId('predict').count(), 0, 'with the switch off, nothing is asked');
      const { k, n } = await lab.counter();
      assert.equal(k, n, 'the run played to its end');
    });
  });

  test('progress survives a reload, and one click clears it', async () => {
        await env.withLesson(q({ lang: 'en', scenario: 'counter-increment', step: 'decisive' }), async (lab) => {
      await lab.byId('predict').locator('input[value="1"]').check(); // the right answer: 102
      await lab.byId('predict-check').click();
      await lab.toEnd();
      await lab.page.waitForFunction((n) =>
        document.querySelector('[data-testid=progress-summary]').textContent.includes(`Watched to the end: 1 of ${n}`), N);

      await lab.page.reload();
      await lab.waitUntilReady();
      const summary = await lab.text('progress-summary');
      assert.match(summary, new RegExp(`Watched to the end: 1 of ${N} · Question answered: 1 of ${N}`));
      const row = lab.byId('progress-counter-increment').locator('..');
      assert.deepEqual(await row.locator('.tick.on').allTextContents(), ['✓', '✓']);

      await lab.byId('clear-progress').click();
      await lab.page.waitForFunction((n) =>
        document.querySelector('[data-testid=progress-summary]').textContent.includes(
          `Watched to the end: 0 of ${n} · Question answered: 0 of ${n}`), N);
      await lab.focusIs('[data-act=clear]', 'focus stays on the button');
      // Reloaded at the end of a run, the page would count it watched again: start over first.
      await lab.byId('btn-restart').click();
      await lab.waitForStep(0);
      await lab.page.reload();
      await lab.waitUntilReady();
      assert.match(await lab.text('progress-summary'), new RegExp(`0 of ${N} · Question answered: 0 of ${N}`));
    });
  });

  test('after Reset progress a reader who scrolls on stays where they scrolled: neither the notice nor the focus pulls them back', async () => {
    await env.withLesson(q({ lang: 'en', scenario: 'counter-increment' }), async (lab) => {
      const frames = (n) => lab.page.evaluate((n) => new Promise((r) => {
        const next = (k) => (k === 0 ? r() : requestAnimationFrame(() => next(k - 1)));
        next(n);
      }), n);
      await lab.byId('clear-progress').click();
      await lab.byId('notice').first().waitFor();
      await frames(1);
      await lab.page.evaluate(() => scrollTo(0, 0));
      await frames(25);
      assert.equal(await lab.page.evaluate(() => scrollY), 0, 'the page scrolled back to the notice');
      await lab.focusIs('[data-act=clear]', 'the focus is on the button');
    });
  });

  test('the ADR calculator: 10K RPS for 24 h is 864 million keys, 86.4 GB; it recomputes on input', async () => {
    await env.withLesson(q({ lang: 'en' }), async (lab) => {
      const calc = lab.page.locator('form[data-act=calc]');
      const out = (name) => calc.locator(`output[name=${name}]`).textContent();
      assert.equal(await out('keys'), '864\u00a0million');
      assert.equal(await out('memory'), '86.4\u00a0GB');
      assert.equal(await out('latency'), '+40%');
      assert.match(await out('formula'), /^10,000 req\/s × 24 h × 3,600 s = 864,000,000 keys$/);
      assert.match(await out('verdict'), /more than one Redis node/);
      await calc.locator('input[name=rps]').fill('100');
      assert.equal(await out('memory'), '864\u00a0MB');
      assert.match(await out('verdict'), /fits on one Redis node/);
      await calc.locator('input[name=base]').fill('50');
      assert.equal(await out('latency'), '+2%');
      await calc.locator('input[name=rps]').fill('');
      assert.equal(await out('keys'), '—', 'an empty field computes nothing');
      assert.match(await out('verdict'), /Mutating requests per second.*from 0 to 100,000,000/);
      await calc.locator('input[name=ttl]').press('Enter');
      assert.equal(new URL(lab.page.url()).pathname, `/${PAGES.en}`, 'Enter in the form does not navigate');
    });
  });

  test('the calculator shows every input whole at 360 and 1440 px', async () => {
    for (const viewport of [{ width: 360, height: 740 }, { width: 1440, height: 900 }]) {
      await env.withLesson(q({ lang: 'ru' }), async (lab) => {
        const calc = lab.page.locator('form[data-act=calc]');
        await calc.locator('input[name=rps]').fill('1000000000');
        const clipped = await calc.locator('input').evaluateAll((inputs) =>
          inputs.filter((i) => i.scrollWidth > i.clientWidth).map((i) => `${i.name}=${i.value}`));
        assert.deepEqual(clipped, [], `inputs whose value does not fit at ${viewport.width} px`);
        assert.ok((await lab.scrollWidth()) <= viewport.width, 'no horizontal scroll');
      }, { viewport });
    }
  });

  test('a link with scenario, step or cmd opens scrolled to the lab; a plain one at the top', async () => {
    const labTop = (lab) => lab.page.evaluate(() => Math.round(document.getElementById('lab').getBoundingClientRect().top));
    for (const params of [{ scenario: 'ttl-expiry' }, { step: '3' }, { cmd: '0:ack' }]) {
      await env.withLesson(q({ lang: 'en', ...params }), async (lab) => {
        await lab.page.waitForFunction(() => Math.abs(document.getElementById('lab').getBoundingClientRect().top) < 2);
        assert.ok(Math.abs(await labTop(lab)) < 2, `${JSON.stringify(params)}: the lab is at the top of the screen`);
      });
    }
    await env.withLesson(q({ lang: 'en' }), async (lab) => {
      assert.equal(await lab.page.evaluate(() => window.scrollY), 0, 'a link without them opens at the top');
      assert.ok((await labTop(lab)) > 900, 'the lab is below the intro');
    });
  });

  test('a pitfall link opens its scenario at the decisive step; the code pane follows the steps', async () => {
    await env.withLesson(q({ lang: 'en' }), async (lab) => {
      await lab.page.locator('#anti-patterns a[data-scenario="counter-increment"]').first().click();
      await lab.page.waitForFunction(() => new URL(location.href).searchParams.get('scenario') === 'counter-increment');
      await lab.byId('predict').waitFor();
      assert.match(await lab.text('narration'), /decisive moment/);
      const cur = () => lab.page.locator('[data-testid=code-pane] li.cur').textContent();
      // The retry is on its way; the code pane still shows where the first request ended.
      assert.match(await cur(), /return 200/, 'the first request has answered; the retry has not run');
      await lab.byId('predict-continue').click();
      await lab.pickScenario('idempotency-key');
      await lab.waitForStep(0);
      assert.equal(await lab.page.locator('[data-testid=code-pane] li.cur').count(), 0, 'nothing runs at step 0');
      const seen = new Set();
      const { n } = await lab.counter();
      for (let k = 1; k <= n; k++) {
        await lab.byId('btn-step').click();
        await lab.waitForStep(k);
        if (await lab.page.locator('[data-testid=code-pane] li.cur').count()) seen.add(await cur());
      }
      assert.ok(seen.size >= 6, `the highlight moves through the handler: ${[...seen].join(' | ')}`);
      assert.ok(
        [...seen].some((l) => l.startsWith('charge = processor.charge(card, 100, idempotency_key: K1)')),
        [...seen].join(' | '),
      );
    });
  });

  test('a page load fetches its page, which holds the sections, and the text of one scenario, nothing else', async () => {
    for (const lang of ['ru', 'en']) {
      const fetched = [];
      const page = PAGES[lang];
      const lab = await LabPage.openLab(env.browser, env.server, page + q({ lang, scenario: 'ttl-expiry' }), { progress: null });
      try {
        lab.page.on('request', (r) => fetched.push(new URL(r.url()).pathname.slice(1)));
        await lab.page.reload(); // the server says no-store: everything is fetched again
        await lab.waitUntilReady();
        await lab.byId('about').locator('p').first().waitFor();
        assert.equal(new URL(lab.page.url()).pathname.slice(1), page, 'no detour through the other page');
        assert.ok(fetched.includes(page), `${page} fetched`);
        const lesson = fetched.filter((f) => f.startsWith('public/lesson/'));
        assert.deepEqual(lesson.sort(), [`public/lesson/${lang}/ttl-expiry.html`]);
        const model = pageLoadFiles(lang);
        for (const f of fetched) {
          assert.ok(model.has(f) || f.startsWith(`public/lesson/${lang}/`), `${f} is counted by the size budget`);
        }
      } finally {
        await lab.close();
      }
    }
  });

  test('a lesson text that fails to load is a notice; the lab works without it', async () => {
    const lab = await LabPage.openLab(env.browser, env.server, '', { progress: null });
    try {
      await lab.page.route('**/public/lesson/**', (route) => route.fulfill({ status: 503, body: 'down' }));
      await lab.page.goto(env.server.url + q({ lang: 'en', scenario: 'ttl-expiry' }));
      await lab.waitUntilReady();
      await lab.byId('notice').waitFor();
      assert.match(await lab.text('notice'), /lesson text could not be loaded \(public\/lesson\/en\/ttl-expiry\.html\)/);
      // The sections are in the page: a switch of language fetches the other's, which
      // fails too; the text already there stays, with a notice.
      assert.ok(await lab.byId('prose-before').locator('#why-retries').isVisible());
      await lab.byId('lang-ru').click();
      await lab.page.waitForFunction(() => /public\/lesson\/ru\.html/.test(document.querySelector('[data-testid=notice]')?.textContent ?? ''));
      assert.ok(await lab.byId('prose-before').locator('#why-retries').isVisible());
      await lab.byId('btn-step').click();
      await lab.waitForStep(1);
      lab.problems.length = 0; // the refused fetches are the point of this test
    } finally {
      await lab.close();
    }
  });
});
