// Issue 26 in headless Chromium against the release build: one idea at a time. The
// step's narration is beside the moving picture while a run plays, at 1440 × 900 and
// 360 × 800, in both languages; the lab's first screen offers few controls (the
// defences, the client and what else could happen wait in sections the reader opens);
// the sequence diagram is one Tab stop; Explore asked at the end of a run explores.

import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { describe, test } from 'node:test';

import { LANGS, PAGES } from './dist.mjs';
import { SCENARIOS } from './catalogue.mjs';
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
          const n = document.querySelector('[data-testid=narration]');
          const r = n.getBoundingClientRect();
          const bar = document.querySelector('[data-testid=outcome]');
          const sticky = getComputedStyle(bar).position === 'sticky';
          const b = bar.getBoundingClientRect();
          // The bar covers the narration only where it is stuck over it, below it in the flow.
          const cover = sticky && b.top < r.bottom && b.bottom > r.top ? b.top : innerHeight;
          const last = seen.at(-1);
          if (!last || last.k !== Number(m[1])) {
            // `fits`: no word of it (a quoted JSON reply) runs past the box's edge.
            seen.push({ k: Number(m[1]), top: r.top, bottom: r.bottom, left: r.left, right: r.right, cover, width: innerWidth, fits: n.scrollWidth <= n.clientWidth });
          }
          if (m[1] === m[2]) resolve(seen);
          else requestAnimationFrame(look);
        };
        look();
      }),
  );
}

/**
 * Where the narration's whole box is, against the viewport and the outcome bar where
 * that bar sticks to the bottom edge (a phone): `clear` when it is inside the viewport
 * and not under the bar; `fits` when no word runs past the box (a quoted JSON reply).
 */
const narrationPlace = (lab) =>
  lab.page.evaluate(() => {
    const n = document.querySelector('[data-testid=narration]');
    const r = n.getBoundingClientRect();
    const bar = document.querySelector('[data-testid=outcome]');
    const b = bar.getBoundingClientRect();
    const sticky = getComputedStyle(bar).position === 'sticky';
    const cover = sticky && b.top < r.bottom && b.bottom > r.top ? b.top : innerHeight;
    const step = document.querySelector('[data-testid=step-counter]').textContent;
    return { step, top: r.top, bottom: r.bottom, cover, clear: r.top >= 0 && r.bottom <= cover && r.left >= 0 && r.right <= innerWidth, fits: n.scrollWidth <= n.clientWidth };
  });

/** In the page: the sequence diagram's lane names that touch a neighbour on their line (with a 2 px gap). */
const touchingLaneNames = (lab) =>
  lab.page.evaluate(() => {
    const names = [...document.querySelectorAll('.sequence .seq__heads .seq__lane-name')].map((e) => ({ text: e.textContent, box: e.getBBox() }));
    const out = [];
    names.forEach((a, i) =>
      names.slice(i + 1).forEach((b) => {
        const sameLine = a.box.y < b.box.y + b.box.height && b.box.y < a.box.y + a.box.height;
        if (sameLine && a.box.x + a.box.width + 2 > b.box.x) out.push(`${a.text} | ${b.text}`);
      }),
    );
    return { out, count: names.length };
  });

