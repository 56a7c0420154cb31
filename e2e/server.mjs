// A tiny static file server for dist/, used by the end-to-end tests and `make bench`.
// It sends the strict Content-Security-Policy the lesson must run under, so a regression
// (an inline script, an inline style, a foreign origin) fails the suite.
//
//   import { startServer } from './server.mjs';
//   const server = await startServer({ root: 'dist' });   // 127.0.0.1, free port
//   ...; await server.close();
//
// Or by hand: node e2e/server.mjs [root=dist] [port=8081]

import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export const CSP =
  "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'";

/**
 * The policy a page states for itself (build/prerender.mjs writes it first in <head>: CSP
 * with the hashes of its one inline style and one inline script), else `CSP`. Sent as
 * the header too, as a host would: a page without the meta gets the strict one.
 */
export function policyOf(body) {
  const m = /^<!doctype html><html[^>]*><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="([^"]*)">/i.exec(String(body).slice(0, 512));
  return m ? m[1] : CSP;
}

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.webmanifest': 'application/manifest+json',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

/**
 * Serves `root` on 127.0.0.1.
 * @param {object} options
 * @param {string} options.root      directory to serve
 * @param {string} [options.prefix]  URL path the files are mounted under, e.g. '/course/lab/'
 * @param {Record<string, string|Buffer>} [options.extraFiles]  URL path -> body (in memory)
 * @param {number} [options.port]    0 (default) picks a free port
 * @param {(body: Buffer) => string} [options.policy]  a page's policy header (default:
 *   policyOf, the page's own); `() => CSP` is a host that sends its own strict one
 * @returns {Promise<{url: string, origin: string, close: () => Promise<void>}>}
 */
export async function startServer({ root, prefix = '/', extraFiles = {}, port = 0, policy = policyOf }) {
  const base = path.resolve(root);
  if (!prefix.startsWith('/') || !prefix.endsWith('/')) {
    throw new Error(`prefix must start and end with '/': ${prefix}`);
  }

  const server = createServer(async (req, res) => {
    const send = (status, type, body) => {
      res.writeHead(status, {
        'Content-Type': type,
        'Content-Length': Buffer.byteLength(body),
        'Content-Security-Policy': type.startsWith('text/html') ? policy(body) : CSP,
        'X-Content-Type-Options': 'nosniff',
        'Cache-Control': 'no-store',
      });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return send(405, 'text/plain; charset=utf-8', 'method not allowed\n');
    }
    let pathname;
    try {
      pathname = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
    } catch {
      return send(400, 'text/plain; charset=utf-8', 'bad request\n');
    }
    if (pathname in extraFiles) {
      const ext = path.extname(pathname);
      return send(200, MIME[ext] ?? 'application/octet-stream', extraFiles[pathname]);
    }
    if (!pathname.startsWith(prefix)) {
      return send(404, 'text/plain; charset=utf-8', 'not found\n');
    }
    let file = path.resolve(base, '.' + path.posix.sep + pathname.slice(prefix.length));
    if (file !== base && !file.startsWith(base + path.sep)) {
      return send(403, 'text/plain; charset=utf-8', 'forbidden\n');
    }
    try {
      if ((await stat(file)).isDirectory()) file = path.join(file, 'index.html');
      const body = await readFile(file);
      return send(200, MIME[path.extname(file)] ?? 'application/octet-stream', body);
    } catch {
      return send(404, 'text/plain; charset=utf-8', 'not found\n');
    }
  });

  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const origin = `http://127.0.0.1:${server.address().port}`;
  return {
    origin,
    url: origin + prefix,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [root = 'dist', port = '8081'] = process.argv.slice(2);
  const server = await startServer({ root, port: Number(port) });
  console.log(`serving ${root} with CSP on ${server.url} (Ctrl-C to stop)`);
}
