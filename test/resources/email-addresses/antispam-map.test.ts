// rspamd's settings map of a mail server, GET/HEAD /internal/rspamd-settings (API guide "E-mail
// addresses"; docs/decisions/0011-antispam-and-autoresponder.md; src/node/render/rspamd.ts),
// through HTTP on both engines: the mail server's name and report key as HTTP Basic credentials; its
// addresses in the modes other than `reject`, lower case ACE, in three rules (mailboxes marked for their
// Sieve script, forwards rewritten or passed on); another server's addresses never; ETag/Last-Modified
// of the map's version with 304 while it stands, a new version after a PATCH of antispam (which
// answers once the polling server holds it: antispam-applied.test.ts); HEAD; refusals; not in the
// OpenAPI document. What rspamd makes of it is test/deploy/rspamd-stack.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MailServersRepository, mailReportKey } from '../../../src/provisioning/mail/servers.repository.js';
import { nowIso } from '../../../src/db/time.js';
import { ENGINES, call, createTestApp, type TestApp } from '../../helpers/app.js';
import { patchEmail, postEmail } from '../../helpers/email.js';
import { seedTenants, type Tenants } from '../../helpers/tenants.js';
import { sleep } from '../../helpers/wait.js';

const URL_ = '/internal/rspamd-settings';
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

const rule = (name: string, priority: number, apply: string) => (rcpt: string[]) =>
  `${name} {\n  priority = ${priority};\n  rcpt = [${rcpt.map((a) => `"${a}"`).join(', ')}];\n  apply { ${apply} }\n}\n`;
/** Forwards in subject-rewrite: rspamd rewrites the subject (no Sieve script runs for a forward). */
const rewriteRule = rule('hp_rewrite', 30, 'actions { reject = null; "add header" = null; "rewrite subject" = 15.0; } subject = "***SPAM*** %s";');
/** Mailboxes in any mode but reject: marked, and their Sieve script applies the mode. */
const markRule = rule('hp_mark', 20, 'actions { reject = null; "rewrite subject" = null; "add header" = 15.0; }');
/** Forwards in none: passed on as they came. */
const noneRule = rule('hp_none', 10, 'actions { reject = null; "add header" = null; "rewrite subject" = null; }');
const MARKED = ['info@xn--bcher-end1-9db.example', 'junk@end1.example', 'rewrite@end1.example'];

