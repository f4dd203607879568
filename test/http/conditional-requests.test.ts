// ETag, If-None-Match and If-Match through HTTP (API guide "Safe retries";
// docs/decisions/0026-safe-retries.md): every GET of one object answers a strong ETag of its
// resource object, 304 for If-None-Match; PATCH answers carry the ETag a following GET answers; a
// PATCH or DELETE with an If-Match the object no longer has answers 412 and changes nothing, with
// the current one it goes through; two clients with the same tag cannot both write.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, ENGINES, call, createTestApp, type TestApp } from '../helpers/app.js';
import { errorBody } from '../helpers/errors.js';
import { filledLater } from '../helpers/suite.js';
import { placeholderServers } from '../helpers/placeholder-servers.js';
import { seedTenants, type Tenants } from '../helpers/tenants.js';
import { countOf, createObjects, txtRecord, updateDoc, type Objects } from '../helpers/safe-retries.js';

const TAG = /^"[A-Za-z0-9_-]{22}"$/;
const preconditionFailed = (url: string) =>
  errorBody('precondition_failed', 412, 'Precondition failed', 'The object has changed since the entity tag you sent: read it again (its ETag) and decide anew.', `${BASE}${url}`);

describe.each(ENGINES)('conditional requests on %s', { timeout: 60_000 }, (engine) => {
  const t = filledLater<TestApp>();
  const x = filledLater<Tenants>();
  const o = filledLater<Objects>();
  beforeAll(async () => {
    Object.assign(t, await createTestApp(engine));
    await placeholderServers(t);
    Object.assign(x, await seedTenants(t.admin));
    Object.assign(o, await createObjects(t, x.end1));
  });
  afterAll(() => t.close?.());

  const get = (url: string, headers: Record<string, string> = {}, token = x.end1.token) => call(t.app, 'GET', url, { token, headers });
  const tagOf = async (url: string, token = x.end1.token) => String((await get(url, {}, token)).headers.etag);

  /** Every GET that answers one object, as the end customer (its customer, domain, package, plan, a job, and one object of each kind). */
  const ones = () => [
    `/customers/${x.end1.customerId}`, `/domains/${x.end1.domain}`, `/packages/${x.end1.packageId}`, `/plans/${x.end1.planId}`,
    `/queue-jobs/${o.job}`, `/dns-records/${o.dnsRecord}`, `/databases/${o.database}`, `/subdomains/${o.subdomain}`,
    `/email-addresses/${o.email}`, `/ssh-keys/${o.sshKey}`,
  ];

  /**
   * Each PATCH: its URL, who may send it, and two bodies that leave the object in different states.
   * Subdomains answer 202 (with the job), the others 200.
   */
  const patches = () => [
    { url: `/customers/${x.end1.customerId}`, token: x.reseller.token, status: 200, body: (v: string) => updateDoc('customer', x.end1.customerId, { external_customer_id: `ext-${v}` }) },
    { url: `/domains/${x.end1.domain}`, token: x.end1.token, status: 200, body: (v: string) => updateDoc('domain', x.end1.domain, { presence: { dns_update_lock: v.endsWith('1') } }) },
    { url: `/databases/${o.database}`, token: x.end1.token, status: 200, body: (v: string) => updateDoc('database', o.database, { description: v }) },
    { url: `/subdomains/${o.subdomain}`, token: x.end1.token, status: 202, body: (v: string) => updateDoc('subdomain', o.subdomain, { description: v }) },
    { url: `/email-addresses/${o.email}`, token: x.end1.token, status: 200, body: (v: string) => updateDoc('email-address', o.email, { description: v }) },
  ];

  it('every GET of one object answers a strong ETag: the digest of its resource object, the same while nothing changes, whatever the URL spelling', async () => {
    for (const url of ones()) {
      const r = await get(url);
      expect(r.status, `${url}: ${r.body}`).toBe(200);
      expect(r.headers.etag, url).toMatch(TAG);
      // The tag is of `data` only: links.self echoes the URL, the tag does not depend on it.
      const data = JSON.stringify(r.json.data);
      expect(r.headers.etag, url).toBe(`"${crypto.createHash('sha256').update(data).digest('base64url').slice(0, 22)}"`);
      // The body is what it was: compact JSON, data first, then links.self of the request.
      expect(r.body, url).toBe(`{"data":${data},"links":{"self":${JSON.stringify(BASE + url)}}}`);
      const again = await get(url);
      expect([again.headers.etag, again.body], url).toEqual([r.headers.etag, r.body]);
    }
    // The reseller sees the same object with the same tag; another spelling of its URL too.
    expect(await tagOf(`/domains/${x.end1.domain}`, x.reseller.token)).toBe(await tagOf(`/domains/${x.end1.domain}`));
    expect(await tagOf(`/domains/${x.end1.domain.toUpperCase()}`)).toBe(await tagOf(`/domains/${x.end1.domain}`));
    expect(await tagOf(`//dns-records/${o.dnsRecord}`)).toBe(await tagOf(`/dns-records/${o.dnsRecord}`));
    // Lists and other objects' tags differ; lists carry none.
    expect(await tagOf(`/databases/${o.database}`)).not.toBe(await tagOf(`/subdomains/${o.subdomain}`));
    expect((await get('/dns-records')).headers.etag).toBeUndefined();
  });

  it('If-None-Match naming the current ETag (also weak, in a list, or *) answers 304 with the ETag and no body; another tag the whole object', async () => {
    for (const url of ones()) {
      const etag = await tagOf(url);
      for (const value of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
        const r = await get(url, { 'if-none-match': value });
        expect([r.status, r.body, r.headers.etag], `${url} ${value}`).toEqual([304, '', etag]);
      }
      const r = await get(url, { 'if-none-match': '"not-it"' });
      expect([r.status, r.headers.etag], url).toEqual([200, etag]);
      expect(r.json.data.id, url).toEqual(expect.any(String));
    }
    // HEAD too; If-Match on a read: 412 unless it names the tag.
    const url = `/email-addresses/${o.email}`;
    const etag = await tagOf(url);
    const head = await t.app.inject({ method: 'HEAD', url, headers: { authorization: `token ${x.end1.token}`, 'if-none-match': etag } });
    expect([head.statusCode, head.headers.etag]).toEqual([304, etag]);
    expect((await get(url, { 'if-match': etag })).status).toBe(200);
    const stale = await get(url, { 'if-match': '"stale"' });
    expect([stale.status, stale.json]).toEqual([412, preconditionFailed(url)]);
  });

  it('every PATCH answers with the ETag that a following GET answers', async () => {
    for (const p of patches()) {
      const r = await call(t.app, 'PATCH', p.url, { token: p.token, body: p.body('etag-1') });
      expect(r.status, `${p.url}: ${r.body}`).toBe(p.status);
      expect(r.headers.etag, p.url).toMatch(TAG);
      const g = await get(p.url, {}, p.token);
      expect(g.headers.etag, p.url).toBe(r.headers.etag);
      // A 202's data carries the job's link besides: the tag is the object's, as GET shows it.
      const { 'queue-job': job, ...objectLinks } = r.json.data.links;
      expect({ ...r.json.data, links: objectLinks }, p.url).toEqual(g.json.data);
      expect(job !== undefined, p.url).toBe(p.status === 202);
    }
  });

  it('PATCH with an If-Match the object no longer has: 412 and nothing changed; with its current ETag, or *, it goes through', async () => {
    for (const p of patches()) {
      const before = await call(t.app, 'PATCH', p.url, { token: p.token, body: p.body('v0') });
      const old = String(before.headers.etag);
      await call(t.app, 'PATCH', p.url, { token: p.token, body: p.body('v1') });
      const current = await get(p.url, {}, p.token);
      expect(current.headers.etag, p.url).not.toBe(old);
      const jobs = await countOf(t, 'queue_jobs');

      const refused = await call(t.app, 'PATCH', p.url, { token: p.token, body: p.body('v2'), headers: { 'if-match': old } });
      expect([refused.status, refused.json], p.url).toEqual([412, preconditionFailed(p.url)]);
      const after = await get(p.url, {}, p.token);
      expect([after.headers.etag, after.body], p.url).toEqual([current.headers.etag, current.body]);
      expect(await countOf(t, 'queue_jobs'), p.url).toBe(jobs);

      const ok = await call(t.app, 'PATCH', p.url, { token: p.token, body: p.body('v3'), headers: { 'if-match': `"other", ${String(current.headers.etag)}` } });
      expect(ok.status, `${p.url}: ${ok.body}`).toBe(p.status);
      expect(ok.headers.etag, p.url).not.toBe(current.headers.etag);
      expect((await call(t.app, 'PATCH', p.url, { token: p.token, body: p.body('v4'), headers: { 'if-match': '*' } })).status, p.url).toBe(p.status);
      // A weak tag never matches If-Match (strong comparison); If-None-Match: * refuses a write on an object that exists.
      const tag = await tagOf(p.url, p.token);
      const refusals: Record<string, string>[] = [{ 'if-match': `W/${tag}` }, { 'if-none-match': '*' }, { 'if-none-match': tag }];
      for (const headers of refusals) {
        const r = await call(t.app, 'PATCH', p.url, { token: p.token, body: p.body('v5'), headers });
        expect(r.status, `${p.url} ${JSON.stringify(headers)}`).toBe(412);
      }
      expect(await tagOf(p.url, p.token), p.url).toBe(tag);
    }
  });

  it('DELETE with an If-Match the object no longer has: 412, no job, the object stays; with its current ETag: 202', async () => {
    const mine = await createObjects(t, x.end2, 'del');
    const token = x.end2.token;
    const targets = [`/dns-records/${mine.dnsRecord}`, `/databases/${mine.database}`, `/subdomains/${mine.subdomain}`, `/email-addresses/${mine.email}`, `/ssh-keys/${mine.sshKey}`];
    for (const url of targets) {
      const etag = await tagOf(url, token);
      const jobs = await countOf(t, 'queue_jobs');
      const refused = await call(t.app, 'DELETE', url, { token, headers: { 'if-match': '"stale"' } });
      expect([refused.status, refused.json], url).toEqual([412, preconditionFailed(url)]);
      expect(await countOf(t, 'queue_jobs'), url).toBe(jobs);
      expect(await tagOf(url, token), url).toBe(etag);
      const r = await call(t.app, 'DELETE', url, { token, headers: { 'if-match': etag } });
      expect(r.status, `${url}: ${r.body}`).toBe(202);
      expect(r.json.data.type, url).toBe('queue-job');
      // The answer is the job, not the object: it carries no ETag.
      expect(r.headers.etag, url).toBeUndefined();
    }
  });

  it('two clients PATCHing with the same ETag: exactly one write goes through, the other gets 412 (no lost update)', async () => {
    // An address is locked by its service anyway; a database only for a conditional write.
    for (const [type, id, url] of [['email-address', o.email, `/email-addresses/${o.email}`], ['database', o.database, `/databases/${o.database}`]]) {
      for (let round = 0; round < 3; round++) {
        const etag = await tagOf(url);
        const send = (v: string) => call(t.app, 'PATCH', url, { token: x.end1.token, body: updateDoc(type, id, { description: v }), headers: { 'if-match': etag } });
        const answers = await Promise.all([send(`a${round}`), send(`b${round}`)]);
        expect(answers.map((a) => a.status).sort(), url).toEqual([200, 412]);
        const winner = answers.find((a) => a.status === 200)!;
        const now = await get(url);
        expect([now.json.data.attributes.description, now.headers.etag], url).toEqual([winner.json.data.attributes.description, winner.headers.etag]);
      }
    }
  });

  it('what fails without a condition fails first: 404 for an object you may not see, 422 for a bad body, 409 for a mismatched id', async () => {
    const headers = { 'if-match': '"stale"' };
    const foreign = `/email-addresses/${o.email}`;
    expect((await call(t.app, 'PATCH', foreign, { token: x.end2.token, body: updateDoc('email-address', o.email, { description: 'x' }), headers })).status).toBe(404);
    expect((await call(t.app, 'DELETE', `/databases/${o.database}`, { token: x.solo.token, headers })).status).toBe(404);
    expect((await call(t.app, 'PATCH', foreign, { token: x.end1.token, body: updateDoc('email-address', o.email, { description: 7 }), headers })).status).toBe(422);
    expect((await call(t.app, 'PATCH', foreign, { token: x.end1.token, body: updateDoc('email-address', `${o.email}0`, { description: 'x' }), headers })).status).toBe(409);
  });

  it('a malformed If-Match or If-None-Match answers 400 invalid_header naming the header', async () => {
    const url = `/databases/${o.database}`;
    for (const [name, header, value] of [
      ['if-match', 'If-Match', 'abc'],
      ['if-match', 'If-Match', '"a" "b"'],
      ['if-none-match', 'If-None-Match', 'W/abc'],
      ['if-none-match', 'If-None-Match', '*, "a"'],
    ]) {
      const detail = `${header} must be * or a list of entity tags such as "xyz" or W/"xyz".`;
      const r = await get(url, { [name]: value });
      expect([r.status, r.json], value).toEqual([400, errorBody('invalid_header', 400, 'Invalid request header', detail, `${BASE}${url}`, { header })]);
      const w = await call(t.app, 'PATCH', url, { token: x.end1.token, body: updateDoc('database', o.database, { description: 'x' }), headers: { [name]: value } });
      expect([w.status, w.json.errors[0].source], value).toEqual([400, { header }]);
    }
  });

  it('writes whose target has no ETag (POST, sub-resources): If-Match naming a tag or If-None-Match * answer 412 and create nothing; If-Match * as without', async () => {
    const records = await countOf(t, 'dns_records');
    const never: Record<string, string>[] = [{ 'if-match': '"x"' }, { 'if-none-match': '*' }];
    for (const headers of never) {
      const r = await call(t.app, 'POST', '/dns-records', { token: x.end1.token, body: txtRecord(x.end1.domain, '_cond'), headers });
      expect([r.status, r.json], JSON.stringify(headers)).toEqual([412, preconditionFailed('/dns-records')]);
    }
    expect(await countOf(t, 'dns_records')).toBe(records);
    const ok = await call(t.app, 'POST', '/dns-records', { token: x.end1.token, body: txtRecord(x.end1.domain, '_cond'), headers: { 'if-match': '*', 'if-none-match': '"x"' } });
    expect(ok.status, ok.body).toBe(202);
    const target = `/email-addresses/${o.email}/forward-to/a%40example.net`;
    expect((await call(t.app, 'POST', target, { token: x.end1.token, headers: { 'if-match': '"x"' } })).status).toBe(412);
  });
});
