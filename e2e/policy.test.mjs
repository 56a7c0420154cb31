// The client's retry policy in the lab (issue 12, item 3): the app's pane shows the
// policy and when each attempt goes out (the core's `Retry::schedule`); a preset
// switched by keyboard changes how many requests the sequence diagram shows, and
// the link carries it, in both languages; ttl-expiry warns while the deadline is
// not shorter than the key's TTL.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { releaseBuildHarness } from './lab-page.mjs';

const q = (params) => '?' + new URLSearchParams({ seed: '1', ...params }).toString();

/** The app's requests the sequence diagram draws (each attempt is one POST). */
const posts = (lab) =>
  lab.page
    .locator('[data-testid="seq-arrow"] title')
    .evaluateAll((ts) => ts.filter((t) => t.textContent.startsWith('POST')).length);

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
          assert.equal(await lab.byId('client-belief').getAttribute('data-belief'), 'gave-up');
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
});
