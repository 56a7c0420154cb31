// Trunk post_build hook (release builds only): minify the JavaScript (wasm-bindgen's
// glue, boot.js, scorm.js) with terser and the CSS by removing comments and spaces, and keep
// index.html's integrity attributes right (and off the wasm preload, where they are ignored). Trunk's own minifier cannot parse the glue
// (it warns and copies it as it is), so Trunk.toml leaves minification to this hook.
// Saves ~2.5 KB gzip of the page's 200 KB budget.

import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { minify } from 'terser';

const dir = process.env.TRUNK_STAGING_DIR;
if (!dir) throw new Error('TRUNK_STAGING_DIR is not set: this script runs as a Trunk hook');
if (process.env.TRUNK_PROFILE !== 'release') process.exit(0);

const sri = (bytes) => 'sha384-' + createHash('sha384').update(bytes).digest('base64');
const indexPath = path.join(dir, 'index.html');
let index = readFileSync(indexPath, 'utf8');

/** Comments and spaces out of CSS; quoted strings (`content: ": "`) are kept as they are. */
const minifyCss = (css) =>
  css
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .split(/("[^"]*"|'[^']*')/)
    .map((part, i) =>
      i % 2 === 1
        ? part
        : part
            .replace(/\s+/g, ' ')
            .replace(/\s*([{}:;,>])\s*/g, '$1')
            .replace(/;}/g, '}'),
    )
    .join('')
    .trim();

for (const file of readdirSync(dir).filter((f) => f.endsWith('.js') || f.endsWith('.css'))) {
  const full = path.join(dir, file);
  const before = readFileSync(full);
  const text = before.toString('utf8');
  const after = file.endsWith('.css')
    ? minifyCss(text)
    : (await minify(text, { module: true, compress: { passes: 2 }, mangle: true, format: { comments: false } })).code;
  writeFileSync(full, after);
  const old = sri(before);
  if (index.includes(old)) index = index.replaceAll(old, sri(Buffer.from(after)));
  console.log(`minify: ${file} ${before.length} -> ${after.length} bytes`);
}
// Chromium ignores `integrity` on a preload of a destination without SRI (the wasm,
// `as="fetch"`) and warns on every load; boot.js fetches the module itself.
index = index.replace(/(<link rel="preload"[^>]*?) integrity="[^"]*"([^>]*as="fetch")/, '$1$2');
writeFileSync(indexPath, index);
