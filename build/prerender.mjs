// Trunk post_build hook, after minify.mjs (Trunk.toml runs them in this order): the
// lesson's text at first paint. Writes one page per language into the staging dir:
// en.html in English and ru.html in Russian, each Trunk's index.html with every
// `data-prerender="NAME"` slot filled by the part NAME of the sections fragment
// public/lesson/<lang>.html, and its <html lang>, <title> and description set from the
// parts `title` and `description`. The fragments are rendered by src/lesson/fragment.rs
// and kept fresh by the test `fragments_are_fresh`: the prose has one source. Runs in
// debug builds too (`make serve`), so the page served there is the same shell.
// index.html, the bare address, becomes a page of a few hundred bytes that only sends
// the reader on to the page of their language (`chooser`), so neither language pays for
// the other's prose before its own (issue 28: a Russian reader downloaded the English
// page, 24 KB gzip, before the redirect). boot.js follows `lang=` of a link on either page.
//
// It also puts the style sheet and the page's scripts into each page (`inline`): the
// style sheet and boot.js block the first paint, and as files they cost a round trip
// before it (on a loaded machine the largest part of the gap to a static page: issue 13,
// item 3). scorm.js follows boot.js in the same inline script, each in its own scope:
// one request fewer and 151-159 B gzip less per page load than as a module file of its own.
// The page keeps a strict policy: a <meta http-equiv="Content-Security-Policy"> first in
// <head> allows exactly these two elements by their sha256, and nothing else inline
// (e2e/server.mjs sends that policy as the header too; a host may send it, or none).
//
// A host may send a strict header of its own, without the hashes (`style-src 'self'`, as
// many LMSs and CDNs do): both inline elements are then refused. For that host their
// texts are files in dist/fallback/, and a small deferred script of the page's own origin
// (`fallback-HASH.js`, the one file the inline elements cost a normal load) brings each
// one whose inline copy did not run: the style sheet if the inline <style> has no sheet,
// the script if it did not mark the window (`idemBoot`). The lab then starts after the
// page is parsed rather than after its first frame, and the language redirect comes late.
//
// The fallback stays deferred, not async: DOMContentLoaded then waits for it, and the
// page's first frame comes while it does. Async, DOMContentLoaded came about 45 ms
// sooner and the lab answered about 12 ms sooner, but the text was painted about 24 ms
// later (the lab's start took the frame's place: issue 28, item 3). Measured again with
// `make bench` (BENCH_ONLY=interactive, 15 loads against this build): async, the lab
// was responsive at 141 ms against 146 and the English text painted at 144 ms against 128.

import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * The page of each language, side by side in dist/ so relative paths stay right; the
 * chooser and boot.js send a reader to theirs (src/lesson/fragment.rs `page_file` names
 * them alike).
 */
export const PAGES = { en: 'en.html', ru: 'ru.html' };

/** The bare address: the chooser, which only sends the reader on to a page of PAGES. */
export const CHOOSER = 'index.html';

/**
 * The style sheet and boot.js as files: each page carries both inline; its
 * `fallback-*.js` fetches them from here only where a host's policy refused those.
 */
export const FALLBACK_DIR = 'fallback/';

/** The parts of a fragment: `<!--@name-->` lines, as src/lesson/fragment.rs `parts`. */
export function parts(fragment) {
  const out = new Map();
  for (const chunk of fragment.split('<!--@').slice(1)) {
    const end = chunk.indexOf('-->');
    if (end < 0) continue;
    out.set(chunk.slice(0, end), chunk.slice(end + 3).replace(/^\n+|\n+$/g, ''));
  }
  return out;
}

