// The /domain-availability fixture (API guide "Domain availability", "Authentication"): a real
// local RDAP server, two apps on one database (RDAP configured and not), and the documents a client
// sees.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll } from 'vitest';
import { BASE, call, createTestApp, freshStore, type EngineName, type TestApp, type TestStore } from './app.js';
import { filledLater } from './suite.js';
import { seedTenants, type Tenants } from './tenants.js';

export const TIMEOUT_MS = 400;
export const LEGACY_PASSWORD = 'legacy-password-1234';

export const REASON = {
  registered: 'Registered.',
  elsewhere: 'Registered.',
  rdapFound: 'Registered.',
  rdapFree: 'Not registered.',
  timeout: `The RDAP lookup timed out after ${TIMEOUT_MS} ms.`,
  status500: 'The RDAP server answered with HTTP status 500.',
  notRdap: 'The RDAP server answered without an RDAP domain object.',
  unreachable: 'The RDAP server could not be reached.',
  noServer: (tld: string) => `No RDAP server configured for .${tld}.`,
};

/** One result exactly as a client sees it. */
export const result = (domain: string, available: boolean | null, reason: string) => ({
  type: 'domain-availability',
  id: domain,
  attributes: { domain, available, reason },
  links: { self: `${BASE}/domain-availability/${domain}` },
});
export const doc = (url: string, ...data: ReturnType<typeof result>[]) => ({ links: { self: BASE + url }, data, meta: { total: data.length } });
export const invalid = (detail: string) => ({ id: 'invalid_api_data', status: '422', title: 'Invalid data', detail, source: { parameter: 'domains' } });
export const errorDoc = (url: string, ...errors: object[]) => ({ errors, links: { self: BASE + url } });
export const unauthorized = (url: string, detail: string) =>
  errorDoc(url, { id: 'unauthorized', status: '401', title: 'Authentication required', detail });

export type RdapServer = Awaited<ReturnType<typeof startRdapServer>>;

/**
 * A real RDAP server (RFC 9082/9083 shapes) on 127.0.0.1: the first label of the asked name picks
 * the behaviour — taken (200 + domain object), free (404), slow (never answers), slowbody (headers,
 * then a body that never ends), broken (500), html (200 with a web page).
 */
async function startRdapServer() {
  const requests: { url: string; accept: string | undefined }[] = [];
  const server = http.createServer((req, res) => {
    requests.push({ url: req.url ?? '', accept: req.headers.accept });
    const m = /^\/(rdap|any)\/domain\/([^/]+)$/.exec(req.url ?? '');
    if (!m) return res.writeHead(400).end();
    const name = m[2];
    const kind = name.split('.')[0];
    if (kind === 'taken') {
      res.writeHead(200, { 'content-type': 'application/rdap+json' });
      return res.end(JSON.stringify({ objectClassName: 'domain', ldhName: name, rdapConformance: ['rdap_level_0'], status: ['active'] }));
    }
    if (kind === 'slow') return; // hangs until the client gives up
    if (kind === 'slowbody') {
      res.writeHead(200, { 'content-type': 'application/rdap+json' });
      return res.write('{"objectClassName":');
    }
    if (kind === 'broken') return res.writeHead(500, { 'content-type': 'text/plain' }).end('Traceback (most recent call last): secret internals');
    if (kind === 'html') return res.writeHead(200, { 'content-type': 'text/html' }).end('<html>Welcome to the hotel wifi</html>');
    res.writeHead(404, { 'content-type': 'application/rdap+json' });
    res.end(JSON.stringify({ errorCode: 404, title: 'Not Found' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A port nobody listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

/**
 * Registers the hooks that build the fixture for the surrounding describe and returns its parts:
 * `t` has RDAP for .test, .refused and a * fallback; `bare` has none, on the same database;
 * `get(t, url)` asks as end1 unless a token or headers are given.
 */
export function useAvailability(engine: EngineName) {
  const rdap = filledLater<RdapServer>();
  const t = filledLater<TestApp>();
  const bare = filledLater<TestApp>();
  const x = filledLater<Tenants>();
  let store: TestStore | undefined;

  beforeAll(async () => {
    Object.assign(rdap, await startRdapServer());
    store = await freshStore(engine);
    Object.assign(
      t,
      await createTestApp(
        engine,
        {
          RDAP_SERVERS: `test=${rdap.base}/rdap/,refused=http://127.0.0.1:${await closedPort()},*=${rdap.base}/any`,
          RDAP_TIMEOUT_MS: String(TIMEOUT_MS),
        },
        { store },
      ),
    );
    Object.assign(bare, await createTestApp(engine, {}, { store }));
    Object.assign(x, await seedTenants(t.admin));
    // Presence only: used with solo's package, registered with another registrar. An IDN,
    // registered with the service, for end2.
    await t.admin.domains.createDomain({ name: 'elsewhere.example', customerId: Number(x.solo.customerId), packageId: Number(x.solo.packageId) });
    await t.admin.domains.createDomain({ name: 'münchen.example', customerId: Number(x.end2.customerId), registered: true });
    await t.admin.customers.setLegacyPassword(Number(x.reseller.customerId), LEGACY_PASSWORD);
  });
  afterAll(async () => {
    await t.close?.();
    await bare.close?.();
    await store?.drop();
    await rdap.close?.();
  });

  return {
    rdap,
    t,
    bare,
    x,
    get: (app: TestApp, url: string, o: { token?: string; headers?: Record<string, string> } = {}) =>
      call(app.app, 'GET', url, { token: o.token ?? (o.headers ? undefined : x.end1.token), headers: o.headers }),
  };
}

/** The RDAP server alone, for suites that build their own app (test/panel/account.test.ts). */
export { startRdapServer };
