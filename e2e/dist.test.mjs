// Static checks of the release build in dist/: size budget and deployability.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';

import { assertDistBuilt, DIST, distSizes, GZIP_BUDGET_BYTES } from './dist.mjs';

describe('dist/ (release build)', () => {
  let html;

  before(() => {
    assertDistBuilt();
    html = readFileSync(path.join(DIST, 'index.html'), 'utf8');
  });

  test(`total gzip size is within the budget of ${GZIP_BUDGET_BYTES} bytes`, (t) => {
    const { files, total } = distSizes();
    for (const f of files) t.diagnostic(`${f.file}: ${f.raw} raw, ${f.gzip} gzip`);
    t.diagnostic(`total: ${total.raw} raw, ${total.gzip} gzip (budget ${GZIP_BUDGET_BYTES})`);
    assert.ok(
      total.gzip <= GZIP_BUDGET_BYTES,
      `dist/ weighs ${total.gzip} bytes gzip, over the budget of ${GZIP_BUDGET_BYTES}`,
    );
  });

  test('index.html has no inline script, inline style or style attribute', () => {
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
    assert.ok(scripts.length > 0, 'index.html loads a script');
    for (const [tag, attrs, body] of scripts) {
      assert.match(attrs, /\bsrc=/, `script without src: ${tag.slice(0, 120)}`);
      assert.equal(body.trim(), '', `script with inline code: ${tag.slice(0, 120)}`);
    }
    assert.doesNotMatch(html, /<style\b/i, 'inline <style> element');
    assert.doesNotMatch(html, /\sstyle\s*=/i, 'inline style attribute');
    assert.doesNotMatch(html, /\son[a-z]+\s*=/i, 'inline event handler attribute');
  });

  test('index.html refers to its assets by relative paths', () => {
    const attr = /\b(?:src|href|data-js|data-wasm)=(?:"([^"]*)"|'([^']*)'|([^\s>]+))/gi;
    const refs = [...html.matchAll(attr)].map((m) => m[1] ?? m[2] ?? m[3]);
    assert.ok(refs.length > 0);
    for (const ref of refs) {
      assert.doesNotMatch(ref, /^(\/|[a-z]+:)/i, `absolute reference in index.html: ${ref}`);
    }
  });
});
