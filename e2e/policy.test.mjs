// The client's retry policy in the lab (issue 12, item 3): the app's pane shows the
// policy and when each attempt goes out (the core's `Retry::schedule`); a preset
// switched by keyboard changes how many requests the sequence diagram shows, and
// the link carries it, in both languages; ttl-expiry warns while the deadline is
// not shorter than the key's TTL. The policy's five numbers are fields the reader
// changes by keyboard: the schedule and the run follow, a link carries them
// (`retry=`), and a number out of range or a malformed `retry=` is said so.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { releaseBuildHarness } from './lab-page.mjs';

const q = (params) => '?' + new URLSearchParams({ seed: '1', ...params }).toString();

/** The policy's field `i` (0 timeout, 1 attempts, 2 backoff, 3 jitter, 4 deadline). */
const field = (lab, i) => lab.byId('retry-form').locator(`input[data-retry="${i}"]`);

/** Types `value` into field `i` by keyboard and leaves it (Tab), as a reader does. */
async function typeNumber(lab, i, value) {
  await field(lab, i).focus();
  await lab.page.keyboard.press('Control+A');
  await lab.page.keyboard.type(String(value));
  await lab.page.keyboard.press('Tab');
}

/** Waits until the schedule lists `n` attempts. */
const scheduled = (lab, n) =>
  lab.page.waitForFunction((n) => document.querySelectorAll('[data-testid="retry-schedule"] li').length === n, n);

/** The app's requests the sequence diagram draws that start with `verb` (each attempt is one POST). */
const sent = (lab, verb) =>
  lab.page
    .locator('[data-testid="seq-arrow"] title')
    .evaluateAll((ts, v) => ts.filter((t) => t.textContent.startsWith(v + ' ')).length, verb);
const posts = (lab) => sent(lab, 'POST');

/**
 * Past its last attempt the app does not guess: it asks by the key (a GET the diagram
 * draws), and the API's answer (reconciled with the processor where need be) is what
 * it ends up believing: the charge went through.
 */
async function learnsByAsking(lab) {
  assert.ok((await sent(lab, 'GET')) >= 1, 'the app asks by the key');
  assert.equal(await lab.byId('client-belief').getAttribute('data-belief'), 'succeeded');
}

