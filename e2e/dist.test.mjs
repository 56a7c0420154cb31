// Static checks of the release build in dist/: size budget and deployability.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';

import { SCENARIOS } from './catalogue.mjs';
import { chooser, policy, sha256 } from '../build/prerender.mjs';
import { policyOf } from './server.mjs';

import {
  assertDistBuilt,
  BARE_EXTRA_BYTES,
  CHOOSER,
  DIST,
  GZIP_BUDGET_BYTES,
  LANGS,
  LESSON_DIR,
  PAGES,
  WORKER_DIR,
  WORKER_GZIP_BUDGET_BYTES,
  chooserSizes,
  distFiles,
  pageLoadSizes,
  workerSizes,
} from './dist.mjs';

describe('dist/ (release build)', () => {
  const pages = {};

  before(() => {
    assertDistBuilt();
    for (const [lang, page] of Object.entries(PAGES)) pages[lang] = readFileSync(path.join(DIST, page), 'utf8');
  });

  for (const lang of LANGS) {
    test(`a page load in ${lang} transfers at most ${GZIP_BUDGET_BYTES} bytes gzip`, (t) => {
      const { files, total } = pageLoadSizes(lang);
      for (const f of files) t.diagnostic(`${f.file}: ${f.raw} raw, ${f.gzip} gzip`);
      t.diagnostic(`total: ${total.raw} raw, ${total.gzip} gzip (budget ${GZIP_BUDGET_BYTES})`);
      assert.ok(files.some((f) => f.file === PAGES[lang]), `the page of ${lang} is counted`);
      assert.ok(!files.some((f) => Object.values(PAGES).includes(f.file) && f.file !== PAGES[lang]), 'not the other page');
      assert.ok(!files.some((f) => f.file === `${LESSON_DIR}${lang}.html`), 'the sections are in the page, not fetched');
      assert.ok(
        total.gzip <= GZIP_BUDGET_BYTES,
        `a page load in ${lang} weighs ${total.gzip} bytes gzip, over the budget of ${GZIP_BUDGET_BYTES}`,
      );
    });
  }

  test(`the bare address (${CHOOSER}) only chooses the page: it adds at most ${BARE_EXTRA_BYTES} bytes gzip to a load in either language`, (t) => {
    const { files, total } = chooserSizes();
    for (const f of files) t.diagnostic(`${f.file}: ${f.raw} raw, ${f.gzip} gzip`);
    assert.ok(total.gzip <= BARE_EXTRA_BYTES, `the chooser weighs ${total.gzip} bytes gzip`);
    const html = readFileSync(path.join(DIST, CHOOSER), 'utf8');
    // What the hook wrote: the chooser of the shell's title, its script inline (allowed by
    // its hash in its own policy) and as the file a host's strict policy leaves to run.
    const title = html.match(/<title>([^<]*)<\/title>/)[1];
    const made = chooser(title);
    assert.equal(html, made.html);
    assert.equal(readFileSync(path.join(DIST, files[1].file), 'utf8').trim(), made.script);
    assert.equal(policyOf(html), `default-src 'self'; script-src 'self' '${sha256(made.script)}'`);
    for (const page of Object.values(PAGES)) assert.ok(html.includes(`href="./${page}"`), `a link to ${page} without script`);
    assert.ok(!html.includes('<style'), 'no style');
  });

  test(`the explorer's worker weighs at most ${WORKER_GZIP_BUDGET_BYTES} bytes gzip and no page load counts it`, (t) => {
    const { files, total } = workerSizes();
    for (const f of files) t.diagnostic(`${f.file}: ${f.raw} raw, ${f.gzip} gzip`);
    assert.deepEqual(
      files.map((f) => f.file).sort(),
      [
        `${WORKER_DIR}explore-worker.js`,
        `${WORKER_DIR}explore-worker_bg.wasm`,
        `${WORKER_DIR}loader.js`,
        ...LANGS.map((lang) => `${WORKER_DIR}text/${lang}.txt`),
      ].sort(),
    );
    assert.ok(total.gzip <= WORKER_GZIP_BUDGET_BYTES, `the worker weighs ${total.gzip} bytes gzip`);
    for (const lang of LANGS) {
      assert.ok(pageLoadSizes(lang).files.every((f) => !f.file.startsWith(WORKER_DIR)), lang);
    }
    for (const lang of LANGS) {
      assert.ok(!pages[lang].includes(WORKER_DIR), `${PAGES[lang]} names no worker file (nothing of it is fetched at load)`);
    }
  });

  test('the lesson text is there for both languages and every scenario, and nothing else is', () => {
    const lesson = distFiles().filter((f) => f.startsWith(LESSON_DIR));
    for (const lang of LANGS) {
      assert.ok(lesson.includes(`${LESSON_DIR}${lang}.html`), `${lang}.html`);
      assert.equal(lesson.filter((f) => f.startsWith(`${LESSON_DIR}${lang}/`)).length, SCENARIOS.length, `${lang}/: every scenario`);
    }
    assert.equal(lesson.length, 2 * (SCENARIOS.length + 1));
  });

  for (const lang of LANGS) {
    const page = PAGES[lang];

    test(`${page} has one inline style and one inline script, both allowed by hash in its own policy, and nothing else inline`, () => {
      const html = pages[lang];
      const styles = [...html.matchAll(/<style>([\s\S]*?)<\/style>/gi)];
      assert.equal(styles.length, 1, 'one <style>: the style sheet, inline (build/prerender.mjs)');
      assert.equal((html.match(/<style\b/gi) ?? []).length, 1, 'no other <style>');
      const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
      const inline = scripts.filter(([, attrs]) => !/\bsrc=/.test(attrs));
      assert.equal(inline.length, 1, 'one inline script: boot.js and scorm.js');
      assert.equal(inline[0][1], '', 'the inline script is a classic script');
      for (const [tag, attrs, body] of scripts.filter(([, attrs]) => /\bsrc=/.test(attrs))) {
        assert.equal(body.trim(), '', `script with src and code: ${tag.slice(0, 120)}`);
      }
      // The fallback for a host that refuses both (build/prerender.mjs): its files hold the texts inlined.
      const late = [...html.matchAll(/<script src="\.\/(fallback-[0-9a-f]{16}\.js)" defer><\/script>/g)];
      assert.equal(late.length, 1, 'one deferred fallback script');
      const text = readFileSync(path.join(DIST, late[0][1]), 'utf8');
      const wants = [...text.matchAll(/"(fallback\/[^"]+)"/g)].map((m) => m[1]);
      assert.equal(wants.length, 2, `the fallback names the style sheet and the script: ${text}`);
      assert.deepEqual(wants.map((f) => readFileSync(path.join(DIST, f), 'utf8')), [styles[0][1], inline[0][2]], 'the fallback\'s files are the inline texts');
      // No other script: scorm.js is in the inline one.
      assert.deepEqual(scripts.map(([, attrs]) => attrs.trim()), ['', `src="./${late[0][1]}" defer`], 'the inline script and the fallback only');
      // The policy is the page's own, first in <head>, and the header the test server
      // sends (e2e/server.mjs policyOf): the strict one plus exactly these two hashes.
      assert.equal(policyOf(html), policy(sha256(styles[0][1]), sha256(inline[0][2])));
      assert.match(html, /^<!doctype html><html lang="[a-z]+"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy"/i);
      assert.doesNotMatch(policyOf(html), /'unsafe-inline'|'unsafe-eval'|\*|data:|https?:/);
      assert.doesNotMatch(html, /\sstyle\s*=/i, 'inline style attribute');
      assert.doesNotMatch(html, /\son[a-z]+\s*=/i, 'inline event handler attribute');
      assert.doesNotMatch(html, /rel="(module)?preload"/, 'no preload: boot.js fetches the glue and the module itself');
    });

    test(`${page} refers to its assets by relative paths`, () => {
      const attr = /\b(?:src|href|data-js|data-wasm)=(?:"([^"]*)"|'([^']*)'|([^\s>]+))/gi;
      const refs = [...pages[lang].matchAll(attr)].map((m) => m[1] ?? m[2] ?? m[3]);
      assert.ok(refs.length > 0);
      for (const ref of refs) {
        assert.doesNotMatch(ref, /^(\/|[a-z]+:)/i, `absolute reference in ${page}: ${ref}`);
      }
    });

    test(`${page} is the shell with the sections of ${lang} in it: one id once, the same assets as the other page`, () => {
      const html = pages[lang];
      assert.match(html, new RegExp(`^<!doctype html><html lang="${lang}">`, 'i'));
      const ids = [...html.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]);
      assert.deepEqual(ids.filter((id, i) => ids.indexOf(id) !== i), [], 'ids used twice');
      for (const id of ['page', 'page-header', 'lab', 'lab-title']) assert.ok(ids.includes(id), `#${id}`);
      const head = (h) => h.slice(0, h.indexOf('</head>')).replace(/<html lang="[^"]*"|<title>[^<]*|content="[^"]*"/g, '');
      assert.equal(head(html), head(pages.en), `the same head as ${PAGES.en} but for the language`);
    });
  }
});
