// Scoped tokens through HTTP (API guide "Scoped tokens"; docs/decisions/0028-token-scopes.md): a
// read-only token reads and every write answers 403 naming the scope with nothing changed; a
// domain-limited token sees only its domains and what lives in them; an ACME token changes only
// `_acme-challenge` TXT records and polls only its own jobs; an expired token and a token used
// from outside its networks answer 401; the token's last use is noted once a minute.
import { describe, expect, it } from 'vitest';
import { BASE, ENGINES, call } from '../helpers/app.js';
import { useSeededApp } from '../helpers/suite.js';
import { errorBody, notFoundAt } from '../helpers/errors.js';
import { postEmail, placeholderMailServer } from '../helpers/email.js';
import { txt } from '../helpers/dns-records.js';
import { nowIso } from '../../src/db/time.js';
import type { TokenScopeOptions } from '../../src/admin/token-options.js';

const SHOP = 'end1-shop.example';
const scopeError = (self: string, detail: string) => errorBody('token_scope', 403, "Outside the token's scope", detail, `${BASE}${self}`);
const unauthorized = (self: string, detail: string) => errorBody('unauthorized', 401, 'Authentication required', detail, `${BASE}${self}`);
const ACME_DETAIL = 'This token may only change TXT records named _acme-challenge or _acme-challenge.<subdomain> (ACME DNS-01 challenges).';
const DOMAINS_DETAIL = 'This token is limited to the domains end1.example: it may use /domains, /dns-records, /subdomains, /email-addresses and /queue-jobs only.';

