// Trunk post_build hook (release builds only): minify the JavaScript (wasm-bindgen's
// glue, boot.js, scorm.js) with terser and the CSS by removing comments and spaces.
// Trunk's own minifier cannot parse the glue (it warns and copies it as it is), so
// Trunk.toml leaves minification to this hook. Saves ~2.5 KB gzip of the page's 200 KB
// budget. The page carries no `integrity` attributes (Trunk.toml `no_sri`), so changing
// a file's bytes needs no change to index.html. e2e/prerender.mjs runs after this.

import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { minify } from 'terser';

const dir = process.env.TRUNK_STAGING_DIR;
if (!dir) throw new Error('TRUNK_STAGING_DIR is not set: this script runs as a Trunk hook');
if (process.env.TRUNK_PROFILE !== 'release') process.exit(0);


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
  console.log(`minify: ${file} ${before.length} -> ${after.length} bytes`);
}