describe('the client\'s retry policy', () => {
  const env = releaseBuildHarness();

  for (const lang of ['en', 'ru']) {
    test(`${lang}: the schedule, a preset by keyboard, the diagram's attempts and the link`, async () => {
      let link;
      await env.withLab(
        q({ scenario: 'idempotency-key', lang }),
        async (lab) => {
          const schedule = lab.byId('retry-schedule').locator('li');
          // 4 attempts, 1.5 s each, pauses of 0.5, 1 and 2 s plus up to 0.2 s.
          assert.equal(await schedule.count(), 4);
          assert.match(await schedule.nth(1).textContent(), /^2 \S+–2[.,]2 \S+$/);
          assert.equal(await lab.byId('retry-schedule').locator('li.bad').count(), 0);
          assert.equal(await lab.has('retry-warning'), false);
          await lab.toEnd();
          assert.equal(await posts(lab), 2, 'the first attempt and its retry');
          const box = lab.byId('toggle-no-retry');
          await box.focus();
          await lab.page.keyboard.press('Space');
          await lab.page.waitForFunction(() => document.querySelector('[data-testid="toggle-no-retry"]').checked);
          await lab.page.waitForFunction(
            () => document.querySelectorAll('[data-testid="retry-schedule"] li').length === 1,
          );
          assert.match(await lab.text('retry-policy'), /: 1 ·/);
          await lab.toEnd();
          assert.equal(await posts(lab), 1, 'no retry');
          await learnsByAsking(lab);
          assert.equal(lab.params().on, 'no-retry');
          link = new URL(lab.page.url());
        },
        { viewport: { width: 360, height: 800 } },
      );
      // The copied link opens the same policy, in the same language.
      await env.withLab(link.pathname.split('/').pop() + link.search, async (lab) => {
        assert.equal(await lab.page.evaluate(() => document.documentElement.lang), lang);
        assert.equal(await lab.byId('toggle-no-retry').isChecked(), true);
        assert.equal(await lab.byId('retry-schedule').locator('li').count(), 1);
        await lab.toEnd();
        assert.equal(await posts(lab), 1);
      });
    });
  }

  test('ttl-expiry warns while the deadline outlives the key, and the schedule marks nothing the deadline cuts', async () => {
    await env.withLab(q({ scenario: 'ttl-expiry', lang: 'en' }), async (lab) => {
      assert.match(await lab.text('retry-warning'), /not shorter than the key's TTL \(24 h\)/);
      await lab.setToggle('long-ttl', true);
      await lab.page.waitForFunction(() => !document.querySelector('[data-testid="retry-warning"]'));
      await lab.setToggle('long-ttl', false);
      await lab.setToggle('short-deadline', true);
      await lab.page.waitForFunction(() => !document.querySelector('[data-testid="retry-warning"]'));
      assert.equal(await lab.byId('retry-schedule').locator('li').count(), 4);
    });
    await env.withLab(q({ scenario: 'ttl-expiry', lang: 'ru' }), async (lab) => {
      assert.match(await lab.text('retry-warning'), /не короче TTL ключа \(24 ч\)/);
    });
  });

  const labels = { en: ['Attempts', 'Deadline, s'], ru: ['Попытки', 'Срок, с'] };
  for (const lang of ['en', 'ru']) {
    test(`${lang}: the numbers by keyboard: attempts 1 sends no retry, the arrow key adds one back, and the link keeps them`, async () => {
      let link;
      await env.withLab(
        q({ scenario: 'idempotency-key', lang }),
        async (lab) => {
          // Labelled fields, in the page's language, each value whole at 360 px.
          const attempts = lab.byId('retry-form').getByLabel(labels[lang][0]);
          assert.equal(await attempts.inputValue(), '4');
          assert.equal(await lab.byId('retry-form').getByLabel(labels[lang][1]).inputValue(), '43200');
          for (let i = 0; i < 5; i++) {
            const fits = await field(lab, i).evaluate((el) => el.scrollWidth <= el.clientWidth + 1);
            assert.ok(fits, `field ${i} shows its whole value`);
          }
          await typeNumber(lab, 1, 1);
          await scheduled(lab, 1);
          assert.match(await lab.text('retry-policy'), /: 1 ·/);
          await lab.toEnd();
          assert.equal(await posts(lab), 1, 'no retry');
          await learnsByAsking(lab);
          assert.equal(lab.params().retry, '1500,1,500,200,43200');
          // The arrow key is a change too: two attempts, the retry is back.
          await attempts.focus();
          await lab.page.keyboard.press('ArrowUp');
          await scheduled(lab, 2);
          await lab.toEnd();
          assert.equal(await posts(lab), 2);
          await typeNumber(lab, 1, 1);
          await scheduled(lab, 1);
          assert.equal(await lab.has('notice'), false, 'numbers in range raise no notice');
          link = new URL(lab.page.url());
        },
        { viewport: { width: 360, height: 800 } },
      );
      await env.withLab(link.pathname.split('/').pop() + link.search, async (lab) => {
        assert.equal(await lab.page.evaluate(() => document.documentElement.lang), lang);
        assert.equal(await field(lab, 1).inputValue(), '1');
        assert.equal(await lab.byId('retry-schedule').locator('li').count(), 1);
        await lab.toEnd();
        assert.equal(await posts(lab), 1);
      });
    });
  }

  test('ttl-expiry: a deadline under the TTL ends the warning and the second charge; one past the TTL brings both back', async () => {
    await env.withLab(q({ scenario: 'ttl-expiry', lang: 'en' }), async (lab) => {
      assert.equal(await field(lab, 4).inputValue(), '172800');
      await typeNumber(lab, 4, 43200);
      await lab.page.waitForFunction(() => !document.querySelector('[data-testid="retry-warning"]'));
      await lab.toEnd();
      assert.equal(await lab.text('charge-count'), '1');
      await learnsByAsking(lab);
      // 26 h: past the key's 24 h and the app's retry 25 h later.
      await typeNumber(lab, 4, 93600);
      await lab.byId('retry-warning').waitFor();
      await lab.toEnd();
      assert.equal(await lab.text('charge-count'), '2', 'the retry 25 h later charges again');
      // The preset sets its number, and a number typed turns the preset off.
      await lab.setToggle('short-deadline', true);
      await lab.page.waitForFunction(() => document.querySelector('[data-retry="4"]').value === '3600');
      await typeNumber(lab, 4, 7200);
      await lab.page.waitForFunction(() => !document.querySelector('[data-testid="toggle-short-deadline"]').checked);
      assert.equal(lab.params().retry, '1500,4,500,200,7200');
    });
  });

  test('a number out of range is clamped and said so; a malformed retry= is named, shortened, and the lab runs', async () => {
    await env.withLab(q({ scenario: 'idempotency-key', lang: 'en' }), async (lab) => {
      await typeNumber(lab, 1, 99);
      await lab.byId('notice').waitFor();
      assert.match(await lab.text('notice'), /Attempts: from 1 to 10; “99” became 10\./);
      assert.equal(await field(lab, 1).inputValue(), '10');
    });
    await env.withLab(q({ scenario: 'idempotency-key', lang: 'ru', retry: '1500,0,500,200,43200' }), async (lab) => {
      assert.match(await lab.text('notice'), /Попытки: от 1 до 10; «0» стало 1\./);
      assert.equal(await field(lab, 1).inputValue(), '1');
      assert.equal(lab.params().retry, '1500,1,500,200,43200');
    });
    const junk = '1,2,' + 'x'.repeat(300);
    await env.withLab(q({ scenario: 'idempotency-key', lang: 'en', retry: junk }), async (lab) => {
      const notice = await lab.text('notice');
      assert.match(notice, /is not five numbers/);
      assert.ok(notice.length < 200, `the value is shortened: ${notice}`);
      assert.equal(await field(lab, 1).inputValue(), '4', "the scenario's policy stays");
      assert.equal(lab.params().retry, undefined);
      await lab.toEnd();
      assert.equal(await posts(lab), 2);
    });
  });
});