describe.each(ENGINES)('scoped tokens on %s', { timeout: 60_000 }, (engine) => {
  const { t, x } = useSeededApp(engine);
  const ids = { shopRecord: '', end1A: '', shopAddress: '', end1Address: '', end1Sub: '', shopSub: '', fullJob: '' };

  /** A token of end1's contact with these limits. */
  const issue = async (scope: TokenScopeOptions) => (await t.admin.customers.issueToken(x.end1.contactId, 'scoped', scope)).token;
  /** What the refusals must leave as it was: every row a write could touch. */
  const snapshot = async () => {
    const db = t.store.db;
    return Promise.all(
      (['dns_records', 'queue_jobs', 'email_addresses', 'subdomains', 'databases', 'ssh_keys', 'domains', 'customers', 'mail_app_passwords'] as const).map((table) =>
        db.selectFrom(table).selectAll().execute(),
      ),
    );
  };

  it('set-up: end1 gets a second domain with a record, an address and a subdomain in each domain', async () => {
    await t.admin.domains.createDomain({ name: SHOP, customerId: Number(x.end1.customerId), packageId: Number(x.end1.packageId), registered: true });
    await placeholderMailServer(t.store);
    const full = x.end1.token;
    const shopRecord = await call(t.app, 'POST', '/dns-records', { token: full, body: { data: { type: 'dns-record', attributes: txt('shop', 'v', { domain: SHOP }) } } });
    expect(shopRecord.status, shopRecord.body).toBe(202);
    ids.shopRecord = String(shopRecord.json.data.links['dns-record']).replace(`${BASE}/dns-records/`, '');
    ids.fullJob = shopRecord.json.data.id;
    const a = await t.store.db.selectFrom('dns_records').select('id').where('domain', '=', 'end1.example').where('record_type', '=', 'A').executeTakeFirstOrThrow();
    ids.end1A = String(a.id);
    for (const [key, address] of [['end1Address', 'info@end1.example'], ['shopAddress', `info@${SHOP}`]] as const) {
      const r = await postEmail(t, full, { address, address_type: 'forward', forward_to: ['x@elsewhere.example'] });
      expect(r.status, r.body).toBe(202);
      ids[key] = r.json.data.id;
    }
    for (const [key, domain] of [['end1Sub', 'end1.example'], ['shopSub', SHOP]] as const) {
      const row = await t.store.db
        .insertInto('subdomains')
        .values({
          customer_id: Number(x.end1.customerId), package_id: Number(x.end1.packageId), domain, name: 'blog', kind: 'email', description: '',
          webspace_path: null, php_version: null, webspace_https: 0, webspace_root: null, redirect_target: null, redirect_dynamic: 0, redirect_https: 0,
          state: 'live', created_at: nowIso(), updated_at: nowIso(),
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      ids[key] = String(row.id);
    }
  });

  it('read-only: every GET answers as for the full token; every write operation answers 403 "This token is read-only." and changes nothing', async () => {
    const token = await issue({ readOnly: true });
    for (const url of ['/customers', `/customers/${x.end1.customerId}`, '/domains', '/domains/end1.example', '/packages', `/packages/${x.end1.packageId}`, '/plans',
      '/dns-records', `/dns-records/${ids.shopRecord}`, '/queue-jobs', `/queue-jobs/${ids.fullJob}`, '/databases', '/subdomains', `/subdomains/${ids.shopSub}`,
      '/email-addresses', `/email-addresses/${ids.shopAddress}`, `/email-addresses/${ids.shopAddress}/application-passwords`, '/ssh-keys']) {
      const [scoped, full] = [await call(t.app, 'GET', url, { token }), await call(t.app, 'GET', url, { token: x.end1.token })];
      expect(scoped.status, url).toBe(200);
      expect(scoped.body, url).toBe(full.body);
    }
    // Every write operation the API documents, whatever its body: refused before the body is read.
    const doc = (await call(t.app, 'GET', '/openapi.json')).json;
    const params: Record<string, string> = { id: ids.end1Address, name: 'end1.example', target: 'y@elsewhere.example', appId: '1' };
    const before = await snapshot();
    let writes = 0;
    for (const [path, ops] of Object.entries<Record<string, unknown>>(doc.paths)) {
      for (const method of Object.keys(ops).filter((m) => m !== 'get').map((m) => m.toUpperCase())) {
        // The panel's login looks at no credentials (API guide "Panel sessions (extension)").
        if (`${method} ${path}` === 'POST /session') continue;
        const url = path.replace(/\{(\w+)\}/g, (_, p: string) => params[p]);
        const r = await call(t.app, method as 'POST', url, { token, body: { data: { type: 'x', attributes: {} } } });
        expect(r.json, `${method} ${url}`).toEqual(scopeError(url, 'This token is read-only.'));
        writes++;
      }
    }
    expect(writes).toBeGreaterThanOrEqual(20);
    expect(await snapshot()).toEqual(before);
  });

  it('limited to a domain: lists show only that domain and what lives in it; the other domain\'s objects are not found; other kinds answer 403 naming the domains', async () => {
    const token = await issue({ domains: ['end1.example'] });
    const listed = async (url: string) => (await call(t.app, 'GET', url, { token })).json.data.map((d: { id: string }) => d.id);
    expect(await listed('/domains')).toEqual(['end1.example']);
    const records = (await call(t.app, 'GET', '/dns-records', { token })).json.data;
    expect(records.length).toBeGreaterThan(3);
    expect(new Set(records.map((r: { attributes: { domain: string } }) => r.attributes.domain))).toEqual(new Set(['end1.example']));
    expect(await listed(`/dns-records?filter[domain]=${SHOP}`)).toEqual([]);
    expect(await listed('/subdomains')).toEqual([ids.end1Sub]);
    expect(await listed('/email-addresses')).toEqual([ids.end1Address]);
    // The same objects the full token sees in that domain.
    expect(await listed('/email-addresses?filter[domain]=end1.example')).toEqual([ids.end1Address]);
    for (const [url, what] of [[`/domains/${SHOP}`, 'domain'], [`/dns-records/${ids.shopRecord}`, 'dns-record'], [`/subdomains/${ids.shopSub}`, 'subdomain'],
      [`/email-addresses/${ids.shopAddress}`, 'email-address'], [`/queue-jobs/${ids.fullJob}`, 'queue-job']] as const) {
      expect((await call(t.app, 'GET', url, { token })).json, url).toEqual(notFoundAt(`${BASE}${url}`, what));
    }
    expect((await call(t.app, 'GET', '/domains/end1.example', { token })).status).toBe(200);
    expect((await call(t.app, 'GET', `/email-addresses/${ids.end1Address}`, { token })).status).toBe(200);
    for (const url of ['/customers', `/customers/${x.end1.customerId}`, '/packages', `/packages/${x.end1.packageId}`, '/plans', '/databases', '/ssh-keys', '/domain-availability/new.example', '/webhooks', '/audit-events']) {
      expect((await call(t.app, 'GET', url, { token })).json, url).toEqual(scopeError(url, DOMAINS_DETAIL));
    }
    // Writes: in its domain as the full token; in the other one the domain is not found, and nothing is stored.
    const before = await snapshot();
    const other = await call(t.app, 'POST', '/dns-records', { token, body: { data: { type: 'dns-record', attributes: txt('x', 'v', { domain: SHOP }) } } });
    expect(other.json).toEqual(errorBody('resource_not_found', 404, 'Resource not found', 'No such domain.', `${BASE}/dns-records`));
    const otherAddress = await postEmail(t, token, { address: `new@${SHOP}`, address_type: 'forward', forward_to: ['x@elsewhere.example'] });
    expect(otherAddress.status).toBe(404);
    expect((await call(t.app, 'DELETE', `/dns-records/${ids.shopRecord}`, { token })).status).toBe(404);
    expect(await snapshot()).toEqual(before);
    const own = await call(t.app, 'POST', '/dns-records', { token, body: { data: { type: 'dns-record', attributes: txt('mine', 'v') } } });
    expect(own.status, own.body).toBe(202);
    // Its jobs are those of its own requests.
    expect(await listed('/queue-jobs')).toEqual([own.json.data.id]);
    expect((await call(t.app, 'GET', `/queue-jobs/${own.json.data.id}`, { token })).status).toBe(200);
  });

  it('--acme-challenge: creates and deletes _acme-challenge TXT records (apex and www), sees only those, polls its own jobs; nothing else', async () => {
    const token = await issue({ acmeChallenge: true });
    const post = (attributes: Record<string, unknown>) => call(t.app, 'POST', '/dns-records', { token, body: { data: { type: 'dns-record', attributes } } });
    const apex = await post(txt('_acme-challenge', 'token-apex'));
    const www = await post(txt('_ACME-challenge.www', 'token-www'));
    expect([apex.status, www.status], apex.body + www.body).toEqual([202, 202]);
    // In every domain of its contact (no --domain given).
    expect((await post(txt('_acme-challenge', 'token-shop', { domain: SHOP }))).status).toBe(202);
    const listed = (await call(t.app, 'GET', '/dns-records?filter[domain]=end1.example', { token })).json.data;
    expect(listed.map((r: { attributes: { name: string; data: string } }) => `${r.attributes.name} ${r.attributes.data}`).sort()).toEqual(
      ['_acme-challenge token-apex', '_acme-challenge.www token-www'],
    );
    // The jobs of its own requests, not those of the full token.
    expect((await call(t.app, 'GET', `/queue-jobs/${apex.json.data.id}`, { token })).json.data.attributes).toMatchObject({ job_type: 'dns-record', status: 'pending' });
    expect((await call(t.app, 'GET', `/queue-jobs/${ids.fullJob}`, { token })).status).toBe(404);
    expect((await call(t.app, 'GET', '/domains/end1.example', { token })).status).toBe(200);

    const before = await snapshot();
    for (const attributes of [
      { record_type: 'A', name: 'www', domain: 'end1.example', data: '192.0.2.99' },
      txt('acme-challenge', 'v'),
      txt('_acme-challenge-x', 'v'),
      txt('x._acme-challenge', 'v'),
      { record_type: 'CNAME', name: '_acme-challenge.ftp', domain: 'end1.example', data: 'elsewhere.example.' },
    ]) {
      expect((await post(attributes)).json, JSON.stringify(attributes)).toEqual(scopeError('/dns-records', ACME_DETAIL));
    }
    expect((await call(t.app, 'DELETE', `/dns-records/${ids.end1A}`, { token })).json).toEqual(notFoundAt(`${BASE}/dns-records/${ids.end1A}`, 'dns-record'));
    expect((await call(t.app, 'GET', `/dns-records/${ids.shopRecord}`, { token })).status).toBe(404);
    for (const [method, url] of [['GET', '/customers'], ['GET', '/packages'], ['POST', '/subdomains'], ['GET', '/email-addresses'], ['PATCH', '/domains/end1.example'], ['POST', '/databases'], ['POST', '/webhooks'], ['GET', '/audit-events']] as const) {
      expect((await call(t.app, method, url, { token, body: { data: { type: 'x', attributes: {} } } })).json, url).toEqual(scopeError(url, ACME_DETAIL));
    }
    expect(await snapshot()).toEqual(before);

    for (const created of [apex, www]) {
      const id = String(created.json.data.links['dns-record']).replace(`${BASE}/dns-records/`, '');
      expect((await call(t.app, 'DELETE', `/dns-records/${id}`, { token })).status).toBe(202);
    }
  });

  it('--acme-challenge with --domain: only that domain; the refusal names it', async () => {
    const token = await issue({ acmeChallenge: true, domains: [SHOP] });
    const post = (attributes: Record<string, unknown>) => call(t.app, 'POST', '/dns-records', { token, body: { data: { type: 'dns-record', attributes } } });
    expect((await post(txt('_acme-challenge', 'v', { domain: SHOP }))).status).toBe(202);
    expect((await post(txt('_acme-challenge', 'v'))).status).toBe(404);
    expect((await post(txt('other', 'v', { domain: SHOP }))).json).toEqual(
      scopeError('/dns-records', `This token may only change TXT records named _acme-challenge or _acme-challenge.<subdomain> of the domains ${SHOP}.`),
    );
    expect((await call(t.app, 'GET', '/domains', { token })).json.data.map((d: { id: string }) => d.id)).toEqual([SHOP]);
  });

  it('an expired token answers 401 saying so, on the hot reads and every other route; one not yet expired works', async () => {
    const { tokenId, token } = await t.admin.customers.issueToken(x.end1.contactId, 'expiring', { expires: new Date(Date.now() + 3_600_000).toISOString() });
    expect((await call(t.app, 'GET', '/domains/end1.example', { token })).status).toBe(200);
    await t.store.db.updateTable('api_tokens').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('id', '=', tokenId).execute();
    for (const url of ['/domains/end1.example', `/customers/${x.end1.customerId}`, '/dns-records', '/domains']) {
      const r = await call(t.app, 'GET', url, { token });
      expect(r.json, url).toEqual(unauthorized(url, 'This API token has expired.'));
      expect(r.headers['www-authenticate']).toBe('Basic realm="API"');
    }
  });

  it('expiry needs no write to take effect: a hot read answered just before is not served to the token after its instant (docs/decisions/0028-token-scopes.md)', async () => {
    const { token } = await t.admin.customers.issueToken(x.end1.contactId, 'short', { expires: new Date(Date.now() + 1500).toISOString() });
    const url = '/domains/end1.example';
    // Twice: the second is what SQLite keeps answering until the database changes (decision 0012).
    expect([(await call(t.app, 'GET', url, { token })).status, (await call(t.app, 'GET', url, { token })).status]).toEqual([200, 200]);
    await new Promise((resolve) => setTimeout(resolve, 1600));
    expect((await call(t.app, 'GET', url, { token })).json).toEqual(unauthorized(url, 'This API token has expired.'));
  });

  it('--allow-ip: from inside its networks it works (IPv4, IPv4-mapped, IPv6); from outside it answers exactly as an unknown token', async () => {
    const token = await issue({ allowIps: ['192.0.2.0/24', '2001:db8::/32'] });
    for (const remoteAddress of ['192.0.2.7', '::ffff:192.0.2.200', '2001:db8::5']) {
      for (const url of ['/domains/end1.example', '/dns-records']) expect((await call(t.app, 'GET', url, { token, remoteAddress })).status, `${remoteAddress} ${url}`).toBe(200);
    }
    for (const remoteAddress of ['198.51.100.7', '127.0.0.1', '2001:db9::1']) {
      for (const url of ['/domains/end1.example', '/dns-records']) {
        const [refused, unknown] = [await call(t.app, 'GET', url, { token, remoteAddress }), await call(t.app, 'GET', url, { token: 'hp_unknown', remoteAddress })];
        expect(refused.status).toBe(401);
        expect(refused.body, `${remoteAddress} ${url}`).toBe(unknown.body);
        expect(refused.json).toEqual(unauthorized(url, 'Invalid or revoked API token.'));
      }
    }
  });

  it('an unscoped token sees and changes what its contact may, as before', async () => {
    const list = (await call(t.app, 'GET', '/domains', { token: x.end1.token })).json.data.map((d: { id: string }) => d.id);
    expect(list).toEqual(['end1-shop.example', 'end1.example']);
    expect((await call(t.app, 'GET', `/queue-jobs/${ids.fullJob}`, { token: x.end1.token })).status).toBe(200);
  });

  it("the token's last use is noted on its first request, and again only after a minute", async () => {
    const { tokenId, token } = await t.admin.customers.issueToken(x.end1.contactId, 'usage');
    const lastUsed = async () => (await t.store.db.selectFrom('api_tokens').select('last_used_at').where('id', '=', tokenId).executeTakeFirstOrThrow()).last_used_at;
    expect(await lastUsed()).toBeNull();
    const before = Date.now();
    await call(t.app, 'GET', '/domains/end1.example', { token });
    const first = await lastUsed();
    expect(Date.parse(first!)).toBeGreaterThanOrEqual(before - 5);
    await call(t.app, 'GET', '/dns-records', { token });
    expect(await lastUsed()).toBe(first);
  });
});
