// Logs: every request logged once with its request id, never a
// token, a Basic credential, a password or a credential in the query string; a forged
// x-request-id is replaced.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ENGINES, call, createTestApp, type EngineName, type TestStore } from '../helpers/app.js';
import { basic } from '../helpers/auth.js';
import { listen, rawRequest, useHttpCore } from '../helpers/http-core.js';

/** An app on `store` logging at info level; `lines` collects its log lines as they are written. */
async function loggedApp(engine: EngineName, store: TestStore) {
  const lines: string[] = [];
  const logStream = new PassThrough();
  logStream.on('data', (chunk) => lines.push(...String(chunk).split('\n').filter(Boolean)));
  return { lines, logged: await createTestApp(engine, { LOG_LEVEL: 'info' }, { store, logStream }) };
}

describe.each(ENGINES)('HTTP core on %s', (engine) => {
  const { ts, t, x } = useHttpCore(engine);

  describe('logs', () => {
    it('carry request ids and never a token, a Basic credential or a password', async () => {
      const { lines, logged } = await loggedApp(engine, ts);
      try {
        const legacy = 'legacy-password-5678';
        await logged.admin.customers.setLegacyPassword(Number(x.reseller.customerId), legacy);
        const secrets = [
          x.reseller.token,
          x.end1.token,
          basic('token', x.end1.token).slice(6),
          basic(x.reseller.customerId, legacy).slice(6),
          legacy,
          'hp_forged_token_value',
        ];
        const sent = [
          await call(logged.app, 'GET', '/customers', { token: x.reseller.token, headers: { 'x-request-id': 'req-abc.123' } }),
          await call(logged.app, 'GET', '/customers', { headers: { authorization: basic('token', x.end1.token) } }),
          await call(logged.app, 'GET', '/customers', { headers: { authorization: basic(x.reseller.customerId, legacy) } }),
          await call(logged.app, 'GET', '/customers', { headers: { authorization: 'token hp_forged_token_value' } }),
          await call(logged.app, 'PATCH', `/customers/${x.end1.customerId}`, { token: x.reseller.token, body: '{bad json' }),
          await call(logged.app, 'GET', '/nope', { token: x.end1.token }),
        ];
        expect(sent.map((r) => r.status)).toEqual([200, 200, 401, 401, 400, 404]);
        // Every response names its request id; a well-formed client id is kept.
        expect(sent[0].headers['x-request-id']).toBe('req-abc.123');
        for (const r of sent) expect(r.headers['x-request-id']).toMatch(/^[A-Za-z0-9._-]{1,64}$/);
        const ids = new Set(sent.map((r) => String(r.headers['x-request-id'])));
        expect(ids.size).toBe(sent.length);

        expect(lines.length).toBeGreaterThanOrEqual(sent.length);
        const parsed = lines.map((l) => JSON.parse(l));
        for (const line of lines) for (const s of secrets) expect(line.includes(s), `a log line contains a secret: ${line}`).toBe(false);
        const reqLines = parsed.filter((p) => p.msg === 'request');
        for (const p of reqLines) expect(p.reqId).toEqual(expect.any(String));
        for (const id of ids) expect(reqLines.filter((p) => p.reqId === id).length, `log lines of ${id}`).toBe(1);
      } finally {
        await logged.close();
      }
    });

    it.each([
      ['a NUL and spaces', 'evil\u0000id with spaces'],
      ['a newline', 'abc\nlevel=fatal'],
      ['a quote', 'abc"def'],
      ['a slash', '../etc/passwd'],
      ['65 characters', 'a'.repeat(65)],
      ['empty', ''],
    ])('a forged x-request-id with %s is replaced by a new one', async (_n, forged) => {
      const r = await call(t.app, 'GET', '/customers', { token: x.reseller.token, headers: { 'x-request-id': forged } });
      expect(r.status).toBe(200);
      expect(r.headers['x-request-id']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    });

    it('a short id of letters, digits, ".", "_" and "-" is kept (64 characters at most)', async () => {
      for (const id of ['a', 'Req_1.2-3', 'x'.repeat(64)]) {
        const r = await call(t.app, 'GET', '/customers', { token: x.reseller.token, headers: { 'x-request-id': id } });
        expect(r.headers['x-request-id']).toBe(id);
      }
    });
  });

  describe('URLs in logs', () => {
    // Each pair: the request target sent, and the URL its log line shows.
    const targets: [string, string][] = [
      ['/customers?access_token=SECRET-1', '/customers?access_token=[Redacted]'],
      ['/customers?page[size]=2&API_KEY=SECRET-2&page[number]=1', '/customers?page[size]=2&API_KEY=[Redacted]&page[number]=1'],
      ['/customers?password=SECRET-3&Passwd=SECRET-4&pass=SECRET-5&filter[x]=a%20b', '/customers?password=[Redacted]&Passwd=[Redacted]&pass=[Redacted]&filter[x]=a%20b'],
      ['/nope?client_secret=SECRET-6&sig=SECRET-7&Signature=SECRET-8&code=SECRET-9&zip_code=10115', '/nope?client_secret=[Redacted]&sig=[Redacted]&Signature=[Redacted]&code=[Redacted]&zip_code=10115'],
      ['/nope?%74oken=SECRET-10&auth%5Buser%5D=SECRET-11&session_id=SECRET-12&token', '/nope?%74oken=[Redacted]&auth%5Buser%5D=[Redacted]&session_id=[Redacted]&token'],
      ['/nope?x-api-key=SECRET-13&apikey=SECRET-14&key=SECRET-15&q=key', '/nope?x-api-key=[Redacted]&apikey=[Redacted]&key=[Redacted]&q=key'],
      ['/customers?token=SECRET-16&token=SECRET-17&TOKEN=', '/customers?token=[Redacted]&token=[Redacted]&TOKEN=[Redacted]'],
      ['/customers/%zz?token=SECRET-18', '/customers/%zz?token=[Redacted]'],
      ['/customers?filter[name]=a=b&empty=&&page', '/customers?filter[name]=a=b&empty=&&page'],
    ];

    it('show every byte of the URL but the values of parameters that could carry a credential', async () => {
      const { lines, logged } = await loggedApp(engine, ts);
      try {
        const ids: string[] = [];
        for (const [target] of targets) {
          const r = await call(logged.app, 'GET', target, { token: x.reseller.token });
          expect(r.status, target).toBeLessThan(500);
          ids.push(String(r.headers['x-request-id']));
        }
        for (const line of lines) expect(line, 'a log line shows a secret').not.toMatch(/SECRET-/);
        const urls = lines.map((l) => JSON.parse(l)).filter((p) => p.msg === 'request');
        expect(ids.map((id) => urls.find((p) => p.reqId === id)?.url)).toEqual(targets.map(([, logged]) => logged));
      } finally {
        await logged.close();
      }
    });

    it('on a listening server too, whatever the request', async () => {
      const { lines, logged } = await loggedApp(engine, ts);
      try {
        const port = await listen(logged.app);
        const r = await rawRequest(port, 'CONNECT /x?token=SECRET-19 HTTP/1.1\r\nHost: api.test\r\n\r\n');
        expect(r.statusLine).toMatch(/^HTTP\/1\.1 405 /);
        const r2 = await rawRequest(port, 'GET /healthz?api_key=SECRET-20 HTTP/1.1\r\nHost: api.test\r\nConnection: close\r\n\r\n');
        expect(r2.statusLine).toMatch(/^HTTP\/1\.1 200 /);
        // An absolute-form target (sent to proxies) may carry a user and password before the host.
        const r3 = await rawRequest(port, 'GET http://me:SECRET-21@api.test/healthz HTTP/1.1\r\nHost: api.test\r\nConnection: close\r\n\r\n');
        expect(r3.statusLine).toMatch(/^HTTP\/1\.1 200 /);
        for (const line of lines) expect(line, 'a log line shows a secret').not.toMatch(/SECRET-/);
        const urls = lines.map((l) => JSON.parse(l)).filter((p) => p.msg === 'request').map((p) => `${p.method} ${p.url} ${p.status}`);
        expect(urls).toEqual(['CONNECT /x?token=[Redacted] 405', 'GET /healthz?api_key=[Redacted] 200', 'GET http://[Redacted]@api.test/healthz 200']);
      } finally {
        await logged.close();
      }
    });
  });
});
