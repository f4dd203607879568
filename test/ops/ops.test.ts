// Operational endpoints: OpenAPI 3.1 at /openapi.json (its content in detail:
// openapi.test.ts), the docs page at /docs and the API guide at /docs/api-guide.md,
// /healthz, /readyz, Prometheus /metrics. All are open (no token, no Accept rules) and never eat a
// client's rate-limit budget.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler, sql, type DatabaseConnection, type Driver } from 'kysely';
import fs from 'node:fs';
import path from 'node:path';
import { ENGINES, call, createTestApp, freshStore, testConfig, type TestApp } from '../helpers/app.js';
import { useSeededApp } from '../helpers/suite.js';
import { seedTenants, type Tenants } from '../helpers/tenants.js';
import { openStore, type Store } from '../../src/db/index.js';
import { buildApp } from '../../src/app.js';
import { MemoryLimiter } from '../../src/limits/limiter.js';
import { READY_TIMEOUT_MS } from '../../src/ops/plugin.js';
import { Signals } from '../../src/db/signals.js';

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

describe.each(ENGINES)('operational endpoints on %s', (engine) => {
  const { t, x } = useSeededApp(engine);

  describe('/openapi.json', () => {
    it('is an OpenAPI 3.1 document generated from the route schemas', async () => {
      const r = await call(t.app, 'GET', '/openapi.json');
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
      const doc = r.json;
      expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
      expect(doc.info).toMatchObject({ title: expect.stringContaining('hostplane'), version: '1', license: { name: 'MIT', identifier: 'MIT' } });
      expect(doc.servers).toEqual([{ url: 'http://api.test', description: expect.any(String) }]);
      expect(doc.components.securitySchemes).toEqual({
        token: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'token <API_TOKEN>' },
        basic: { type: 'http', scheme: 'basic', description: 'user "token", password the API token' },
        session: { type: 'apiKey', in: 'cookie', name: 'hostplane_session', description: "the customer panel's session (POST /session); writes also send X-CSRF-Token" },
      });
      expect(doc.security).toEqual([{ token: [] }, { basic: [] }, { session: [] }]);
    });

    it('lists the API paths in OpenAPI form, each operation tagged; operational routes are hidden', async () => {
      const doc = (await call(t.app, 'GET', '/openapi.json')).json;
      const paths = Object.keys(doc.paths);
      expect(paths).toEqual(expect.arrayContaining(['/customers', '/customers/{id}']));
      for (const p of paths) {
        expect(p, 'Fastify ":param" syntax must not leak into the document').not.toMatch(/:/);
        for (const hidden of ['/openapi.json', '/healthz', '/readyz', '/metrics']) expect(p).not.toBe(hidden);
        expect(p.startsWith('/docs')).toBe(false);
        const ops = Object.entries(doc.paths[p]).filter(([m]) => HTTP_METHODS.includes(m));
        expect(ops.length, `${p} has operations`).toBeGreaterThan(0);
        for (const [m, op] of ops as [string, any][]) {
          expect(op.tags, `${m.toUpperCase()} ${p} is tagged`).toEqual([expect.any(String)]);
          expect(op.summary, `${m.toUpperCase()} ${p} has a summary`).toEqual(expect.any(String));
          expect(op.responses).toEqual(expect.any(Object));
        }
      }
      expect(Object.keys(doc.paths['/customers'])).toEqual(['get']);
      expect(Object.keys(doc.paths['/customers/{id}']).sort()).toEqual(['get', 'patch']);
      // The path parameter, then the conditions of safe retries (API guide "Safe retries").
      expect(doc.paths['/customers/{id}'].get.parameters).toEqual([
        { schema: { type: 'string' }, example: '10002', in: 'path', name: 'id', required: true },
        { schema: { type: 'string', 'x-hostplane-extension': true }, in: 'header', name: 'If-Match', required: false, description: expect.any(String) },
        { schema: { type: 'string', 'x-hostplane-extension': true }, in: 'header', name: 'If-None-Match', required: false, description: expect.any(String) },
      ]);
      expect(doc.paths['/customers'].get.parameters.map((p: { name: string }) => p.name)).toEqual(['page[number]', 'page[size]']);
    });

    it('request bodies are documented as application/vnd.api+json (API guide "Versioning and content types") and keep additionalProperties: false', async () => {
      const doc = (await call(t.app, 'GET', '/openapi.json')).json;
      const body = doc.paths['/customers/{id}'].patch.requestBody;
      expect(body.required).toBe(true);
      expect(Object.keys(body.content)).toEqual(['application/vnd.api+json', 'application/json']);
      const schema = body.content['application/vnd.api+json'].schema;
      expect(schema.additionalProperties).toBe(false);
      expect(schema.properties.data.properties.attributes.properties).toEqual({
        is_login_disabled: { type: 'boolean' },
        external_customer_id: { anyOf: [{ type: 'string', pattern: '^[A-Za-z0-9._-]{1,64}$' }, { type: 'null' }] },
      });
      // Every body of every operation uses the same two types.
      for (const item of Object.values(doc.paths) as any[]) {
        for (const op of Object.values(item) as any[]) {
          if (op?.requestBody) expect(Object.keys(op.requestBody.content)).toEqual(['application/vnd.api+json', 'application/json']);
        }
      }
    });

    // Answers, operation ids, examples and lint: test/ops/openapi.test.ts.

    it('declares each tag it uses once in the top-level tag list', async () => {
      const doc = (await call(t.app, 'GET', '/openapi.json')).json;
      const used = new Set<string>();
      for (const item of Object.values(doc.paths) as any[]) for (const op of Object.values(item) as any[]) for (const tag of op?.tags ?? []) used.add(tag);
      const declared = (doc.tags as { name: string; description: string }[]).map((tg) => tg.name);
      expect(new Set(declared).size).toBe(declared.length);
      for (const tag of used) expect(declared, `tag ${tag} is declared`).toContain(tag);
      expect(doc.tags.find((tg: any) => tg.name === 'customers')).toEqual({ name: 'customers', description: expect.any(String) });
    });

    it('is the same document the docs page loads', async () => {
      const a = await call(t.app, 'GET', '/openapi.json');
      const b = await call(t.app, 'GET', '/docs/json');
      expect(b.status).toBe(200);
      expect(b.json).toEqual(a.json);
    });
  });

  describe('/docs', () => {
    it('serves the HTML page, and every asset it references loads', async () => {
      for (const url of ['/docs', '/docs/']) {
        let res = await t.app.inject({ method: 'GET', url, headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
        for (let hops = 0; res.statusCode >= 300 && res.statusCode < 400 && hops < 5; hops++) {
          res = await t.app.inject({ method: 'GET', url: String(res.headers.location), headers: { accept: 'text/html' } });
        }
        expect(res.statusCode).toBe(200);
        expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
        expect(res.body).toContain('<title>hostplane API</title>');
        expect(res.body).toContain('<div id="swagger-ui"></div>');
        const refs = [...res.body.matchAll(/(?:href|src)="([^"]+)"/g)].map((m) => m[1]);
        expect(refs.length).toBeGreaterThanOrEqual(5);
        for (const ref of refs) {
          const target = new URL(ref, `http://api.test${url}`).pathname;
          expect(target.startsWith('/docs/static/'), `${ref} from ${url}`).toBe(true);
          const asset = await t.app.inject({ method: 'GET', url: target });
          expect(asset.statusCode, target).toBe(200);
          expect(asset.body.length, target).toBeGreaterThan(0);
        }
      }
    });

    it('the initializer loads the spec from ./json, and the page sets no policy that would block its own assets', async () => {
      const init = await t.app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
      expect(init.statusCode).toBe(200);
      expect(init.headers['content-type']).toBe('application/javascript; charset=utf-8');
      expect(init.body).toContain("url: resolveUrl('./json')");
      // No outside validator badge: the page makes no request to a third party.
      expect(init.body).toContain('validatorUrl: null');
      const page = await t.app.inject({ method: 'GET', url: '/docs/' });
      const csp = page.headers['content-security-policy'];
      if (csp !== undefined) expect(String(csp)).toMatch(/script-src 'self'/);
    });
  });

  describe('/healthz and /readyz', () => {
    it('/healthz answers 200 {"status":"ok"}', async () => {
      const r = await call(t.app, 'GET', '/healthz');
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(r.body).toBe('{"status":"ok"}');
    });

    it('/readyz answers 200 while the database is reachable', async () => {
      const r = await call(t.app, 'GET', '/readyz');
      expect(r.status).toBe(200);
      expect(r.body).toBe(`{"status":"ready","database":"${engine}"}`);
    });
  });

  describe('/metrics', () => {
    it('exposes Prometheus text with the request-duration histogram of served routes', async () => {
      await call(t.app, 'GET', '/customers', { token: x.reseller.token });
      await call(t.app, 'GET', `/customers/${x.end1.customerId}`, { token: x.end1.token });
      await call(t.app, 'GET', '/customers/99999999', { token: x.end1.token });
      await call(t.app, 'GET', '/customers');
      const r = await call(t.app, 'GET', '/metrics');
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
      expect(r.body).toContain('# TYPE hostplane_http_request_duration_seconds histogram');
      const series = (route: string, status: number) =>
        new RegExp(`^hostplane_http_request_duration_seconds_count\\{method="GET",route="${route.replace(/[/.]/g, '\\$&')}",status="${status}"\\} ([0-9]+)$`, 'm');
      expect(Number(series('/customers', 200).exec(r.body)?.[1])).toBeGreaterThanOrEqual(1);
      expect(Number(series('/customers/:id', 200).exec(r.body)?.[1])).toBeGreaterThanOrEqual(1);
      expect(Number(series('/customers/:id', 404).exec(r.body)?.[1])).toBeGreaterThanOrEqual(1);
      expect(Number(series('/customers', 401).exec(r.body)?.[1])).toBeGreaterThanOrEqual(1);
      // Label values are route patterns, never raw URLs: ids cannot blow up the series count.
      expect(r.body).not.toContain(`route="/customers/${x.end1.customerId}"`);
      expect(r.body).toMatch(/^hostplane_http_request_duration_seconds_bucket\{le="0\.005",method="GET",route="\/customers",status="200"\} [0-9]+$/m);
      // Process metrics of the default collector carry the same prefix.
      expect(r.body).toMatch(/^hostplane_process_cpu_user_seconds_total [0-9.e+-]+$/m);
    });

    it('an unknown path is counted under one label, not its raw URL', async () => {
      await call(t.app, 'GET', '/no/such/path/12345', { token: x.end1.token });
      const r = await call(t.app, 'GET', '/metrics');
      expect(r.body).not.toContain('/no/such/path/12345');
      expect(r.body).toMatch(/^hostplane_http_request_duration_seconds_count\{method="GET",route="unknown",status="404"\} [1-9][0-9]*$/m);
    });
  });

  describe('access', () => {
    const OPS = ['/openapi.json', '/docs/', '/docs/json', '/docs/static/swagger-initializer.js', '/docs/api-guide.md', '/healthz', '/readyz', '/metrics'];

    it.each(OPS)('%s needs no credentials and ignores Accept/Content-Type rules', async (url) => {
      const plain = await call(t.app, 'GET', url);
      expect(plain.status).toBe(200);
      const bad = await call(t.app, 'GET', url, {
        headers: { authorization: 'token hp_not-a-real-token', accept: 'application/vnd.other.v7+json', 'content-type': 'text/plain' },
      });
      expect(bad.status).toBe(200);
      expect(bad.headers['content-type']).toBe(plain.headers['content-type']);
      // Metrics move between two scrapes; everything else is the same answer.
      if (url !== '/metrics') expect(bad.body).toBe(plain.body);
    });
  });
});

describe.each(ENGINES)('operational endpoints and the rate limit on %s', (engine) => {
  let t: TestApp;
  let x: Tenants;
  beforeAll(async () => {
    t = await createTestApp(engine, { RATE_LIMIT_MAX: '3', ERROR_BLOCK_MAX: '3' });
    x = await seedTenants(t.admin);
  });
  afterAll(() => t.close());

  // Each case uses its own client address, so the cases do not share a budget.
  const exempt = (ip: string, urls: string[]) => async () => {
    for (let i = 0; i < 3; i++) {
      for (const url of urls) {
        const r = await call(t.app, 'GET', url, { remoteAddress: ip });
        expect(r.status, url).toBe(200);
        expect(r.headers['ratelimit-remaining'], url).toBeUndefined();
      }
    }
    // The client's whole budget is still there for the API.
    const r = await call(t.app, 'GET', '/customers', { token: x.end1.token, remoteAddress: ip });
    expect(r.status).toBe(200);
    expect(r.headers['ratelimit-limit']).toBe('3');
    expect(r.headers['ratelimit-remaining']).toBe('2');
  };
  const stillServed = (ip: string, urls: string[]) => async () => {
    for (let i = 0; i < 3; i++) expect((await call(t.app, 'GET', '/customers/1', { remoteAddress: ip })).status).toBe(401);
    const limited = await call(t.app, 'GET', '/customers', { token: x.end1.token, remoteAddress: ip });
    expect(limited.status).toBe(429);
    for (const url of urls) expect((await call(t.app, 'GET', url, { remoteAddress: ip })).status, url).toBe(200);
  };

  const PROBES = ['/healthz', '/readyz', '/metrics', '/docs/static/swagger-ui.css'];
  const DOCS = ['/openapi.json', '/docs', '/docs/', '/docs/json', '/docs/api-guide.md'];

  it('health checks and scrapes never count against a client\'s budget (API guide "Rate limits and blocking")', exempt('198.51.100.7', PROBES));
  it('a blocked or exhausted client still gets health checks and scrapes', stillServed('198.51.100.8', PROBES));
  it('the docs page and /openapi.json never count against a client\'s budget', exempt('198.51.100.9', DOCS));
  it('a blocked or exhausted client still gets the docs page and /openapi.json', stillServed('198.51.100.10', DOCS));
});

describe.each(ENGINES)('/readyz with the database gone on %s', (engine) => {
  it('answers 503 once the store is closed, while /healthz stays 200', async () => {
    const ts = await freshStore(engine);
    const t = await createTestApp(engine, {}, { store: ts });
    try {
      expect((await call(t.app, 'GET', '/readyz')).status).toBe(200);
      await ts.store.close();
      const r = await call(t.app, 'GET', '/readyz');
      expect(r.status).toBe(503);
      expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(r.body).toBe(`{"status":"unavailable","database":"${engine}"}`);
      const h = await call(t.app, 'GET', '/healthz');
      expect(h.status).toBe(200);
      expect(h.body).toBe('{"status":"ok"}');
    } finally {
      await t.close();
      // The store is closed already; remove what it left behind.
      if (ts.schema) {
        const admin = await openStore(ts.url);
        await sql`drop schema if exists ${sql.id(ts.schema)} cascade`.execute(admin.db);
        await admin.close();
      } else {
        fs.rmSync(path.dirname(ts.url), { recursive: true, force: true });
      }
    }
  });
});

describe('/readyz with a database that never answers', () => {
  it(`answers 503 after ${READY_TIMEOUT_MS} ms instead of hanging`, async () => {
    // A driver whose connections never arrive: what a PostgreSQL host that drops packets looks like.
    const never: Driver = {
      init: async () => {},
      acquireConnection: () => new Promise<DatabaseConnection>(() => {}),
      beginTransaction: async () => {},
      commitTransaction: async () => {},
      rollbackTransaction: async () => {},
      releaseConnection: async () => {},
      destroy: async () => {},
    };
    const db = new Kysely<any>({
      dialect: {
        createAdapter: () => new SqliteAdapter(),
        createDriver: () => never,
        createIntrospector: (k) => new SqliteIntrospector(k),
        createQueryCompiler: () => new SqliteQueryCompiler(),
      },
    });
    const store: Store = { db, engine: 'postgres', where: 'nowhere', signals: new Signals(), close: async () => {} };
    const config = testConfig();
    const limiter = new MemoryLimiter(config);
    const app = await buildApp(config, { store, limiter });
    try {
      const started = Date.now();
      const r = await call(app, 'GET', '/readyz');
      const took = Date.now() - started;
      expect(r.status).toBe(503);
      expect(r.body).toBe('{"status":"unavailable","database":"postgres"}');
      expect(took).toBeGreaterThanOrEqual(READY_TIMEOUT_MS - 50);
      expect(took).toBeLessThan(READY_TIMEOUT_MS + 2000);
      expect((await call(app, 'GET', '/healthz')).status).toBe(200);
    } finally {
      await app.close();
      await limiter.close();
    }
  });
});
