// Issue 12 in headless Chromium against the release build: the lab gives nothing away
// before the reader has thought (no future arrows, no explanation, no outcome in the
// picker at step 0 of every scenario; "show the future" on request), and every kind of
// question — predict, fix it, transfer, numbers — is answered with the keyboard in both
// languages; a fix-it answer is judged by running the reader's choice.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { SCENARIOS } from './catalogue.mjs';
import { releaseBuildHarness } from './lab-page.mjs';

const q = (params) => '?' + new URLSearchParams({ seed: '1', ...params }).toString();


/** What a run's end would give away, per language: outcome words that must not be on screen at step 0. */
const OUTCOME = {
  en: /\$200|charged (again|twice|once)|double charge|replayed from the store|pays \$200/i,
  ru: /\$200|списыва\S* (дважды|снова|ещё раз)|двойное списание|платит \$200/i,
};

/**
 * What each scenario's run ends in, in the words a listing's comment, a link's label or
 * the narration would use to give it away before the reader answers (the examples of
 * issue 25: "a retry runs it all again: a second charge", "100's answer for 150", "Two
 * requests, one key, two charges"…).
 */
const SPOILERS = {
  'naive-post': { en: [/second charge|pay_2|runs it all again/i], ru: [/второе списание|pay_2|выполнит всё заново/i] },
  'idempotency-key': { en: [/charged (exactly )?once|stored 201 with/i], ru: [/ровно один раз|сохранённый 201 с/i] },
  'counter-increment': { en: [/\b102\b|stay at 101/i], ru: [/\b102\b|по-прежнему 101/i] },
  'concurrent-duplicates': { en: [/two charges|both (miss|charge)/i], ru: [/два списания|оба (промах|спиш)/i] },
  'in-memory-store': { en: [/never sees|charges again/i], ru: [/не увидит|спишет снова/i] },
  'key-reuse-different-body': { en: [/100's answer|as if \$150/i], ru: [/ответ на 100|как будто оплачено/i] },
  'ttl-expiry': { en: [/nil once|TTL has passed|charges a second time/i], ru: [/nil, когда|списывает второй раз/i] },
  'transaction-is-not-idempotency': { en: [/new call and a new transaction/i], ru: [/новый вызов и новая транзакция/i] },
  'consumer-redelivery': { en: [/means redelivery|debits a second time/i], ru: [/повторная доставка$|списывает второй раз/im] },
  'new-key-per-retry': { en: [/always misses/i], ru: [/всегда промах/i] },
  'receipt-email': { en: [/two receipts|drops a repeated id/i], ru: [/два чека|отбросит/i] },
  'late-put': { en: [/ann@app\.io over|overwrites the newer/i], ru: [/поверх ann@web|перезапишет новое/i] },
  'key-scope': { en: [/payment's answer to the refund|no refund is made/i], ru: [/возврату — ответ платежа|возврата нет/i] },
};

describe('no spoilers, and questions that test understanding (release build, strict CSP)', { timeout: 300_000 }, () => {
  const env = releaseBuildHarness();

  test('at step 0 of every scenario nothing of the run is shown: no arrows, no explanation, no outcome', async () => {
    for (const lang of ['en', 'ru']) {
      await env.withLesson(q({ lang, scenario: 'naive-post' }), async (lab) => {
        for (const id of SCENARIOS) {
          if (id !== 'naive-post') await lab.pickScenario(id);
          await lab.waitForStep(0);
          await lab.byId('about-later').waitFor();
          assert.equal(await lab.byId('seq-arrow').count(), 0, `${lang} ${id}: no arrow of the future`);
          assert.equal(await lab.page.locator('.sequence .seq__mark').count(), 0, `${lang} ${id}: no mark of the future`);
          assert.equal(await lab.byId('predict-verdict').count(), 0, `${lang} ${id}: no verdict`);
          const lab_text = await lab.page.locator('#lab').innerText();
          assert.doesNotMatch(lab_text, OUTCOME[lang], `${lang} ${id}: the lab states no outcome at step 0`);
          const picker = await lab.byId('scenario-picker').locator('option').allTextContents();
          assert.doesNotMatch(picker.join(' '), OUTCOME[lang], `${lang}: the picker states no outcome`);
        }
      });
    }
  });

  test('at the decisive step of every scenario nothing on the page states the run\'s outcome, the code pane included', async () => {
    for (const lang of ['en', 'ru']) {
      for (const id of SCENARIOS) {
        await env.withLesson(q({ lang, scenario: id, step: 'decisive' }), async (lab) => {
          await lab.byId('code-pane').waitFor();
          await lab.byId('about-later').waitFor();
          assert.equal(await lab.byId('predict-verdict').count(), 0, `${lang} ${id}: no verdict`);
          // The question's own answers name every outcome, the right one among them: leave them out.
          const page = await lab.page.evaluate(() => {
            const q = document.querySelector('[data-testid=predict]');
            const all = document.querySelector('#lab').innerText;
            return q ? all.replace(q.innerText, ' ') : all;
          });
          const code = await lab.byId('code-pane').innerText();
          for (const re of [OUTCOME[lang], ...(SPOILERS[id]?.[lang] ?? [])]) {
            assert.doesNotMatch(code, re, `${lang} ${id}: the code pane states the outcome`);
            assert.doesNotMatch(page, re, `${lang} ${id}: the lab states the outcome`);
          }
        });
      }
    }
  });

  test('"show the future" draws the rest of the run, by keyboard; the explanation opens at the end', async () => {
    await env.withLesson(q({ lang: 'en', scenario: 'naive-post' }), async (lab) => {
      await lab.byId('about-later').waitFor();
      assert.equal(await lab.byId('seq-arrow').count(), 0);
      await lab.byId('show-future').focus();
      await lab.page.keyboard.press('Space');
      await lab.page.waitForFunction(() => document.querySelectorAll('[data-testid=seq-arrow]').length > 10);
      assert.ok((await lab.page.locator('[data-testid=seq-arrow].lost').count()) >= 1, 'the lost response is drawn');
      await lab.page.keyboard.press('Space');
      await lab.page.waitForFunction(() => document.querySelectorAll('[data-testid=seq-arrow]').length === 0);
      // Two steps in: only what has been sent so far; the lost response is not yet known.
      await lab.stepForward();
      await lab.stepForward();
      const arrows = await lab.byId('seq-arrow').count();
      assert.ok(arrows >= 1 && arrows <= 2, `only the messages sent so far: ${arrows}`);
      assert.equal(await lab.page.locator('[data-testid=seq-arrow].lost').count(), 0);
      await lab.toEnd();
      await lab.byId('about').locator('h3 + .prose-wrap p').first().waitFor();
      assert.equal(await lab.byId('about-later').count(), 0, 'at the end the explanation is open');
      assert.match(await lab.byId('about').innerText(), /\$200/);
    }, { progress: 'p=0' });
  });

  for (const [lang, right, wrong] of [['en', /^Correct\./, /^Not quite\./], ['ru', /^Верно\./, /^Не совсем\./]]) {
    test(`${lang}: a predict question, by keyboard, opens the explanation once answered`, async () => {
      await env.withLesson(q({ lang, scenario: 'conditional-update', step: 'decisive' }), async (lab) => {
        await lab.byId('predict').waitFor();
        await lab.byId('about-later').waitFor();
        await lab.byId('predict').locator('input').first().focus();
        for (let i = 0; i < 3; i++) await lab.page.keyboard.press('ArrowDown'); // the fourth answer
        await lab.tabTo('predict-check');
        await lab.page.keyboard.press('Enter');
        assert.match(await lab.byId('predict-verdict').innerText(), right);
        await lab.byId('about').locator('h3 + .prose-wrap p').first().waitFor();
        assert.equal(await lab.byId('about-later').count(), 0);
      });
    });

    test(`${lang}: fix it, by keyboard — the lab runs the reader's switches, and a wrong choice shows where it breaks`, async () => {
      // The smallest set: the key row in the ledger's transaction.
      await env.withLesson(q({ lang, scenario: 'crash-after-charge' }), async (lab) => {
        await lab.toEnd();
        await lab.byId('predict').waitFor();
        assert.equal(await lab.byId('predict').locator('input').count(), 0, 'the answer is the lab\'s own switches');
        await lab.byId('toggle-same-transaction').focus();
        await lab.page.keyboard.press('Space');
        await lab.page.waitForFunction(() => new URL(location.href).searchParams.get('on') === 'same-transaction');
        await lab.tabTo('predict-check', { backwards: true }); // the question sits above the switches
        await lab.page.keyboard.press('Enter');
        assert.match(await lab.byId('predict-verdict').innerText(), right);
        assert.match(await lab.text('fix-run'), lang === 'en' ? /every invariant holds/i : /все инварианты держатся/i);
        await lab.toEnd();
        assert.equal(await lab.invariantStatus(), 'holds', 'the lab, running the same choice, agrees');
      });
      // The key to the processor alone: the run breaks the ledger, and the lab shows it.
      await env.withLesson(q({ lang, scenario: 'crash-after-charge' }), async (lab) => {
        await lab.toEnd();
        await lab.byId('predict').waitFor();
        await lab.byId('toggle-key-to-processor').focus();
        await lab.page.keyboard.press('Space');
        await lab.page.waitForFunction(() => new URL(location.href).searchParams.get('on') === 'key-to-processor');
        await lab.tabTo('predict-check', { backwards: true });
        await lab.page.keyboard.press('Enter');
        assert.match(await lab.byId('predict-verdict').innerText(), wrong);
        const ran = await lab.text('fix-run');
        const step = Number((lang === 'en' ? /breaks at step (\d+)/ : /на шаге (\d+)/).exec(ran)?.[1]);
        assert.ok(step > 0, ran);
        await lab.byId('predict-continue').click();
        await lab.toEnd();
        assert.equal(await lab.invariantStatus(), 'violated', 'the lab, running the same choice, agrees');
      });
    });

    test(`${lang}: the transfer and numbers questions, in the explanations, by keyboard`, async () => {
      for (const [scenario, kind, rightValue] of [
        ['status-transition', 'transfer', 1],
        ['new-key-per-retry', 'transfer', 1],
        ['ttl-expiry', 'numbers', 2],
      ]) {
        await env.withLesson(q({ lang, scenario }), async (lab) => {
          await lab.toEnd(); // the explanation, and its question, open at the end of the run
          const quiz = lab.byId(`quiz-${kind}`);
          await quiz.waitFor();
          await quiz.scrollIntoViewIfNeeded();
          assert.equal(await quiz.locator('.verdict').isVisible(), false, `${scenario}: the explanation waits`);
          await quiz.locator('input').nth(rightValue).focus();
          await lab.page.keyboard.press('Space');
          await lab.page.keyboard.press('Tab');
          await lab.page.keyboard.press('Enter');
          await quiz.locator('.verdict').waitFor({ state: 'visible' });
          assert.match(await quiz.locator('.verdict').innerText(), right, scenario);
          assert.equal(await quiz.locator('[data-right] input').getAttribute('value'), String(rightValue));
          // Another answer: the verdict follows it.
          await quiz.locator('input').first().check();
          assert.match(await quiz.locator('.verdict').innerText(), wrong, scenario);
        });
      }
    });
  }
});
