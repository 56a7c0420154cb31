// Issue 26 in headless Chromium against the release build: one idea at a time. The
// step's narration is beside the moving picture while a run plays, at 1440 × 900 and
// 360 × 800, in both languages; the lab's first screen offers few controls (the
// defences, the client and what else could happen wait in sections the reader opens);
// the sequence diagram is one Tab stop; Explore asked at the end of a run explores.

import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { describe, test } from 'node:test';

import { LANGS, PAGES } from './dist.mjs';
import { LabPage, releaseBuildHarness } from './lab-page.mjs';

const WIDE = { width: 1440, height: 900 };
const PHONE = { width: 360, height: 800 };
const SIZES = [
  ['1440', WIDE],
  ['360', PHONE],
];

const q = (params) => '?' + new URLSearchParams({ seed: '1', ...params }).toString();

/**
 * The controls a reader can operate (not disabled), shown and at least partly inside
 * the viewport, in the lab; `all` counts the disabled ones too.
 */
const CONTROLS = 'button, input, select, textarea, summary, a[href], [role=button]';
const visibleControls = (lab, all = false) =>
  lab.page.evaluate(([sel, all]) => {
    const lab = document.getElementById('lab');
    return [...lab.querySelectorAll(sel)]
      .filter((e) => all || !e.disabled)
      .filter((e) => e.checkVisibility({ visibilityProperty: true }))
      .filter((e) => {
        const r = e.getBoundingClientRect();
        return r.width > 0 && r.height > 0 && r.bottom > 0 && r.top < innerHeight;
      })
      .map((e) => e.dataset.testid ?? e.dataset.act ?? e.textContent.trim().slice(0, 20));
  }, [CONTROLS, all]);

/**
 * Plays the run from "Try it" (the first screen's button) to its end, and returns, for
 * every step drawn, where the narration is: its box, the viewport's height, and the top
 * of the outcome bar where that bar sticks to the bottom edge (a phone).
 */
async function playFromTry(lab) {
  await lab.byId('try-lab').click();
  return lab.page.evaluate(
    () =>
      new Promise((resolve) => {
        const seen = [];
        const counter = document.querySelector('[data-testid=step-counter]');
        const look = () => {
          const m = /(\d+)\s*\/\s*(\d+)/.exec(counter.textContent);
          const r = document.querySelector('[data-testid=narration]').getBoundingClientRect();
          const bar = document.querySelector('[data-testid=outcome]');
          const sticky = getComputedStyle(bar).position === 'sticky';
          const b = bar.getBoundingClientRect();
          // The bar covers the narration only where it is stuck over it, below it in the flow.
          const cover = sticky && b.top < r.bottom && b.bottom > r.top ? b.top : innerHeight;
          const last = seen.at(-1);
          if (!last || last.k !== Number(m[1])) {
            seen.push({ k: Number(m[1]), top: r.top, bottom: r.bottom, left: r.left, right: r.right, cover, width: innerWidth });
          }
          if (m[1] === m[2]) resolve(seen);
          else requestAnimationFrame(look);
        };
        look();
      }),
  );
}

