// Trunk post_build hook, after minify.mjs (Trunk.toml runs them in this order): the
// lesson's text at first paint. Writes one page per language into the staging dir:
// index.html in English and ru.html in Russian, each Trunk's index.html with every
// `data-prerender="NAME"` slot filled by the part NAME of the sections fragment
// public/lesson/<lang>.html, and its <html lang>, <title> and description set from the
// parts `title` and `description`. The fragments are rendered by src/lesson/fragment.rs
// and kept fresh by the test `fragments_are_fresh`: the prose has one source. Runs in
// debug builds too (`make serve`), so the page served there is the same shell.
// boot.js sends a reader to the page of their language.

import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

import { PAGES } from './dist.mjs';

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

/** Both pages into Trunk's staging dir. */
function main() {
const dir = process.env.TRUNK_STAGING_DIR;
if (!dir) throw new Error('TRUNK_STAGING_DIR is not set: this script runs as a Trunk hook');
// The shell's comments and the spaces between its tags go (the parts keep theirs).
const shell = readFileSync(path.join(dir, 'index.html'), 'utf8')
  .replace(/<!--[\s\S]*?-->/g, '')
  .replace(/>\s+</g, '><');
for (const [lang, page] of Object.entries(PAGES)) {
  const fragment = readFileSync(path.join(dir, 'public', 'lesson', `${lang}.html`), 'utf8');
  const html = prerender(shell, fragment, lang);
  writeFileSync(path.join(dir, page), html);
  console.log(`prerender: ${page} (${lang}), ${html.length} bytes`);
}
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) main();
