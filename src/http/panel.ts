// The customer panel's files (docs/decisions/0031-customer-panel.md): the single-page app that
// `npm run build:panel` writes to dist/panel, served at /panel/ on the API's own origin. Open like
// the docs page (`infra`: no token, no Accept rules, no rate limit for reads); left out of OpenAPI.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * Where the built panel is: dist/panel beside dist/http when running the build, the repository's
 * dist/panel when running the sources with tsx.
 */
export function defaultPanelDir(): string {
  const fromSources = fileURLToPath(import.meta.url).endsWith('.ts');
  return fileURLToPath(new URL(fromSources ? '../../dist/panel/' : '../panel/', import.meta.url));
}

/**
 * The page's protections: scripts, styles and requests from this origin only (no inline script,
 * no eval, nothing third-party), never framed, no referrer leaves the panel.
 */
export const PANEL_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const SECURITY_HEADERS = {
  'content-security-policy': PANEL_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
} as const;

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
  '.map': 'application/json; charset=utf-8',
};
const COMPRESSIBLE = /^(text\/|image\/svg|application\/json)/;

/** Vite puts content-hashed names under assets/: they never change, so browsers keep them. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

interface PanelFile {
  body: Buffer;
  gzip: Buffer | null;
  type: string;
  etag: string;
  cache: string;
}

/**
 * Every file of the build, read once, by its path relative to the panel root. A request names a
 * key of this map or nothing: no path from a request ever reaches the file system, so no
 * `..`, encoded or not, can leave the folder.
 */
function loadFiles(dir: string): Map<string, PanelFile> | null {
  if (!fs.existsSync(path.join(dir, 'index.html'))) return null;
  const files = new Map<string, PanelFile>();
  const walk = (sub: string) => {
    for (const entry of fs.readdirSync(path.join(dir, sub), { withFileTypes: true })) {
      const rel = sub ? `${sub}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(rel);
      else if (entry.isFile()) {
        const body = fs.readFileSync(path.join(dir, rel));
        const type = TYPES[path.extname(entry.name).toLowerCase()] ?? 'application/octet-stream';
        files.set(rel, {
          body,
          gzip: COMPRESSIBLE.test(type) && body.length > 512 ? zlib.gzipSync(body, { level: 9 }) : null,
          type,
          etag: `"${crypto.createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
          cache: rel.startsWith('assets/') ? IMMUTABLE : 'no-cache',
        });
      }
    }
  };
  walk('');
  return files;
}

export function registerPanel(app: FastifyInstance, opts: { dir?: string } = {}) {
  const dir = opts.dir ?? defaultPanelDir();
  // Loaded at the first request and kept; a missing build is looked for again on each request,
  // so `npm run build:panel` next to a running `tsx` server needs no restart.
  let files: Map<string, PanelFile> | null = null;
  const current = () => (files ??= loadFiles(dir));

  const route = { config: { infra: true }, schema: { hide: true } };
  app.get('/panel', route, async (request, reply) => {
    const query = request.url.indexOf('?');
    reply.headers(SECURITY_HEADERS);
    return reply.redirect(`/panel/${query === -1 ? '' : request.url.slice(query)}`, 301);
  });
  app.get('/panel/*', route, async (request: FastifyRequest<{ Params: { '*': string } }>, reply) => {
    reply.headers(SECURITY_HEADERS);
    const all = current();
    if (!all) {
      return reply
        .code(503)
        .type('text/plain; charset=utf-8')
        .header('cache-control', 'no-store')
        .send('The customer panel is not built. Run `npm run build:panel` (npm install does it too), then reload this page.\n');
    }
    const wanted = request.params['*'];
    const file = all.get(wanted);
    if (file) return send(request, reply, file);
    // A missing asset is an error, not a page: a script tag must not receive index.html.
    if (wanted.startsWith('assets/') || wanted === 'favicon.ico') {
      return reply.code(404).type('text/plain; charset=utf-8').header('cache-control', 'no-store').send('Not found.\n');
    }
    // Any other path is one of the app's own routes (/panel/domains/…): the app decides.
    return send(request, reply, all.get('index.html')!);
  });
}

function send(request: FastifyRequest, reply: FastifyReply, file: PanelFile) {
  reply.header('cache-control', file.cache).header('etag', file.etag).header('vary', 'accept-encoding').type(file.type);
  if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
  if (file.gzip && /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))) {
    return reply.header('content-encoding', 'gzip').send(file.gzip);
  }
  return reply.send(file.body);
}
