// Accessibility (issue 13, item 6): axe-core (pinned in package.json) against the
// release build under the strict CSP, at 360 and 1440 px, in both languages, in the
// light and the dark theme, at three moments: the top of the page, mid-run (messages
// in flight, rows changed) and with a question open. No violation of impact serious or
// critical is allowed; the others are printed as diagnostics.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, test } from 'node:test';

import { releaseBuildHarness } from './lab-page.mjs';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** Runs axe on the page (evaluated through the driver, so the page's CSP does not apply). */
export async function axe(page) {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE);
  return page.evaluate(() =>
    window.axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] },
      resultTypes: ['violations'],
    }).then((r) => r.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      nodes: v.nodes.length,
      targets: v.nodes.slice(0, 3).map((n) => n.target.join(' ')),
      summary: v.nodes[0]?.failureSummary?.split('\n').slice(0, 3).join(' '),
    }))));
}

const MOMENTS = {
  top: { query: {}, ready: '[data-testid=prose-before] section' },
  'mid-run': { query: { scenario: 'idempotency-key', step: '6' }, ready: '[data-testid=prose-before] section' },
  question: { query: { scenario: 'naive-post', step: 'decisive' }, ready: '[data-testid=predict]' },
};

describe('accessibility: axe-core (release build, strict CSP)', { timeout: 300_000 }, () => {
  const env = releaseBuildHarness();

  for (const lang of ['en', 'ru']) {
    for (const width of [360, 1440]) {
      test(`${lang} at ${width} px, light and dark: no serious or critical violation`, async (t) => {
        const found = [];
        for (const scheme of ['light', 'dark']) {
          for (const [moment, { query, ready }] of Object.entries(MOMENTS)) {
            const q = '?' + new URLSearchParams({ lang, seed: '1', ...query }).toString();
            await env.withLab(q, async (lab) => {
              await lab.page.waitForSelector(ready);
              for (const v of await axe(lab.page)) found.push({ scheme, moment, ...v });
            }, { viewport: { width, height: width < 700 ? 740 : 900 }, context: { colorScheme: scheme }, progress: null });
          }
        }
        const bad = found.filter((v) => v.impact === 'serious' || v.impact === 'critical');
        for (const v of found) t.diagnostic(`${v.impact} ${v.id} (${v.scheme}, ${v.moment}): ${v.nodes} × ${v.targets.join(' | ')}`);
        assert.deepEqual(bad.map((v) => `${v.id} (${v.scheme}, ${v.moment}): ${v.targets.join(' | ')} — ${v.summary}`), []);
      });
    }
  }
});