/** Presses Explore and waits until the search and the truth table are both done. */
async function exploreTruth(lab) {
  await lab.byId('btn-explore').click();
  await lab.page.waitForSelector('[data-testid="explore-result"][data-done="1"]', { timeout: 120_000 });
  await lab.byId('truth-cell').first().waitFor();
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
            const spills = seen.filter((s) => !s.fits);
            assert.deepEqual(spills, [], `the narration's words run past its box: ${JSON.stringify(spills.slice(0, 3))}`);
            await lab.screenshot(`layout-try-${lang}-${name}.png`);
          },
          { viewport, sections: 'closed' },
        );
      });
    }

    test(`${lang} 360: on a link to a step the narration's whole box is clear of the sticky outcome bar, at that step and every later one`, async () => {
      await env.withLab(
        q({ lang, scenario: 'idempotency-key', step: '6' }),
        async (lab) => {
          // The page brings the lab into view by itself (no scrolling by the test).
          await lab.page.waitForFunction(() => scrollY > 0 && Math.abs(document.querySelector('[data-testid=topology]').getBoundingClientRect().top) < 2);
          const seen = [await narrationPlace(lab)];
          await lab.page.screenshot({ path: `e2e/artifacts/layout-deep-link-${lang}-360.png` });
          const n = Number((await lab.text('step-counter')).split('/')[1]);
          for (let k = 7; k <= n; k++) {
            await lab.page.keyboard.press('ArrowRight');
            await lab.waitForStep(k, n);
            seen.push(await narrationPlace(lab));
          }
          const out = seen.filter((p) => !p.clear || !p.fits);
          assert.deepEqual(out, [], `the narration goes under the sticky bar or out of view, or its words run past its box: ${JSON.stringify(out.slice(0, 3))}`);
        },
        { viewport: PHONE, sections: 'closed' },
      );
    });

    test(`${lang}: the truth table has no clipped cell at 1440 and shows every verdict at 360`, async () => {
      for (const scenario of ['ttl-expiry', 'crash-after-charge']) {
        for (const [name, viewport] of SIZES) {
          await env.withLab(
            q({ lang, scenario }),
            async (lab) => {
              await exploreTruth(lab);
              await lab.byId('truth-cell').first().scrollIntoViewIfNeeded();
              const cells = await lab.page.evaluate(() => {
                const box = document.querySelector('.xtable');
                const b = box.getBoundingClientRect();
                const cells = [...box.querySelectorAll('th, td')].filter((c) => c.checkVisibility());
                return {
                  sideways: box.scrollWidth > box.clientWidth + 1,
                  verdicts: [...box.querySelectorAll('[data-testid=truth-cell]')].map((c) => ({
                    shown: c.checkVisibility() && c.innerText.trim().length > 0,
                  })),
                  clipped: cells
                    .filter((c) => {
                      const r = c.getBoundingClientRect();
                      return r.left < b.left - 1 || r.right > b.right + 1 || r.right > innerWidth || c.scrollWidth > c.clientWidth + 1;
                    })
                    .map((c) => c.innerText.trim().slice(0, 30)),
                };
              });
              assert.ok(cells.verdicts.length > 0, 'a verdict');
              assert.ok(cells.verdicts.every((v) => v.shown), `${scenario} ${name}: every verdict shown`);
              assert.equal(cells.sideways, false, `${scenario} ${name}: the table does not scroll sideways`);
              assert.deepEqual(cells.clipped, [], `${scenario} ${name}: no clipped cell`);
              if (scenario === 'ttl-expiry') await lab.page.screenshot({ path: `e2e/artifacts/layout-truth-${lang}-${name}.png` });
            },
            { viewport },
          );
        }
      }
    });

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

    test(`${lang} 360: every switch's box is as wide as it is tall and every progress tick as wide as the others, however their labels wrap`, async () => {
      await env.withLab(
        q({ lang, scenario: 'receipt-email' }),
        async (lab) => {
          const boxes = await lab.page.evaluate(() =>
            [...document.querySelectorAll('#lab input[type=checkbox]')]
              .filter((e) => e.checkVisibility())
              .map((e) => ({ id: e.id || e.dataset.testid || e.dataset.bound, ...e.getBoundingClientRect().toJSON() })),
          );
          assert.ok(boxes.length >= 10, `switches seen: ${boxes.length}`);
          const squeezed = boxes.filter((b) => Math.abs(b.width - b.height) > 0.5);
          assert.deepEqual(squeezed, [], 'a switch squeezed by its label');
          // The progress list's ticks, beside names that wrap and names that do not.
          const ticks = await lab.page.evaluate(() => [...document.querySelectorAll('.checklist .tick')].map((e) => e.getBoundingClientRect().width));
          assert.ok(ticks.length >= 32, `ticks seen: ${ticks.length}`);
          assert.ok(Math.max(...ticks) - Math.min(...ticks) < 0.5, `the ticks' widths: ${[...new Set(ticks)].join(', ')}`);
        },
        { viewport: PHONE },
      );
    });

    test(`${lang} 360: no lane name of the sequence diagram touches its neighbour, in any scenario`, async () => {
      const touching = [];
      let names = 0;
      for (const scenario of SCENARIOS) {
        await env.withLab(
          q({ lang, scenario, step: '3' }),
          async (lab) => {
            await lab.page.locator('.sequence .seq__lane-name').first().waitFor({ state: 'attached' });
            const found = await touchingLaneNames(lab);
            names += found.count;
            touching.push(...found.out.map((c) => `${scenario}: ${c}`));
          },
          { viewport: PHONE, sections: 'closed' },
        );
      }
      assert.ok(names >= 3 * SCENARIOS.length, `lane names seen: ${names}`);
      assert.deepEqual(touching, [], 'lane names that touch');
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

    test(`${lang} 1440: the lab's first screen has at most 12 controls, the disabled ones counted, in every scenario`, async () => {
      const over = [];
      for (const scenario of SCENARIOS) {
        await env.withLab(
          q({ lang, scenario }),
          async (lab) => {
            await lab.scrollToLab();
            const shown = await visibleControls(lab, true);
            console.log(`${lang} ${scenario}: ${shown.length} controls in the first screen: ${shown.join(', ')}`);
            if (shown.length > 12) over.push(`${scenario}: ${shown.length} (${shown.join(', ')})`);
            if (scenario === 'idempotency-key') await lab.page.screenshot({ path: `e2e/artifacts/layout-first-screen-${lang}-${scenario}.png` });
          },
          { viewport: WIDE, sections: 'closed' },
        );
      }
      assert.deepEqual(over, [], 'more than 12 controls in the first screen');
    });

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

  for (const [name, viewport] of SIZES) {
    test(`${name}: in every scenario's run no label of the sequence diagram crosses another arrow, its head, a mark or another label`, async () => {
      const crossings = [];
      let labels = 0;
      for (const scenario of SCENARIOS) {
        await env.withLab(
          q({ lang: 'en', scenario }),
          async (lab) => {
            await lab.toEnd();
            const found = await lab.page.evaluate(() => {
              const svg = document.querySelector('.sequence svg[role=group]');
              const arrows = [...svg.querySelectorAll('[data-testid=seq-arrow]')];
              const box = (r, pad = 0) => ({ l: r.x - pad, t: r.y - pad, r: r.x + r.width + pad, b: r.y + r.height + pad });
              const meets = (a, b) => a.l < b.r - 0.5 && b.l < a.r - 0.5 && a.t < b.b - 0.5 && b.t < a.b - 0.5;
              // Whether the segment crosses the box: its part inside the box's rows, against the box's columns.
              const crosses = (s, a) => {
                const [x1, y1, x2, y2] = s;
                const at = (y) => Math.min(1, Math.max(0, (y - y1) / (y2 - y1)));
                if (y1 === y2) return y1 > a.t + 0.5 && y1 < a.b - 0.5 && Math.max(x1, x2) > a.l + 0.5 && Math.min(x1, x2) < a.r - 0.5;
                const [p, q] = [at(a.t + 0.5), at(a.b - 0.5)];
                if (p === q) return false;
                const [xa, xb] = [x1 + (x2 - x1) * p, x1 + (x2 - x1) * q];
                return Math.max(xa, xb) > a.l + 0.5 && Math.min(xa, xb) < a.r - 0.5;
              };
              const drawn = arrows.map((g) => {
                const line = g.querySelector('line:not(.seq__hit)');
                const seg = ['x1', 'y1', 'x2', 'y2'].map((k) => line[k].baseVal.value);
                const label = g.querySelector('.seq__label');
                // A lost message's ✕; a found one's dot; the head: the marker's triangle
                // (9.8 units long and wide, its tip a unit past the line's end), its box.
                const marks = [...g.querySelectorAll('.seq__x, circle')].map((e) => box(e.getBBox()));
                if (line.getAttribute('marker-end')) {
                  const [x1, y1, x2, y2] = seg;
                  const len = Math.max(1, Math.hypot(x2 - x1, y2 - y1));
                  const [ux, uy] = [(x2 - x1) / len, (y2 - y1) / len];
                  const [bx, by] = [x2 - 8.8 * ux, y2 - 8.8 * uy];
                  const xs = [x2 + ux, bx - 4.9 * uy, bx + 4.9 * uy];
                  const ys = [y2 + uy, by + 4.9 * ux, by - 4.9 * ux];
                  marks.push({ l: Math.min(...xs), t: Math.min(...ys), r: Math.max(...xs), b: Math.max(...ys) });
                }
                return { seg, marks, label: label && box(label.getBBox()), text: label?.textContent, step: g.dataset.step };
              });
              const glyphs = [...svg.querySelectorAll('.seq__mark')].map((e) => box(e.getBBox()));
              const out = [];
              drawn.forEach((d, i) => {
                if (!d.label) return;
                drawn.forEach((o, j) => {
                  if (i === j) return;
                  if (crosses(o.seg, d.label)) out.push(`${d.text} (step ${d.step}) crosses the arrow of step ${o.step}`);
                  if (o.marks.some((m) => meets(m, d.label))) out.push(`${d.text} (step ${d.step}) covers a head of step ${o.step}`);
                  if (o.label && meets(o.label, d.label)) out.push(`${d.text} (step ${d.step}) meets ${o.text}`);
                });
                if (glyphs.some((m) => meets(m, d.label))) out.push(`${d.text} (step ${d.step}) covers a mark`);
              });
              return { out, labels: drawn.filter((d) => d.label).length };
            });
            labels += found.labels;
            crossings.push(...found.out.map((c) => `${scenario}: ${c}`));
            const names = await touchingLaneNames(lab);
            crossings.push(...names.out.map((c) => `${scenario}: the lane names ${c} touch`));
          },
          { viewport, sections: 'closed' },
        );
      }
      console.log(`${name}: ${labels} labels drawn`);
      assert.ok(labels > 100, `labels drawn: ${labels}`);
      assert.deepEqual(crossings, [], 'a label crosses');
    });
  }

  test('1440: a cut label of the sequence diagram shows its whole text on focus, as on hover', async () => {
    await env.withLab(
      q({ lang: 'en', scenario: 'concurrent-duplicates' }),
      async (lab) => {
        await lab.toEnd();
        const seq = lab.page.locator('.sequence').first();
        await seq.focus();
        // The arrow keys go from arrow to arrow: to the first whose label is cut.
        const cut = await lab.page.evaluate(() =>
          [...document.querySelectorAll('.sequence [data-testid=seq-arrow]')].findIndex((g) => g.querySelector('.seq__full')),
        );
        assert.ok(cut >= 0, 'a cut label');
        for (let i = 0; i <= cut; i++) await lab.page.keyboard.press('ArrowDown');
        const shown = await lab.page.evaluate(() => {
          const g = document.activeElement;
          const full = g.querySelector('.seq__full');
          return { full: full.checkVisibility() ? full.textContent : null, title: g.querySelector('title').textContent };
        });
        assert.equal(shown.full, shown.title, 'the whole label on focus');
      },
      { viewport: WIDE, sections: 'closed' },
    );
  });

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
