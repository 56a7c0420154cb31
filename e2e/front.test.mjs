// Issue 14: the first screen offers the lab; with the lab in view, cause and effect
// fit one screen; nothing of the lab is clipped; a notice appears where the reader is.

import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';

import { releaseBuildHarness } from './lab-page.mjs';
import { ARTIFACTS } from './lesson-page.mjs';

const SIZES = [
  { width: 1440, height: 900 },
  { width: 360, height: 800 },
];

describe('the lab front and centre (release build)', { timeout: 300_000 }, () => {
  const env = releaseBuildHarness();

  for (const viewport of SIZES) {
    for (const lang of ['en', 'ru']) {
      const at = `${viewport.width}×${viewport.height} ${lang}`;

      test(`${at}: the first viewport offers the lab, and Try it plays it`, async () => {
        await env.withLab(`?lang=${lang}`, async (lab) => {
          assert.ok(await lab.inViewport('try-lab'), 'the Try it button is on the first screen');
          await lab.page.screenshot({ path: path.join(ARTIFACTS, `front-${viewport.width}-${lang}.png`) });
          await lab.byId('try-lab').click();
          // The lab comes to the top; on a phone its picture does (issue 26: the topology,
          // the narration under it and playback fill the screen).
          const top = viewport.width < 900 ? '[data-testid=topology]' : '#lab';
          await lab.page.waitForFunction((sel) => Math.abs(document.querySelector(sel).getBoundingClientRect().top) < 2, top);
          await lab.page.waitForFunction(() => document.querySelector('[data-testid=btn-play]').getAttribute('aria-pressed') === 'true');
        }, { viewport });
      });

      test(`${at}: with the lab in view, the controls and the outcome are on screen`, async () => {
        await env.withLab(`?lang=${lang}&scenario=idempotency-key`, async (lab) => {
          await lab.scrollToLab();
          // The defences are a section the reader opens (issue 26): its summary is in view.
          const ids = viewport.width >= 1440
            ? ['topology', 'btn-play', 'btn-drop-ack', 'sec-defences', 'invariant-status']
            : ['btn-play', 'invariant-status'];
          for (const id of ids) assert.ok(await lab.inViewport(id), `${id} inside the viewport`);
          // While it plays, the outcome stays in view.
          await lab.byId('btn-play').click();
          await lab.waitForStep(3);
          assert.ok(await lab.inViewport('invariant-status'), 'invariant-status in view while playing');
          await lab.page.screenshot({ path: path.join(ARTIFACTS, `front-lab-${viewport.width}-${lang}.png`) });
        }, { viewport, sections: 'closed' });
      });

      test(`${at}: no element of the lab is clipped, in a two-instance scenario too`, async () => {
        for (const scenario of ['idempotency-key', 'concurrent-duplicates']) {
          await env.withLab(`?lang=${lang}&scenario=${scenario}&step=12`, async (lab) => {
            assert.deepEqual(await lab.clippedInLab(), [], `${scenario}: clipped elements`);
          }, { viewport });
        }
      });

      test(`${at}: after Copy link a confirmation is in view`, async () => {
        await env.withLab(`?lang=${lang}&scenario=naive-post`, async (lab) => {
          await lab.page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
          await lab.scrollToLab();
          await lab.byId('btn-copy-link').click();
          await lab.page.waitForSelector('[data-testid=notice]');
          assert.ok(await lab.comesIntoView('notice'), `the notice is inside the viewport: ${await lab.whereIs('notice')}`);
        }, { viewport });
      });
    }
  }

  test('the parallel-retries label follows the field, and 50 is said to become 10', async () => {
    await env.withLab('?lang=en&scenario=idempotency-key', async (lab) => {
      const field = lab.byId('parallel-n');
      await field.fill('7');
      assert.equal(await lab.text('btn-parallel-retries'), 'Fire 7 retries at once');
      await field.fill('50');
      await field.blur();
      assert.equal(await field.inputValue(), '10');
      assert.match(await lab.text('notice'), /“50” became 10/);
      assert.ok(await lab.comesIntoView('notice'));
    });
  });

  test('a sequence-diagram arrow jumps to its step from the keyboard', async () => {
    await env.withLab('?lang=en&scenario=naive-post', async (lab) => {
      await lab.byId('show-future').check(); // at step 0 nothing has been sent yet
      const arrow = lab.byId('seq-arrow').nth(3);
      const step = Number(await arrow.getAttribute('data-step'));
      await arrow.focus();
      await lab.page.keyboard.press('Enter');
      await lab.waitForStep(step);
    });
  });
});