/** The shell `html` with the sections `fragment` of `lang` written into it. */
export function prerender(html, fragment, lang) {
  const part = parts(fragment);
  const need = (name) => {
    if (!part.has(name)) throw new Error(`prerender: public/lesson/${lang}.html has no part '${name}'`);
    return part.get(name);
  };
  const once = (text, re, to, what) => {
    let n = 0;
    const out = text.replace(re, (...m) => (n++, to(...m)));
    if (n !== 1) throw new Error(`prerender: expected one ${what} in index.html, found ${n}`);
    return out;
  };
  let out = once(html, /<html lang="[^"]*"/, () => `<html lang="${lang}"`, '<html lang>');
  out = once(out, /<title>[^<]*<\/title>/, () => `<title>${need('title')}</title>`, '<title>');
  out = once(out, /(<meta name="description" content=")[^"]*"/, (_, a) => `${a}${need('description')}"`, 'description');
  const slots = [];
  out = out.replace(/ data-prerender="([a-z]+)">(<\/[a-z]+>)/g, (_, name, close) => {
    slots.push(name);
    return `>${need(name)}${close}`;
  });
  for (const name of ['header', 'before', 'lab', 'after', 'ui']) {
    if (slots.filter((s) => s === name).length !== 1) {
      throw new Error(`prerender: index.html needs one empty element with data-prerender="${name}"`);
    }
  }
  return out;
}

/** The page's policy: every source its own origin, the wasm compiled, and the two inline elements by hash. */
export const policy = (styleHash, scriptHash) =>
  `default-src 'self'; script-src 'self' 'wasm-unsafe-eval' '${scriptHash}'; style-src 'self' '${styleHash}'`;

/** A CSP hash source of an inline element's text. */
export const sha256 = (text) => `sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}`;

/** The name of a script file of `text`: `stem`, then the first 16 hex digits of its sha256. */
const hashed = (stem, text) => `${stem}-${createHash('sha256').update(text).digest('hex').slice(0, 16)}.js`;

/**
 * The fallback for a host whose policy refuses the page's inline elements: a deferred
 * script that adds, as files of FALLBACK_DIR, the style sheet `css` when the inline
 * <style> has no sheet and the page's script `js` when it did not run. Returns its name and text.
 */
export function fallback(css, js) {
  const text =
    `(()=>{const d=document,a=(t,p)=>d.head.append(Object.assign(d.createElement(t),p));` +
    `d.querySelector('style')?.sheet||a('link',{rel:'stylesheet',href:${JSON.stringify(FALLBACK_DIR + css)}});` +
    `window.idemBoot||a('script',{src:${JSON.stringify(FALLBACK_DIR + js)}})})();\n`;
  return { file: hashed('fallback', text), text };
}

/**
 * The shell with Trunk's style sheet link replaced by its text, and the tags of boot.js
 * and scorm.js by one script of both texts (read with `read(file)`; scorm.js, a module
 * of top-level names, in a function scope of its own) and the deferred `fallback` script
 * after it, and, with `withPolicy`, the policy that allows exactly the two inline
 * elements first in <head>. Returns the page, Trunk's files the page no longer names
 * (`spent`), the two texts the fallback asks for as files of FALLBACK_DIR (`files`: the
 * style sheet under Trunk's name, the script under its own hash) and the fallback.
 */
export function inline(shell, read, withPolicy = true) {
  const take = (re, what) => {
    const m = shell.match(re);
    if (!m || shell.match(new RegExp(re, 'g')).length !== 1) throw new Error(`prerender: expected one ${what} in index.html`);
    return m;
  };
  const [link, css] = take(/<link rel="stylesheet" href="\.\/(main-[0-9a-f]+\.css)"\/?>/, 'style sheet link');
  const [tag, boot] = take(/<script src="\.\/(boot-[0-9a-f]+\.js)"><\/script>/, 'boot.js script');
  const [scormTag, scorm] = take(/<script src="\.\/(scorm-[0-9a-f]+\.js)"><\/script>/, 'scorm.js script');
  const style = read(css).trim();
  const script = `${read(boot).trim()}\n;(()=>{\n${read(scorm).trim()}\n})();`;
  for (const [text, end] of [[style, '</style'], [script, '</script']]) {
    if (text.toLowerCase().includes(end)) throw new Error(`prerender: ${end} inside the text to inline`);
  }
  const meta = `<meta http-equiv="Content-Security-Policy" content="${policy(sha256(style), sha256(script))}">`;
  const js = hashed('boot', script);
  const late = fallback(css, js);
  let out = shell
    .replace(link, () => `<style>${style}</style>`)
    .replace(scormTag, '')
    .replace(tag, () => `<script>${script}</script><script src="./${late.file}" defer></script>`);
  if (withPolicy) {
    out = out.replace(/(<meta charset="utf-8">)/, (m) => m + meta);
    if (!out.includes(meta)) throw new Error('prerender: no <meta charset="utf-8"> to put the policy after');
  }
  return { html: out, spent: [css, boot, scorm], files: [{ file: css, text: style }, { file: js, text: script }], fallback: late };
}

/**
 * The bare address's page: a script that replaces the location by the page of the
 * reader's language, with the same query and hash. The language is `lang=` of the link
 * (`ru`, `en`, any case, with or without a region: boot.js's own `tag`, see
 * `langTag`, as Lang::parse in src/lesson/mod.rs reads it), else the browser's, else English. The script is inline,
 * allowed by its hash; where a host's policy refuses it, the same text as a file of
 * FALLBACK_DIR, deferred, does it (the mark `idemChose` keeps it to once). Without
 * script, the two pages' links. Returns the page and that file's name and text.
 */
export function chooser(title) {
  const script =
    `(()=>{if(window.idemChose)return;window.idemChose=1;const pages=${JSON.stringify(PAGES).replace(/"/g, "'")};` +
    `${langTag()}` +
    `location.replace(pages[tag(new URLSearchParams(location.search).get('lang'))??tag(navigator.language)??'en']+location.search+location.hash)})();`;
  const file = hashed('choose', script);
  const html =
    `<!doctype html><html lang="ru"><head><meta charset="utf-8">` +
    `<meta http-equiv="Content-Security-Policy" content="default-src 'self'; script-src 'self' '${sha256(script)}'">` +
    `<meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title>` +
    `<script>${script}</script><script src="./${FALLBACK_DIR}${file}" defer></script></head>` +
    `<body><noscript><p><a href="./${PAGES.ru}">Русский</a> · <a href="./${PAGES.en}" lang="en">English</a></p></noscript></body></html>\n`;
  return { html, file, script };
}

/**
 * boot.js's `tag` (a language tag's page, or null) as its source says it, lines joined:
 * the chooser runs the same text, so the two read `lang=` alike by construction.
 */
export function langTag() {
  const boot = readFileSync(new URL('../boot.js', import.meta.url), 'utf8');
  const m = boot.match(/^ *const tag = \(s\) => \{\n[\s\S]*?\n *\};$/m);
  if (!m) throw new Error('prerender: no `const tag = (s) => {…};` in boot.js');
  return m[0].trim().replace(/\s*\n\s*/g, '');
}

/** Both pages and the chooser into Trunk's staging dir. */
function main() {
const dir = process.env.TRUNK_STAGING_DIR;
if (!dir) throw new Error('TRUNK_STAGING_DIR is not set: this script runs as a Trunk hook');
// The shell's comments and the spaces between its tags go (the parts keep theirs).
const { html: shell, spent, files, fallback: late } = inline(
  readFileSync(path.join(dir, 'index.html'), 'utf8')
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/>\s+</g, '><'),
  (file) => readFileSync(path.join(dir, file), 'utf8'),
  // `make serve` (a debug build): `trunk serve` adds its live-reload script inline, which
  // the policy would block; only release builds (dist/, tested under it) carry it.
  process.env.TRUNK_PROFILE === 'release',
);
mkdirSync(path.join(dir, FALLBACK_DIR), { recursive: true });
for (const file of spent) rmSync(path.join(dir, file));
for (const { file, text } of files) writeFileSync(path.join(dir, FALLBACK_DIR, file), text);
writeFileSync(path.join(dir, late.file), late.text);
for (const [lang, page] of Object.entries(PAGES)) {
  const fragment = readFileSync(path.join(dir, 'public', 'lesson', `${lang}.html`), 'utf8');
  const html = prerender(shell, fragment, lang);
  writeFileSync(path.join(dir, page), html);
  console.log(`prerender: ${page} (${lang}), ${html.length} bytes`);
}
const choose = chooser(shell.match(/<title>([^<]*)<\/title>/)[1]);
writeFileSync(path.join(dir, FALLBACK_DIR, choose.file), choose.script + '\n');
writeFileSync(path.join(dir, CHOOSER), choose.html);
console.log(`prerender: ${CHOOSER} (the chooser), ${choose.html.length} bytes`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