describe('one idea at a time (release build, strict CSP)', { timeout: 600_000 }, () => {
  const env = releaseBuildHarness();

  for (const lang of LANGS) {
    for (const [name, viewport] of SIZES) {
      test(`${lang} ${name}: after "Try it" the narration is inside the viewport at every step while the run plays`, async () => {
        await env.withLab(
          PAGES[lang] + q({ lang, speed: '4' }),
          async (lab) => {
            const seen = await playFromTry(lab);
            assert.ok(seen.length > 5, `steps seen: ${seen.length}`);
            const out = seen.filter((s) => s.top < 0 || s.bottom > s.cover || s.left < 0 || s.right > s.width);
            assert.deepEqual(out, [], `the narration leaves the viewport (or goes under the sticky bar): ${JSON.stringify(out.slice(0, 3))}`);
            await lab.screenshot(`layout-try-${lang}-${name}.png`);
          },
          { viewport, sections: 'closed' },
        );
      });
    }

    test(`${lang} 360: the narration sits directly under the topology, above playback`, async () => {
      await env.withLab(
        q({ lang, scenario: 'idempotency-key', step: '6' }),
        async (lab) => {
          const [topo, narr, play] = await Promise.all(['topology', 'narration', 'btn-play'].map((id) => lab.box(id)));
          assert.ok(narr.y >= topo.y + topo.height - 1 && narr.y - (topo.y + topo.height) < 24, `under the topology: ${JSON.stringify({ topo, narr })}`);
          assert.ok(play.y >= narr.y + narr.height, `above playback: ${JSON.stringify({ narr, play })}`);
        },
        { viewport: PHONE, sections: 'closed' },
      );
    });

    test(`${lang} 1440: the narration and the sequence diagram are beside the topology`, async () => {
      await env.withLab(
        q({ lang, scenario: 'idempotency-key', step: '6' }),
        async (lab) => {
          await lab.scrollToLab();
          const [topo, narr, seq] = await Promise.all(['topology', 'narration', 'pane-sequence'].map((id) => lab.box(id)));
          assert.ok(narr.y < WIDE.height && narr.y >= topo.y, `narration in the first screen: ${JSON.stringify(narr)}`);
          assert.ok(seq.x >= topo.x + topo.width && seq.y < topo.y + topo.height, `the diagram beside the topology: ${JSON.stringify({ topo, seq })}`);
        },
        { viewport: WIDE, sections: 'closed' },
      );
    });

    for (const scenario of ['naive-post', 'idempotency-key']) {
      test(`${lang} 1440 ${scenario}: the lab's first screen has at most 12 visible controls`, async () => {
        await env.withLab(
          q({ lang, scenario }),
          async (lab) => {
            await lab.scrollToLab();
            const seen = await visibleControls(lab);
            const shown = await visibleControls(lab, true);
            console.log(`${lang} ${scenario}: ${seen.length} controls in the first screen (${shown.length} with the disabled): ${shown.join(', ')}`);
            assert.ok(seen.length <= 12, `${seen.length} controls: ${seen.join(', ')}`);
            await lab.page.screenshot({ path: `e2e/artifacts/layout-first-screen-${lang}-${scenario}.png` });
          },
          { viewport: WIDE, sections: 'closed' },
        );
      });
    }

    test(`${lang} 1440: at most 15 Tabs from Play to the explorer; the diagram is one Tab stop`, async () => {
      await env.withLab(
        q({ lang, scenario: 'idempotency-key', step: '12' }),
        async (lab) => {
          await lab.byId('btn-play').focus();
          const toSection = await lab.tabTo('sec-more', { max: 40 });
          await lab.page.keyboard.press('Enter');
          const toExplore = await lab.tabTo('btn-explore', { max: 40 });
          console.log(`${lang}: ${toSection} Tabs from Play to "What else could happen?", ${toExplore} more to Explore`);
          assert.ok(toSection + toExplore <= 15, `${toSection} + ${toExplore} Tabs`);
          // The diagram: one stop; the arrow keys move between its arrows, Enter jumps.
          const stops = await lab.page.evaluate(() => document.querySelectorAll('.sequence [tabindex="0"]').length);
          assert.equal(stops, 0, 'no arrow is a Tab stop of its own');
          await lab.page.locator('.sequence').first().focus();
          await lab.page.keyboard.press('ArrowDown');
          const first = await lab.page.evaluate(() => document.activeElement.dataset.step);
          await lab.page.keyboard.press('ArrowUp');
          await lab.page.keyboard.press('ArrowUp');
          const before = await lab.page.evaluate(() => document.activeElement.dataset.step);
          assert.ok(Number(before) <= Number(first), `${before} ≤ ${first}`);
          await lab.page.keyboard.press('Enter');
          await lab.waitForStep(Number(before));
        },
        { viewport: WIDE, sections: 'closed' },
      );
    });

    test(`${lang}: Explore asked at the end of a run explores from the decisive step, and says so`, async () => {
      await env.withLab(
        q({ lang, scenario: 'idempotency-key' }),
        async (lab) => {
          await lab.toEnd();
          await lab.byId('sec-more').click();
          await lab.byId('btn-explore').click();
          await lab.page.waitForSelector('[data-testid="explore-result"][data-done="1"]', { timeout: 120_000 });
          assert.match(await lab.text('explore-from'), /\d/);
          const said = await lab.byId('explore-progress').innerText();
          const [explored, distinct] = (said.match(/\d[\d\s,]*/g) ?? []).map((s) => Number(s.replace(/\D/g, '')));
          assert.ok(explored > 1 && distinct > 1, `more than one state: ${said}`);
        },
        { viewport: WIDE, sections: 'closed' },
      );
    });
  }

  test('1440: with the comparison on, the two topologies share a row under a heading that names both sets', async () => {
    await env.withLab(
      q({ lang: 'en', scenario: 'crash-after-charge', step: '6' }),
      async (lab) => {
        await lab.byId('compare-on').check();
        await lab.page.waitForSelector('#xv .topology');
        await lab.page.waitForSelector('#xc h3');
        await lab.scrollToLab();
        const [mine, other] = await lab.page.evaluate(() =>
          ['[data-testid=topology]', '#xv .topology'].map((sel) => {
            const r = document.querySelector(sel).getBoundingClientRect();
            return { top: r.top, left: r.left, right: r.right, bottom: r.bottom };
          }),
        );
        assert.ok(Math.abs(mine.top - other.top) < 4 && other.left >= mine.right, `one row: ${JSON.stringify({ mine, other })}`);
        const heading = await lab.page.locator('#xc h3').innerText();
        assert.match(heading, /yours: .+ beside it.+: .+/, heading);
        assert.match(await lab.byId('compare-said').innerText(), /step \d+|the same/);
        await lab.page.screenshot({ path: 'e2e/artifacts/layout-compare-1440.png' });
      },
      { viewport: WIDE },
    );
  });

  test('360: with the comparison on, a switch flips between the two runs', async () => {
    await env.withLab(
      q({ lang: 'ru', scenario: 'crash-after-charge', step: '6' }),
      async (lab) => {
        await lab.byId('compare-on').check();
        await lab.page.waitForSelector('#xv .topology', { state: 'attached' });
        const shown = () =>
          lab.page.evaluate(() => ['[data-testid=topology]', '#xv .topology'].map((sel) => document.querySelector(sel).checkVisibility()));
        assert.deepEqual(await shown(), [true, false], 'yours first');
        await lab.byId('compare-flip').check();
        assert.deepEqual(await shown(), [false, true], 'then the other');
        assert.ok(await lab.byId('compare-flip').isVisible(), 'the switch is shown');
        await lab.page.screenshot({ path: 'e2e/artifacts/layout-compare-flip-360.png' });
        await lab.byId('compare-flip').uncheck();
        assert.deepEqual(await shown(), [true, false], 'and back');
      },
      { viewport: PHONE },
    );
  });

  for (const embed of ['1', '0']) {
    test(`in an LMS frame (embed=${embed}) the posted height never decreases while the page loads`, async () => {
      const html = `<!doctype html><html><body style="margin:0">
<script>
  window.heights = [];
  addEventListener('message', (e) => {
    const data = typeof e.data === 'string' ? JSON.parse(e.data) : e.data;
    if (data.subject === 'lti.frameResize') {
      window.heights.push(data.height);
      document.getElementById('lesson').style.height = data.height + 'px';
    }
  });
</script>
<iframe id="lesson" src="${env.server.url}?embed=${embed}&lang=en&scenario=idempotency-key" style="width:100%;height:300px;border:0"></iframe>
</body></html>`;
      const host = createServer((req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end(html));
      await new Promise((resolve) => host.listen(0, '127.0.0.1', resolve));
      const context = await env.browser.newContext({ viewport: WIDE });
      try {
        const page = await context.newPage();
        await page.goto(`http://localhost:${host.address().port}/`);
        await page.frameLocator('iframe').getByTestId('app-ready').waitFor({ state: 'attached', timeout: 20_000 });
        // The panes and the diagram come a frame after the lab's core: until the host has
        // the height the lesson has once they are in.
        await page.frameLocator('iframe').getByTestId('pane-sequence').waitFor();
        const final = await page.frames()[1].evaluate(() => Math.ceil(document.documentElement.getBoundingClientRect().height));
        await page.waitForFunction((h) => window.heights.at(-1) >= h, final);
        const heights = await page.evaluate(() => window.heights);
        console.log(`embed=${embed}: posted heights ${heights.join(' → ')}`);
        const drops = heights.filter((h, i) => i > 0 && h < heights[i - 1]);
        assert.deepEqual(drops, [], `never smaller than the height before: ${heights.join(' → ')}`);
      } finally {
        await context.close();
        await new Promise((resolve) => host.close(resolve));
      }
    });
  }
});
