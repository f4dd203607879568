// /domain-availability/{names} (spec §2.11, §4.2, §4.3.7, §5.6, §9.4; API-NOTES §4, §6): the own
// registry, RDAP against a real local RDAP server, the 10-name limit, and the legacy password.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, ENGINES, call, createTestApp, freshStore, type TestApp, type TestStore } from './helpers/app.js';
import { seedTenants, type Tenants } from './helpers/tenants.js';
import { hashLegacyPassword } from '../src/auth/legacy-password.js';

const TIMEOUT_MS = 400;
const LEGACY_PASSWORD = 'legacy-password-1234';
const WWW = 'Basic realm="API"';
const basic = (user: string, password: string) => 'Basic ' + Buffer.from(`${user}:${password}`).toString('base64');

const REASON = {
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
const result = (domain: string, available: boolean | null, reason: string) => ({
  type: 'domain-availability',
  id: domain,
  attributes: { domain, available, reason },
  links: { self: `${BASE}/domain-availability/${domain}` },
});
const doc = (url: string, ...data: ReturnType<typeof result>[]) => ({ links: { self: BASE + url }, data, meta: { total: data.length } });
const invalid = (detail: string) => ({ id: 'invalid_api_data', status: '422', title: 'Invalid data', detail, source: { parameter: 'domains' } });
const errorDoc = (url: string, ...errors: object[]) => ({ errors, links: { self: BASE + url } });
const unauthorized = (url: string, detail: string) =>
  errorDoc(url, { id: 'unauthorized', status: '401', title: 'Authentication required', detail });

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

describe.each(ENGINES)('domain-availability on %s', (engine) => {
  let rdap: Awaited<ReturnType<typeof startRdapServer>>;
  let store: TestStore;
  let t: TestApp; // RDAP configured: .test, .refused and a * fallback
  let bare: TestApp; // no RDAP configured, same database
  let x: Tenants;
  const get = (app: TestApp, url: string, o: { token?: string; headers?: Record<string, string> } = {}) =>
    call(app.app, 'GET', url, { token: o.token ?? (o.headers ? undefined : x.end1.token), headers: o.headers });

  beforeAll(async () => {
    rdap = await startRdapServer();
    store = await freshStore(engine);
    t = await createTestApp(
      engine,
      {
        RDAP_SERVERS: `test=${rdap.base}/rdap/,refused=http://127.0.0.1:${await closedPort()},*=${rdap.base}/any`,
        RDAP_TIMEOUT_MS: String(TIMEOUT_MS),
      },
      { store },
    );
    bare = await createTestApp(engine, {}, { store });
    x = await seedTenants(t.admin);
    // Presence only: used with solo's package, registered with another registrar. An IDN,
    // registered with the service, for end2.
    await t.admin.createDomain({ name: 'elsewhere.example', customerId: Number(x.solo.customerId), packageId: Number(x.solo.packageId) });
    await t.admin.createDomain({ name: 'münchen.example', customerId: Number(x.end2.customerId), registered: true });
    await t.admin.setLegacyPassword(Number(x.reseller.customerId), LEGACY_PASSWORD);
  });
  afterAll(async () => {
    await t?.close();
    await bare?.close();
    await store?.drop();
    await rdap?.close();
  });

  describe('answers (§2.11, API-NOTES §6)', () => {
    it('RDAP: 200 → false, 404 → true, hanging → null, 500 → null; request order; compact, list layout (links first)', async () => {
      const url = '/domain-availability/taken.test,free.test,slow.test,broken.test';
      const before = rdap.requests.length;
      const started = Date.now();
      const r = await get(t, url);
      const elapsed = Date.now() - started;
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toBe('application/json');
      const expected = doc(
        url,
        result('taken.test', false, REASON.rdapFound),
        result('free.test', true, REASON.rdapFree),
        result('slow.test', null, REASON.timeout),
        result('broken.test', null, REASON.status500),
      );
      // Byte-exact: key order is part of the contract (API-NOTES §1.1); no internals of the 500.
      expect(r.body).toBe(JSON.stringify(expected));
      // The timeout bounds the request; the hanging lookup did not hold up the others' answers.
      expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
      expect(elapsed).toBeLessThan(TIMEOUT_MS + 1500);
      // RFC 9082 path under the configured base (its trailing slash dropped), RDAP media type.
      const sent = rdap.requests.slice(before);
      expect(sent.map((q) => q.url).sort()).toEqual(
        ['/rdap/domain/broken.test', '/rdap/domain/free.test', '/rdap/domain/slow.test', '/rdap/domain/taken.test'],
      );
      for (const q of sent) expect(q.accept).toMatch(/^application\/rdap\+json\b/);
    });

    it('lookups run in parallel under one timeout for the whole request (§4.3.7)', async () => {
      const url = '/domain-availability/slow.test,slowbody.test,slow.other,free.other';
      const started = Date.now();
      const r = await get(t, url);
      const elapsed = Date.now() - started;
      expect(r.status).toBe(200);
      expect(r.json).toEqual(
        doc(
          url,
          result('slow.test', null, REASON.timeout),
          // Headers arrived, the body never finished: the same timeout covers the body.
          result('slowbody.test', null, REASON.timeout),
          result('slow.other', null, REASON.timeout),
          result('free.other', true, REASON.rdapFree),
        ),
      );
      // Three hanging lookups one after another would take three timeouts.
      expect(elapsed).toBeLessThan(2 * TIMEOUT_MS);
    });

    it('the * server answers other TLDs; unreachable server and a 200 that is no RDAP → null', async () => {
      const url = '/domain-availability/taken.other,free.refused,html.other';
      const before = rdap.requests.length;
      const r = await get(t, url);
      expect(r.status).toBe(200);
      expect(r.body).toBe(
        JSON.stringify(
          doc(
            url,
            result('taken.other', false, REASON.rdapFound),
            result('free.refused', null, REASON.unreachable),
            result('html.other', null, REASON.notRdap),
          ),
        ),
      );
      expect(rdap.requests.slice(before).map((q) => q.url).sort()).toEqual(['/any/domain/html.other', '/any/domain/taken.other']);
    });

    it('the own registry answers first, for domains of any customer; RDAP is not asked for them', async () => {
      // solo asks about the reseller's and end2's domains: another tenant's name is just as taken.
      const url = '/domain-availability/reseller.example,elsewhere.example,end2.example,solo.example';
      const before = rdap.requests.length;
      const r = await get(t, url, { token: x.solo.token });
      expect(r.status).toBe(200);
      expect(r.body).toBe(
        JSON.stringify(
          doc(
            url,
            result('reseller.example', false, REASON.registered),
            result('elsewhere.example', false, REASON.elsewhere),
            result('end2.example', false, REASON.registered),
            result('solo.example', false, REASON.registered),
          ),
        ),
      );
      expect(rdap.requests.length).toBe(before);
    });

    it('without any RDAP server configured: the own registry still answers, others are null with a reason', async () => {
      const url = '/domain-availability/end1.example,free.test,elsewhere.example,taken.de';
      const before = rdap.requests.length;
      const r = await get(bare, url);
      expect(r.status).toBe(200);
      expect(r.body).toBe(
        JSON.stringify(
          doc(
            url,
            result('end1.example', false, REASON.registered),
            result('free.test', null, REASON.noServer('test')),
            result('elsewhere.example', false, REASON.elsewhere),
            result('taken.de', null, REASON.noServer('de')),
          ),
        ),
      );
      expect(rdap.requests.length).toBe(before);
    });

    it('Unicode names are looked up and answered in ACE form; letter case does not matter', async () => {
      const url = `/domain-availability/${encodeURIComponent('MÜNCHEN.example')},${encodeURIComponent('Bücher.test')},Taken.TEST`;
      const before = rdap.requests.length;
      const r = await get(t, url);
      expect(r.status).toBe(200);
      expect(r.body).toBe(
        JSON.stringify(
          doc(
            url,
            result('xn--mnchen-3ya.example', false, REASON.registered),
            result('xn--bcher-kva.test', true, REASON.rdapFree),
            result('taken.test', false, REASON.rdapFound),
          ),
        ),
      );
      expect(rdap.requests.slice(before).map((q) => q.url).sort()).toEqual(['/rdap/domain/taken.test', '/rdap/domain/xn--bcher-kva.test']);
    });

    it('duplicates (any case, Unicode or ACE, trailing dot) are answered once, at their first position', async () => {
      const names = ['free.test', 'end1.example', 'FREE.test', 'xn--bcher-kva.test', encodeURIComponent('bücher.TEST'), 'free.test.', '%20end1.example'];
      const url = `/domain-availability/${names.join(',')}`;
      const before = rdap.requests.length;
      const r = await get(t, url);
      expect(r.status).toBe(200);
      expect(r.json).toEqual(
        doc(url, result('free.test', true, REASON.rdapFree), result('end1.example', false, REASON.registered), result('xn--bcher-kva.test', true, REASON.rdapFree)),
      );
      expect(rdap.requests.length - before).toBe(2);
    });

    it('Accept: application/vnd.api+json → the JSON:API content type', async () => {
      const r = await get(t, '/domain-availability/end1.example', { token: x.end1.token, headers: { accept: 'application/vnd.api+json' } });
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toBe('application/vnd.api+json');
      expect(r.json).toEqual(doc('/domain-availability/end1.example', result('end1.example', false, REASON.registered)));
    });
  });

  describe('the name list (§4.3.7, §8)', () => {
    const ten = Array.from({ length: 10 }, (_, i) => `free${i}.test`);

    it('10 distinct names are answered', async () => {
      const url = `/domain-availability/${ten.join(',')}`;
      const r = await get(t, url);
      expect(r.status).toBe(200);
      expect(r.json).toEqual(doc(url, ...ten.map((n) => result(n, true, REASON.rdapFree))));
    });

    it('more than 10 → 422 invalid_api_data naming the parameter; nothing is looked up', async () => {
      const url = `/domain-availability/${[...ten, 'one-more.test'].join(',')}`;
      const before = rdap.requests.length;
      const r = await get(t, url);
      expect(r.status).toBe(422);
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.json).toEqual(errorDoc(url, invalid('At most 10 domain names per request (spec §4.3.7); 11 given.')));
      expect(rdap.requests.length).toBe(before);
    });

    it('duplicates do not count against the limit: 10 names spelled 13 ways → 200', async () => {
      const url = `/domain-availability/${[...ten, 'FREE0.test', 'free1.test.', 'Free2.Test'].join(',')}`;
      const r = await get(t, url);
      expect(r.status).toBe(200);
      expect(r.json.data.map((d: { id: string }) => d.id)).toEqual(ten);
    });

    it('invalid names count too: 10 valid + 1 invalid → the limit error alone', async () => {
      const url = `/domain-availability/${[...ten, 'bad_name.test'].join(',')}`;
      const r = await get(t, url);
      expect(r.status).toBe(422);
      expect(r.json).toEqual(errorDoc(url, invalid('At most 10 domain names per request (spec §4.3.7); 11 given.')));
    });

    it('names that are not ACE-encodable → 422, one error per bad name, nothing looked up (API-NOTES §1.10)', async () => {
      const url = '/domain-availability/free.test,_acme-challenge.www.example.com,localhost,a..b.test,free.test,localhost';
      const before = rdap.requests.length;
      const r = await get(t, url);
      expect(r.status).toBe(422);
      expect(r.json).toEqual(
        errorDoc(
          url,
          invalid('"_acme-challenge.www.example.com" is not ACE-encodable.'),
          invalid('"localhost" is not ACE-encodable.'),
          invalid('"a..b.test" is not ACE-encodable.'),
        ),
      );
      expect(rdap.requests.length).toBe(before);
    });

    it.each([
      ['/domain-availability/', 'No domain name given.'],
      ['/domain-availability/,', 'No domain name given.'],
      ['/domain-availability/%20', 'No domain name given.'],
      ['/domain-availability/free.test,,taken.test', 'Empty domain name in the list.'],
    ])('%s → 422 %s', async (url, detail) => {
      const r = await get(t, url);
      expect(r.status).toBe(422);
      expect(r.json).toEqual(errorDoc(url, invalid(detail)));
    });

    it('a 253-character name is checked; one of 254 is not ACE-encodable', async () => {
      const n253 = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(56)}.test`;
      const n254 = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(57)}.test`;
      expect([n253.length, n254.length]).toEqual([253, 254]);
      const ok = await get(t, `/domain-availability/${n253}`);
      expect(ok.status).toBe(200);
      expect(ok.json).toEqual(doc(`/domain-availability/${n253}`, result(n253, true, REASON.rdapFree)));
      const bad = await get(t, `/domain-availability/${n254}`);
      expect(bad.status).toBe(422);
      expect(bad.json).toEqual(errorDoc(`/domain-availability/${n254}`, invalid(`"${n254}" is not ACE-encodable.`)));
    });
  });

  describe('authentication (§5, §5.6, API-NOTES §4)', () => {
    const url = '/domain-availability/end1.example';
    const answer = doc(url, result('end1.example', false, REASON.registered));

    it('a token works, in both forms', async () => {
      for (const authorization of [`token ${x.end2.token}`, basic('token', x.end2.token)]) {
        const r = await get(t, url, { headers: { authorization } });
        expect(r.status).toBe(200);
        expect(r.json).toEqual(answer);
      }
    });

    it("the reseller's legacy password (Basic, user = customer number) works here", async () => {
      const r = await get(t, url, { headers: { authorization: basic(x.reseller.customerId, LEGACY_PASSWORD) } });
      expect(r.status).toBe(200);
      expect(r.body).toBe(JSON.stringify(answer));
    });

    it('…and nowhere else: GET /customers with it → 401 with WWW-Authenticate', async () => {
      for (const path of ['/customers', `/customers/${x.reseller.customerId}`, '/domains/reseller.example']) {
        const r = await call(t.app, 'GET', path, { headers: { authorization: basic(x.reseller.customerId, LEGACY_PASSWORD) } });
        expect(r.status).toBe(401);
        expect(r.headers['www-authenticate']).toBe(WWW);
        expect(r.json).toEqual(unauthorized(path, 'Invalid credentials.'));
      }
    });

    it('wrong password, leading zeros, unknown customer, a non-reseller with a legacy hash, no header → 401', async () => {
      // A legacy hash on a non-reseller (the CLI refuses to set one; the check must not rely on that).
      await t.store.db
        .updateTable('customers')
        .set({ legacy_password_hash: await hashLegacyPassword(LEGACY_PASSWORD) })
        .where('id', '=', Number(x.solo.customerId))
        .execute();
      const cases: [string | undefined, string][] = [
        [basic(x.reseller.customerId, 'wrong-password-1234'), 'Invalid credentials.'],
        [basic(`0${x.reseller.customerId}`, LEGACY_PASSWORD), 'Invalid credentials.'],
        [basic(`00${x.reseller.customerId}`, LEGACY_PASSWORD), 'Invalid credentials.'],
        [basic('999999', LEGACY_PASSWORD), 'Invalid credentials.'],
        [basic('999999999999999', LEGACY_PASSWORD), 'Invalid credentials.'], // past PostgreSQL's integer: still 401, never 500
        [basic(x.solo.customerId, LEGACY_PASSWORD), 'Invalid credentials.'],
        [basic(x.end1.customerId, LEGACY_PASSWORD), 'Invalid credentials.'],
        [`token ${x.end1.token}x`, 'Invalid or revoked API token.'],
        [undefined, 'Missing Authorization header.'],
      ];
      for (const [authorization, detail] of cases) {
        const r = await get(t, url, { headers: authorization ? { authorization } : {} });
        expect(r.status, authorization).toBe(401);
        expect(r.headers['www-authenticate']).toBe(WWW);
        expect(r.json).toEqual(unauthorized(url, detail));
      }
    });

    it('authentication comes before the name list is judged', async () => {
      const bad = '/domain-availability/_bad.test';
      const r = await get(t, bad, { headers: {} });
      expect(r.status).toBe(401);
      expect(r.json).toEqual(unauthorized(bad, 'Missing Authorization header.'));
    });
  });

  it('is documented in /openapi.json under the tag domain-availability', async () => {
    const api = (await call(t.app, 'GET', '/openapi.json')).json;
    const op = api.paths['/domain-availability/{domains}'];
    expect(Object.keys(op)).toEqual(['get']);
    expect(op.get.tags).toEqual(['domain-availability']);
    expect(op.get.summary).toBe('Check whether up to 10 comma-separated domain names are available');
    expect(op.get.parameters).toEqual([
      expect.objectContaining({ in: 'path', name: 'domains', required: true, schema: expect.objectContaining({ type: 'string' }) }),
    ]);
    expect(api.tags).toEqual(expect.arrayContaining([{ name: 'domain-availability', description: expect.any(String) }]));
  });
});