describe.each(ENGINES)('GET /internal/rspamd-settings on %s', (engine) => {
  let t: TestApp;
  let x: Tenants;
  const authA = basic('mx-a', mailReportKey('doveadm-key-a'));
  const authB = basic('mx-b', mailReportKey('doveadm-key-b'));
  const get = (headers: Record<string, string>, method: 'GET' | 'HEAD' = 'GET') => t.app.inject({ method, url: URL_, headers });
  const ids: Record<string, string> = {};
  /** Polls as rspamd does (If-None-Match with the ETag it holds) while `during` runs: PATCHes wait for it. */
  const polled = async <T>(authorization: string, during: () => Promise<T>): Promise<T> => {
    let stop = false;
    let etag = '';
    const loop = (async () => {
      while (!stop) {
        const r = await get({ authorization, ...(etag ? { 'if-none-match': etag } : {}) });
        if (r.statusCode === 200) etag = String(r.headers.etag);
        await sleep(50);
      }
    })();
    try {
      return await during();
    } finally {
      stop = true;
      await loop;
    }
  };

  beforeAll(async () => {
    t = await createTestApp(engine);
    x = await seedTenants(t.admin);
    const servers = new MailServersRepository(t.store.db);
    await servers.add({ name: 'mx-a', doveadm_url: 'http://127.0.0.1:9', doveadm_key: 'doveadm-key-a', smtp: '127.0.0.1:9', imap: '127.0.0.1:9', is_default: 1, created_at: nowIso() });
    await servers.add({ name: 'mx-b', doveadm_url: 'http://127.0.0.1:9', doveadm_key: 'doveadm-key-b', smtp: '127.0.0.1:9', imap: '127.0.0.1:9', is_default: 0, created_at: nowIso() });
    // end1's package goes to mx-a (the default) at its first address; a second package of end1 lives on mx-b.
    const { packageId } = await t.admin.packages.createPackage({ customerId: Number(x.end1.customerId), planId: Number(x.end1.planId), name: 'on b', mailServer: 'mx-b' });
    await t.admin.domains.createDomain({ name: 'on-b.example', customerId: Number(x.end1.customerId), packageId, registered: true });
    const post = async (key: string, attributes: Record<string, unknown>) => {
      const r = await postEmail(t, x.end1.token, attributes);
      expect(r.status, r.body).toBe(202);
      ids[key] = r.json.data.id;
    };
    await post('junk', { address: 'Junk@end1.example', address_type: 'mailbox', antispam: 'junk-folder' });
    await post('rewrite', { address: 'rewrite@end1.example', address_type: 'mailbox', antispam: 'subject-rewrite' });
    await t.admin.domains.createDomain({ name: 'bücher-end1.example', customerId: Number(x.end1.customerId), packageId: Number(x.end1.packageId) });
    await post('idn', { address: 'Info@Bücher-end1.example', address_type: 'mailbox', antispam: 'junk-folder' });
    await post('rewrite2', { address: 'a.rewrite@end1.example', address_type: 'forward', forward_to: ['x@elsewhere.example'], antispam: 'subject-rewrite' });
    await post('none', { address: 'none@end1.example', address_type: 'forward', forward_to: ['x@elsewhere.example'], antispam: 'none' });
    await post('reject', { address: 'reject@end1.example', address_type: 'mailbox' });
    await post('explicit-reject', { address: 'explicit@end1.example', address_type: 'mailbox', antispam: 'reject' });
    await post('b-none', { address: 'none@on-b.example', address_type: 'mailbox', antispam: 'none' });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  it('200: the server\'s addresses in the modes other than reject (lower case, ACE), mailboxes marked, forwards by mode, with ETag and Last-Modified', async () => {
    const r = await get({ authorization: authA });
    expect(r.statusCode).toBe(200);
    expect(r.body).toBe(rewriteRule(['a.rewrite@end1.example']) + markRule(MARKED) + noneRule(['none@end1.example']));
    expect(r.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(r.headers.etag).toMatch(/^"[A-Za-z0-9_-]{8}\.\d+"$/);
    expect(new Date(String(r.headers['last-modified'])).toUTCString()).toBe(r.headers['last-modified']);
    expect(r.headers['cache-control']).toBe('no-cache');
    // Expires 5 s ahead sets when rspamd asks again (decision 0019).
    const ahead = Date.parse(String(r.headers.expires)) - Date.parse(String(r.headers.date));
    expect(ahead).toBeGreaterThanOrEqual(5000);
    expect(ahead).toBeLessThanOrEqual(6000);
  });

  it('another server gets only its own addresses', async () => {
    const r = await get({ authorization: authB });
    expect(r.statusCode).toBe(200);
    expect(r.body).toBe(markRule(['none@on-b.example']));
  });

  it('304 with the same ETag while nothing changed (GET and HEAD); HEAD answers the headers alone', async () => {
    const first = await get({ authorization: authA });
    const etag = String(first.headers.etag);
    const again = await get({ authorization: authA, 'if-none-match': etag });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    expect(again.headers.etag).toBe(etag);
    // As rspamd asks: If-None-Match and If-Modified-Since together; a list and weak tags match too.
    expect((await get({ authorization: authA, 'if-none-match': etag, 'if-modified-since': 'Thu, 01 Jan 1970 00:00:00 GMT' })).statusCode).toBe(304);
    expect((await get({ authorization: authA, 'if-none-match': `"other", W/${etag}` })).statusCode).toBe(304);
    expect((await get({ authorization: authA, 'if-none-match': '"other"' })).statusCode).toBe(200);

    const head = await get({ authorization: authA }, 'HEAD');
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
    expect(head.headers.etag).toBe(etag);
    expect((await get({ authorization: authA, 'if-none-match': etag }, 'HEAD')).statusCode).toBe(304);
  });

  it('If-Modified-Since without If-None-Match: 304 for a date at or after Last-Modified, which grows with every version', async () => {
    const first = await get({ authorization: authA });
    const lm = Date.parse(String(first.headers['last-modified']));
    const at = (ms: number) => new Date(ms).toUTCString();
    expect((await get({ authorization: authA, 'if-modified-since': at(lm + 1000) })).statusCode).toBe(304);
    expect((await get({ authorization: authA, 'if-modified-since': at(lm) })).statusCode).toBe(304);
    expect((await get({ authorization: authA, 'if-modified-since': at(lm - 1000) })).statusCode).toBe(200);
    expect((await get({ authorization: authA, 'if-modified-since': at(lm - 60_000) })).statusCode).toBe(200);
    expect((await get({ authorization: authA, 'if-modified-since': 'not a date' })).statusCode).toBe(200);
  });

  it('a PATCH of antispam changes body and ETag; the old ETag gets the new body', async () => {
    const before = await get({ authorization: authA });
    const p = await polled(authA, () => patchEmail(t, x.end1.token, ids.reject, { antispam: 'none' }));
    expect(p.status, p.body).toBe(200);
    const after = await get({ authorization: authA, 'if-none-match': String(before.headers.etag) });
    expect(after.statusCode).toBe(200);
    expect(after.headers.etag).not.toBe(before.headers.etag);
    expect(after.body).toBe(
      rewriteRule(['a.rewrite@end1.example']) + markRule(['info@xn--bcher-end1-9db.example', 'junk@end1.example', 'reject@end1.example', 'rewrite@end1.example']) + noneRule(['none@end1.example']),
    );
    expect(Date.parse(String(after.headers['last-modified']))).toBeGreaterThan(Date.parse(String(before.headers['last-modified'])));
    // Back to reject: the address leaves the map, and the body is the first one again, as a new version.
    expect((await polled(authA, () => patchEmail(t, x.end1.token, ids.reject, { antispam: 'reject' }))).status).toBe(200);
    const back = await get({ authorization: authA, 'if-none-match': String(after.headers.etag) });
    expect(back.statusCode).toBe(200);
    expect(back.body).toBe(before.body);
    expect(back.headers.etag).not.toBe(after.headers.etag);
  }, 40_000);

  it('an address being deleted leaves the map', async () => {
    const d = await call(t.app, 'DELETE', `/email-addresses/${ids['rewrite2']}`, { token: x.end1.token });
    expect(d.status).toBe(202);
    const r = await get({ authorization: authA });
    expect(r.body).toBe(markRule(MARKED) + noneRule(['none@end1.example']));
  });

  it('a server without such addresses gets an empty object, which rspamd reads as "no rules"', async () => {
    expect((await polled(authB, () => patchEmail(t, x.end1.token, ids['b-none'], { antispam: 'reject' }))).status).toBe(200);
    const r = await get({ authorization: authB });
    expect(r.statusCode).toBe(200);
    expect(r.body).toBe('{}\n');
  }, 20_000);

  it('401 with a JSON:API error without credentials, for a wrong key, an unknown server, another server\'s key or the doveadm key itself', async () => {
    for (const authorization of [
      undefined,
      basic('mx-a', 'wrong'),
      basic('mx-c', mailReportKey('doveadm-key-a')),
      basic('mx-a', mailReportKey('doveadm-key-b')),
      basic('mx-a', 'doveadm-key-a'),
      `Bearer ${mailReportKey('doveadm-key-a')}`,
      'Basic %%%',
    ]) {
      const r = await get(authorization ? { authorization } : {});
      expect(r.statusCode, authorization).toBe(401);
      expect(r.headers['www-authenticate']).toBe('Basic realm="hostplane mail servers"');
      expect(r.headers.etag).toBeUndefined();
      expect(r.json()).toEqual({
        errors: [
          {
            id: 'unauthorized',
            status: '401',
            title: 'Authentication required',
            detail: 'Name a registered mail server and its report key as HTTP Basic credentials.',
          },
        ],
        links: { self: `http://api.test${URL_}` },
      });
    }
  });

  it('is not part of the API document', async () => {
    const doc = await call(t.app, 'GET', '/openapi.json');
    expect(doc.status).toBe(200);
    expect(Object.keys(doc.json.paths)).not.toContain(URL_);
  });
});
