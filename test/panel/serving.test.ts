// The customer panel's files as a browser gets them (docs/decisions/0031-customer-panel.md): the
// app at /panel/ and every client-side route, its hashed assets, the page's protections (CSP,
// nosniff, no referrer, never framed), no way out of the build folder, and a clear 503 when the
// panel was never built.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PANEL_CSP } from '../../src/http/panel.js';
import { ENGINES, call, createTestApp, type TestApp } from '../helpers/app.js';
import { assetsOf, requireBuiltPanel } from '../helpers/panel-browser.js';

const EXACT_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

function expectProtected(headers: Record<string, unknown>) {
  expect(headers['content-security-policy']).toBe(EXACT_CSP);
  expect(headers['x-content-type-options']).toBe('nosniff');
  expect(headers['referrer-policy']).toBe('no-referrer');
}

describe.each(ENGINES)('the panel served at /panel/ (%s)', (engine) => {
  let t: TestApp;
  let index: string;
  beforeAll(async () => {
    index = requireBuiltPanel();
    t = await createTestApp(engine);
  });
  afterAll(async () => t?.close());

  it('GET /panel redirects to /panel/, keeping the query', async () => {
    const res = await call(t.app, 'GET', '/panel?lang=de');
    expect(res.status).toBe(301);
    expect(res.headers.location).toBe('/panel/?lang=de');
    expectProtected(res.headers);
  });

  it('/panel/ is the built index.html: no inline script, no third-party URL, revalidated on every visit', async () => {
    const res = await call(t.app, 'GET', '/panel/');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(PANEL_CSP).toBe(EXACT_CSP);
    expectProtected(res.headers);
    expect(res.body).toBe(index);
    expect(res.body).toContain('<div id="app"></div>');
    // Every script has a src on this origin; nothing is fetched from elsewhere.
    const scripts = [...res.body.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attrs, inline] of scripts) {
      expect(attrs).toMatch(/src="\/panel\/assets\/[^"]+\.js"/);
      expect(inline.trim()).toBe('');
    }
    expect(res.body).not.toMatch(/(src|href)="(https?:)?\/\//);
    expect(res.body).not.toMatch(/\sstyle=/);
  });

  it('client-side routes answer the app itself; a missing asset answers 404, never the page', async () => {
    for (const route of ['/panel/login', '/panel/domains', '/panel/domains/shop-demo.example/dns', '/panel/domains/b%C3%BCcher.example/dns?x=1']) {
      const res = await call(t.app, 'GET', route);
      expect([route, res.status, res.headers['content-type']]).toEqual([route, 200, 'text/html; charset=utf-8']);
      expect(res.body).toBe(index);
      expectProtected(res.headers);
    }
    const missing = await call(t.app, 'GET', '/panel/assets/index-00000000.js');
    expect([missing.status, missing.headers['content-type'], missing.body]).toEqual([404, 'text/plain; charset=utf-8', 'Not found.\n']);
    expectProtected(missing.headers);
  });

  it('hashed assets: their content type, a year of immutable caching, gzip when asked, 304 on a matching ETag', async () => {
    const assets = assetsOf(index);
    expect(assets.map((a) => path.extname(a)).sort()).toEqual(['.css', '.js']);
    for (const asset of assets) {
      const file = fs.readFileSync(path.join(builtDir(), asset.replace(/^\/panel\//, '')));
      const plain = await call(t.app, 'GET', asset);
      expect(plain.status).toBe(200);
      expect(plain.headers['content-type']).toBe(asset.endsWith('.js') ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8');
      expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.body).toBe(file.toString('utf8'));
      expectProtected(plain.headers);
      const gz = await t.app.inject({ method: 'GET', url: asset, headers: { 'accept-encoding': 'gzip, deflate, br' } });
      expect(gz.headers['content-encoding']).toBe('gzip');
      expect(gz.headers.vary).toBe('accept-encoding');
      expect(zlib.gunzipSync(gz.rawPayload).equals(file)).toBe(true);
      const again = await call(t.app, 'GET', asset, { headers: { 'if-none-match': String(plain.headers.etag) } });
      expect([again.status, again.body]).toEqual([304, '']);
    }
    const icon = await call(t.app, 'GET', '/panel/favicon.svg');
    expect([icon.status, icon.headers['content-type'], icon.headers['cache-control']]).toEqual([200, 'image/svg+xml', 'no-cache']);
  });

  // The router resolves dot segments first (/panel/../x is /x, the API's 404); what reaches the
  // panel is looked up among the built files, never on the disk.
  it('no path leaves the build folder: dot segments, encoded or not, answer the app or 404, never a file outside', async () => {
    const secret = fs.readFileSync(path.resolve(import.meta.dirname, '../../package.json'), 'utf8');
    for (const url of [
      '/panel/../package.json',
      '/panel/../../package.json',
      '/panel/%2e%2e/%2e%2e/package.json',
      '/panel/assets/..%2f..%2f..%2fpackage.json',
      '/panel/assets/%2e%2e%2f%2e%2e%2f%2e%2e%2fpackage.json',
      '/panel/..%5c..%5cpackage.json',
      '/panel/%2fetc%2fpasswd',
      '/panel//etc/passwd',
      '/panel/assets/../../../src/app.ts',
      '/panel/index.html%00.js',
    ]) {
      const res = await call(t.app, 'GET', url);
      expect([200, 404], url).toContain(res.status);
      if (res.status === 200) expect(res.body, url).toBe(index);
      expect(res.body, url).not.toContain('"name": "hostplane"');
      expect(res.body, url).not.toContain(secret.slice(0, 40));
      expect(res.body, url).not.toContain('root:');
    }
  });

  it('is open and free: no token, any Accept, no rate-limit budget; not an API operation in OpenAPI', async () => {
    // A rate limit of 2 per window: the panel's files must not spend the API's budget.
    const limited = await createTestApp(engine, { RATE_LIMIT_MAX: '2' });
    try {
      for (const url of ['/panel/', '/panel/login', '/panel/favicon.svg', ...assetsOf(index), '/panel/']) {
        const res = await call(limited.app, 'GET', url, { headers: { accept: 'text/html' } });
        expect([url, res.status, res.headers['ratelimit-limit']]).toEqual([url, 200, undefined]);
      }
      expect((await call(limited.app, 'GET', '/customers')).headers['ratelimit-remaining']).toBe('1');
    } finally {
      await limited.close();
    }
    const doc = (await call(t.app, 'GET', '/openapi.json')).json;
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/panel'))).toEqual([]);
  });

  it('other methods on a panel path answer 405 with Allow', async () => {
    const res = await call(t.app, 'POST', '/panel/login', { body: {} });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET');
    expect(res.json.errors[0].id).toBe('method_not_allowed');
  });
});

describe('a server whose panel was never built', () => {
  let t: TestApp;
  let empty: string;
  beforeAll(async () => {
    empty = fs.mkdtempSync(path.join(os.tmpdir(), 'hp-panel-unbuilt-'));
    t = await createTestApp('sqlite', {}, { panelDir: path.join(empty, 'panel') });
  });
  afterAll(async () => {
    await t?.close();
    fs.rmSync(empty, { recursive: true, force: true });
  });

  it('answers 503 with a plain message naming npm run build:panel, on every panel path', async () => {
    for (const url of ['/panel/', '/panel/domains', '/panel/assets/index.js']) {
      const res = await call(t.app, 'GET', url);
      expect(res.status).toBe(503);
      expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.body).toBe('The customer panel is not built. Run `npm run build:panel` (npm install does it too), then reload this page.\n');
      expectProtected(res.headers);
    }
  });
});

function builtDir() {
  return path.resolve(import.meta.dirname, '../../dist/panel');
}
