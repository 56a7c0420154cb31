// Trunk post_build hook (release builds only): minify the JavaScript (wasm-bindgen's
// glue, boot.js, scorm.js) with terser and the CSS with csso (a CSS parser, so a
// selector such as `.a :focus` keeps its meaning, which a regex could not promise).
// Trunk's own minifier cannot parse the glue (it warns and copies it as it is), so
// Trunk.toml leaves minification to this hook. Saves ~2.5 KB gzip of the page's 200 KB
// budget. The page carries no `integrity` attributes (Trunk.toml `no_sri`), so changing
// a file's bytes needs no change to index.html. build/prerender.mjs runs after this.

import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
// The build's npm packages are e2e/'s (one lockfile, one `npm ci`).
const require = createRequire(new URL('../e2e/package.json', import.meta.url));
const { minify: minifyCss } = require('csso');
const { minify } = require('terser');

const dir = process.env.TRUNK_STAGING_DIR;
if (!dir) throw new Error('TRUNK_STAGING_DIR is not set: this script runs as a Trunk hook');
if (process.env.TRUNK_PROFILE !== 'release') process.exit(0);


/**
 * The page's module and its glue speak through ~180 imports and exports whose names
 * wasm-bindgen spells out (`__wbg_set_innerHTML_a9d3a267967b5117`): 10 KB of the
 * module's import and export sections and a third of the glue. wasm-opt gives them
 * short names (`--minify-imports-and-exports-and-modules`, which prints the mapping)
 * and optimises once more (-Oz again finds more after Trunk's run); the glue is then
 * rewritten with the mapping: the keys of its imports object, the module's name, and
 * every `wasm.NAME` of an export. Any name of the mapping the glue does not use exactly
 * so, or an old name left behind, fails the build. Only the lesson's module
 * (`idempotency-lab-*`): not the worker (worker/), nor bench/counter, the yardstick of
 * `make bench`, which keeps the build it was measured with.
 * About 5 KB gzip per page load (issue 13, item 3).
 */
function shortNames(wasmFile, glueFile) {
  const local = fileURLToPath(new URL('../e2e/node_modules/.bin/wasm-opt', import.meta.url));
  const wasmOpt = existsSync(local) ? local : 'wasm-opt';
  // The flags of index.html's `rust` link (and reference types, which Trunk adds).
  // First the control flow is flattened and rebuilt (`--flatten --rereloop`), then
  // -Oz twice: −1.4 KB gzip of the module against one -Oz (a second -Oz alone gave
  // −0.2 KB, `--converge` or `--gufa` as little; Rust at opt-level "s" +21 KB).
  const out = execFileSync(
    wasmOpt,
    [wasmFile, '-o', wasmFile, '--flatten', '--rereloop', '-Oz', '-Oz', '--low-memory-unused', '--enable-bulk-memory', '--enable-nontrapping-float-to-int',
      '--enable-reference-types', '--minify-imports-and-exports-and-modules', '--strip-producers', '--strip-target-features'],
    { encoding: 'utf8', maxBuffer: 16 << 20 },
  );
  const map = JSON.parse(out.slice(out.indexOf('{')));
  let glue = readFileSync(glueFile, 'utf8');
  const once = (re, to, what) => {
    let n = 0;
    glue = glue.replace(re, () => (n++, to));
    if (n !== 1) throw new Error(`minify: ${what} found ${n} times in ${path.basename(glueFile)}`);
  };
  const modules = new Set(map.imports.map(([module]) => module));
  if (modules.size !== 1) throw new Error(`minify: imports from ${[...modules].join(', ')}, expected one module`);
  const [module] = modules;
  // The pass names every module of the imports alike; read the new name in the module.
  const renamed = importModule(readFileSync(wasmFile));
  once(new RegExp(`"${module.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}": import0,`), `${JSON.stringify(renamed)}: import0,`, `the module name ${module}`);
  for (const [, from, to] of map.imports) once(new RegExp(`\\b${from}: function\\(`), `${JSON.stringify(to)}: function(`, `the import ${from}`);
  // An export the glue does not name (`main`: `__wbindgen_start` runs it) is renamed all the same.
  for (const [from, to] of map.exports) glue = glue.replace(new RegExp(`\\bwasm\\.${from}\\b`, 'g'), `wasm.${to}`);
  for (const [, from] of map.imports) {
    if (new RegExp(`\\b${from}\\b`).test(glue)) throw new Error(`minify: the import ${from} is still named in the glue`);
  }
  for (const [from] of map.exports) {
    if (new RegExp(`[.'"]${from}\\b`).test(glue)) throw new Error(`minify: the export ${from} is still named in the glue`);
  }
  writeFileSync(glueFile, glue);
  console.log(`minify: ${map.imports.length} imports and ${map.exports.length} exports of ${path.basename(wasmFile)} renamed`);
}

/** The module name of the first import of a wasm binary. */
function importModule(bytes) {
  let i = 8;
  const leb = () => {
    let r = 0;
    for (let s = 0; ; s += 7) {
      const b = bytes[i++];
      r |= (b & 0x7f) << s;
      if (b < 0x80) return r;
    }
  };
  while (i < bytes.length) {
    const id = bytes[i++];
    const size = leb();
    if (id === 2) {
      leb(); // count
      const n = leb();
      return new TextDecoder().decode(bytes.subarray(i, i + n));
    }
    i += size;
  }
  throw new Error('minify: the module has no imports');
}

for (const wasm of readdirSync(dir).filter((f) => /^idempotency-lab-[0-9a-f]+_bg\.wasm$/.test(f))) {
  shortNames(path.join(dir, wasm), path.join(dir, wasm.replace(/_bg\.wasm$/, '.js')));
}

// The page's files, and the worker's two classic scripts (its glue and loader.js: not
// modules, so their top-level names, `wasm_bindgen` among them, stay): −1.2 KB gzip of
// the worker's 100 KB budget.
const worker = existsSync(path.join(dir, 'worker'))
  ? readdirSync(path.join(dir, 'worker')).filter((f) => f.endsWith('.js')).map((f) => `worker/${f}`)
  : [];
for (const file of [...readdirSync(dir).filter((f) => f.endsWith('.js') || f.endsWith('.css')), ...worker]) {
  const full = path.join(dir, file);
  const before = readFileSync(full);
  const text = before.toString('utf8');
  const module = !file.startsWith('worker/');
  let after = file.endsWith('.css')
    ? minifyCss(text, { restructure: false }).css
    : (await minify(text, { module, compress: { passes: 2 }, mangle: true, format: { comments: false } })).code;
  // The page's glue: V8 compiles a function of a script on its first call, on the main
  // thread, unless the script says that all of them are called as it loads (Chromium's
  // explicit compile hints, since 136): then they are compiled with the script, which is
  // streamed and compiled off the main thread while the page is parsed and drawn. The
  // lab's start task called ~80 of them: their compiling was ~2.8 ms of its CPU (issue 28, item 3).
  if (/^idempotency-lab-[0-9a-f]+\.js$/.test(file)) after = `//# allFunctionsCalledOnLoad\n${after}`;
  writeFileSync(full, after);
  console.log(`minify: ${file} ${before.length} -> ${after.length} bytes`);
}
