// Issue 11 in headless Chromium against the release build: the Explore panel searches
// every order of the reader's run in the explorer's worker (fetched only when the reader
// presses Explore), lists the outcomes with a link to each one's shortest run, and fills
// the scenario's truth table; a run opened from it is a link that reproduces it in a
// fresh page; a cancelled search leaves the lab usable. No console error anywhere.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { LabPage, releaseBuildHarness } from './lab-page.mjs';

const q = (params) => '?' + new URLSearchParams({ seed: '1', ...params }).toString();

/** Presses Explore and waits until the search and the truth table are both done. */
async function explore(lab) {
  await lab.byId('btn-explore').click();
  await lab.page.waitForSelector('[data-testid="explore-result"][data-done="1"]', { timeout: 120_000 });
}

/** data-charges of every outcome shown. */
const charges = (lab) =>
  lab.byId('explore-outcome').evaluateAll((els) => els.map((e) => Number(e.dataset.charges)));

describe('the Explore panel (release build, strict CSP)', { timeout: 600_000 }, () => {
  const env = releaseBuildHarness();

  test('idempotency-key with the defaults: no outcome charges twice; the worker is fetched only on Explore', async () => {
    await env.withLab(q({ lang: 'en', scenario: 'idempotency-key' }), async (lab) => {
      const fetched = [];
      lab.page.on('request', (r) => fetched.push(new URL(r.url()).pathname));
      await lab.byId('btn-explore').waitFor();
      assert.deepEqual(fetched.filter((p) => p.includes('/worker/')), [], 'nothing of the worker before Explore');
      await explore(lab);
      assert.ok(fetched.some((p) => p.endsWith('/worker/loader.js')), 'the worker starts on Explore');
      const c = await charges(lab);
      assert.ok(c.length > 1, `several outcomes: ${c}`);
      assert.ok(c.every((n) => n <= 1), `no outcome charges twice: ${c}`);
      assert.match(await lab.byId('explore-progress').innerText(), /States explored: \d+/);
      assert.match(await lab.page.locator('#announce').innerText(), /Truth table done/);
      assert.ok((await lab.byId('truth-cell').count()) > 0);
    });
  });

  test('two lost messages: on at first where the search finishes, searched, and a column of the truth table', async () => {
    const second = (lab) => lab.page.locator('[data-bound="losses2"]');
    const distinct = async (lab) => Number((await lab.byId('explore-progress').innerText()).match(/distinct: ([\d\s,]+)/)[1].replace(/\D/g, ''));
    await env.withLab(q({ lang: 'en', scenario: 'idempotency-key' }), async (lab) => {
      assert.equal(await second(lab).isChecked(), true, 'on at first: the search finishes');
      await explore(lab);
      assert.match(await lab.page.locator('#xo').innerText(), /lost messages at most: 2, crashes at most: 1/);
      assert.doesNotMatch(await lab.page.locator('#xo').innerText(), /stopped at its bound/);
      const two = await distinct(lab);
      const column = await lab.page.locator('[data-testid="truth-cell"][data-fault="two-losses"]').count();
      assert.equal(column, await lab.page.locator('[data-testid="truth-cell"][data-fault="crash"]').count());
      assert.ok(column > 0, 'a column of two lost messages');
      await second(lab).uncheck();
      await explore(lab);
      assert.match(await lab.page.locator('#xo').innerText(), /lost messages at most: 1,/);
      const one = await distinct(lab);
      assert.ok(two > 10 * one, `two losses reach more states: ${two} against ${one}`);
    });
    await env.withLab(q({ lang: 'ru', scenario: 'concurrent-duplicates' }), async (lab) => {
      assert.equal(await second(lab).isChecked(), false, 'off at first: the search would stop at its bound');
    });
  });

  test('without the claim and the processor key, two parallel retries can charge twice; Show me opens that run as a link', async () => {
    await env.withLab(q({ lang: 'en', scenario: 'idempotency-key' }), async (lab) => {
      // idempotency-key passes the key to the processor by default, which deduplicates on its own.
      await lab.setToggle('atomic-claim', false);
      await lab.setToggle('key-to-processor', false);
      await lab.stepForward();
      await lab.stepForward();
      await lab.setParallelN(2);
      await lab.clickAndStep('btn-parallel-retries');
      await explore(lab);
      assert.ok((await charges(lab)).includes(2), 'a two-charge outcome');
      const two = lab.page.locator('[data-testid="explore-outcome"][data-charges="2"]').first();
      await two.getByTestId('explore-show').press('Enter');
      // The notice says where the run leaves the reader's, and the sequence diagram marks that step.
      const notice = await lab.byId('notice').innerText();
      const left = notice.match(/Explore: this run leaves yours at step (\d+) \(marked on the sequence diagram\)/);
      assert.ok(left, notice);
      assert.equal(await lab.byId('seq-diverge').getAttribute('data-step'), left[1], 'the step named is the step marked');
      assert.ok(Number(left[1]) > 3, `after the reader's step: ${left[1]}`);
      await lab.toEnd();
      assert.equal(await lab.text('charge-count'), '2', 'the run shown ends with two charges');
      const link = new URL(lab.page.url()).search;
      const fresh = await LabPage.openLab(env.browser, env.server, link);
      try {
        await fresh.toEnd();
        assert.equal(await fresh.text('charge-count'), '2', `the link reproduces it: ${link}`);
        assert.deepEqual(fresh.problems, []);
      } finally {
        await fresh.close();
      }
    });
  });

  test('the truth table of crash-after-charge: Redis after commit breaks under a crash, fully defended holds', async () => {
    await env.withLab(q({ lang: 'ru', scenario: 'crash-after-charge' }), async (lab) => {
      await explore(lab);
      const cells = await lab.byId('truth-cell').evaluateAll((els) =>
        els.map((e) => ({ fault: e.dataset.fault, on: e.dataset.on, verdict: e.dataset.verdict, link: !!e.querySelector('a') })),
      );
      const crash = cells.filter((c) => c.fault === 'crash');
      const none = crash.find((c) => c.on === '');
      const most = Math.max(...crash.map((c) => (c.on ? c.on.split(',').length : 0)));
      const all = crash.find((c) => (c.on ? c.on.split(',').length : 0) === most);
      assert.equal(none.verdict, 'breaks', 'Redis after commit breaks under a crash');
      assert.ok(none.link, 'with a link to its counterexample');
      assert.equal(all.verdict, 'holds', `fully defended (${all.on}) holds`);
      assert.match(await lab.page.locator('#announce').innerText(), /Таблица истинности готова/);
      // Its counterexample opens with the step where the crash strikes marked and named.
      await lab.page.locator('[data-testid="truth-cell"][data-fault="crash"][data-on=""] a').click();
      const notice = await lab.byId('notice').innerText();
      const at = notice.match(/сбой: падение, он случается на шаге (\d+)/);
      assert.ok(at, notice);
      assert.equal(await lab.byId('seq-diverge').getAttribute('data-step'), at[1]);
    });
  });

  test('key-scope: the refund answered with the payment\'s response is found; scoped by method and path, no outcome breaks', async () => {
    const broken = (lab) => lab.byId('explore-outcome').evaluateAll((els) => els.map((e) => e.classList.contains('broken')));
    await env.withLab(q({ lang: 'en', scenario: 'key-scope' }), async (lab) => {
      await explore(lab);
      assert.ok((await broken(lab)).some(Boolean), 'some outcome breaks');
      assert.match(await lab.page.locator('#xo').innerText(), /A replayed response answers the same request/);
      const cells = await lab.byId('truth-cell').evaluateAll((els) =>
        els.map((e) => ({ fault: e.dataset.fault, on: e.dataset.on, verdict: e.dataset.verdict })),
      );
      for (const c of cells) {
        const on = c.on ? c.on.split(',') : [];
        const why = `${c.fault}, defences: ${c.on}`;
        if (!on.includes('scoped-key') && !on.includes('fingerprint')) assert.equal(c.verdict, 'breaks', `keys by user and key only (${why})`);
        // The fingerprint alone refuses the refund (422): caught, but not made.
        if (!on.includes('scoped-key') && on.includes('fingerprint')) assert.equal(c.verdict, 'breaks', `the fingerprint alone (${why})`);
        // (A crash restarted at any later point, or 25 h of clock, may outlast the
        // app's retries, as in idempotency-key: those cells are the ADR's, not the scope's.)
        const scoped = ['scoped-key', 'atomic-claim', 'key-to-processor'].every((d) => on.includes(d));
        if (scoped && ['lost-response', 'lost-store-reply', 'parallel'].includes(c.fault)) {
          assert.equal(c.verdict, 'holds', `scoped, with the claim and the processor key (${why})`);
        }
      }
    });
    await env.withLab(q({ lang: 'en', scenario: 'key-scope', on: 'scoped-key' }), async (lab) => {
      // One fault: a lost message (with a crash as well the app may run out of attempts).
      await lab.page.locator('[data-bound="crashes"]').uncheck();
      await explore(lab);
      assert.ok((await broken(lab)).every((b) => !b), 'no outcome breaks');
      assert.deepEqual([...new Set(await charges(lab))], [2], 'every end has the payment and the refund');
    });
  });

  test('a clock jump past the TTL is a bound of its own, off at first', async () => {
    await env.withLab(q({ lang: 'en', scenario: 'ttl-expiry', on: 'long-ttl' }), async (lab) => {
      const jumps = lab.page.locator('[data-bound="jumps"]');
      assert.equal(await jumps.isChecked(), false, 'off at first: it multiplies the states');
      await lab.page.locator('[data-bound="crashes"]').uncheck();
      await jumps.check();
      await explore(lab);
      assert.match(await lab.page.locator('#xo').innerText(), /crashes at most: 0, clock jumps of 25 h \(past the keys' TTL\) at most: 1/);
      // Some outcome's shortest run jumps the clock by 25 h (cmd t90000000).
      const hrefs = await lab.byId('explore-show').evaluateAll((els) => els.map((a) => a.getAttribute('href')));
      assert.ok(hrefs.some((h) => /cmd=[^&]*t90000000/.test(h)), hrefs.join('\n'));
    });
  });

  test('two sets of defences side by side: Redis after commit against the key in the transaction and at the processor (ru, 360 px, keyboard)', async () => {
    await env.withLab(
      q({ lang: 'ru', scenario: 'crash-after-charge' }),
      async (lab) => {
        const compare = lab.byId('compare');
        assert.equal(await compare.innerHTML(), '', 'nothing compared at first');
        // The other side's defences are all on at first: the key in the ledger's
        // transaction and the key passed to the processor, against the lab's none.
        assert.equal(await lab.byId('compare-same-transaction').isChecked(), true);
        assert.equal(await lab.byId('compare-key-to-processor').isChecked(), true);
        await lab.byId('compare-on').focus();
        await lab.page.keyboard.press('Space');
        const said = lab.byId('compare-said');
        await said.waitFor();
        const text = await said.innerText();
        const k = text.match(/Прогоны впервые расходятся на шаге (\d+)/);
        assert.ok(k, text);
        assert.equal(await said.getAttribute('data-step'), k[1]);
        assert.match(text, /В конце — у вас: .*Списано \$200.*С этими защитами: Списано \$100/);
        // Announced, and the step framed on both diagrams.
        await lab.page.waitForFunction((t) => document.querySelector('#announce')?.textContent === t, text);
        assert.equal(await lab.byId('seq-diverge').getAttribute('data-step'), k[1]);
        assert.equal(await compare.locator('[data-b="seq-diverge"]').getAttribute('data-step'), k[1]);
        // One cursor: both runs step together, and end two charges against one.
        await lab.stepForward();
        assert.equal(await compare.locator('[data-b="seq-arrow"]').count(), await lab.byId('seq-arrow').count());
        await lab.toEnd();
        assert.equal(await lab.text('charge-count'), '2');
        assert.equal((await compare.locator('[data-b="charge-count"]').innerText()).trim(), '1');
        assert.equal(await compare.locator('[data-b="node-processor"]').count(), 1, 'its own topology');
        const wide = await lab.page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
        assert.equal(wide, false, 'no horizontal scroll at 360 px');
        // Another set of defences: the sentence follows it.
        await lab.byId('compare-key-to-processor').focus();
        await lab.page.keyboard.press('Space');
        await lab.page.waitForFunction(() => /защитами: Ключ и эффект в одной транзакции$/.test(document.querySelector('#xc h3')?.textContent ?? ''));
        // Off: nothing compared, nothing framed.
        await lab.byId('compare-on').press('Space');
        await lab.page.waitForFunction(() => document.querySelector('[data-testid="compare"]')?.innerHTML === '');
        assert.equal(await lab.byId('seq-diverge').count(), 0);
        assert.equal(await lab.byId('compare-said').count(), 0);
      },
      { viewport: { width: 360, height: 800 } },
    );
  });

  test('a cancelled search leaves the lab usable; at 360 px the panel does not scroll the page sideways', async () => {
    await env.withLab(
      q({ lang: 'en', scenario: 'concurrent-duplicates' }),
      async (lab) => {
        await lab.byId('btn-explore').click();
        await lab.byId('explore-cancel').click();
        await lab.page.waitForFunction(() => /cancelled/.test(document.querySelector('#xp')?.textContent ?? ''));
        assert.equal(await lab.byId('explore-result').getAttribute('data-done'), '0');
        await lab.stepForward();
        await lab.toEnd();
        // And a new search after it runs to its end.
        await explore(lab);
        const wide = await lab.page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
        assert.equal(wide, false, 'no horizontal scroll at 360 px');
      },
      { viewport: { width: 360, height: 800 } },
    );
  });
});
