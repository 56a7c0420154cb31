// The release build in dist/ and its sizes; shared by the budget test and `make bench`.

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const DIST = path.join(REPO, 'dist');

/** Total gzip bytes that dist/ may weigh. */
export const GZIP_BUDGET_BYTES = 200 * 1024;

export function assertDistBuilt() {
  if (!existsSync(path.join(DIST, 'index.html'))) {
    throw new Error('dist/index.html not found: build first (make build, or make test)');
  }
}

/** Every file under dist/, as paths relative to dist/ with '/' separators, sorted. */
export function distFiles(dir = DIST) {
  return readdirSync(dir, { recursive: true })
    .map((rel) => String(rel))
    .filter((rel) => statSync(path.join(dir, rel)).isFile())
    .map((rel) => rel.split(path.sep).join('/'))
    .sort();
}

/** Raw, gzip (level 9) and brotli (quality 11) sizes of one file's bytes. */
export function compressedSizes(bytes) {
  return {
    raw: bytes.length,
    gzip: gzipSync(bytes, { level: 9 }).length,
    brotli: brotliCompressSync(bytes, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 11 },
    }).length,
  };
}

/** Sizes of every file of dist/, and their totals. */
export function distSizes() {
  const files = distFiles().map((file) => ({
    file,
    ...compressedSizes(readFileSync(path.join(DIST, file))),
  }));
  const total = { raw: 0, gzip: 0, brotli: 0 };
  for (const f of files) for (const k of Object.keys(total)) total[k] += f[k];
  return { files, total };
}
