// /webhooks through HTTP (API guide "Webhooks"): 201 with the secret shown once and kept sealed,
// 200 on PATCH, 204 on DELETE, refusals (422 with a pointer) that store nothing, the limit, and
// tenancy: a customer's webhooks are its own, a reseller's may be its end customers'.
import { describe, expect, it } from 'vitest';
import { BASE, ENGINES, call } from '../../helpers/app.js';
import { useSeededApp } from '../../helpers/suite.js';
import { errorBody, invalidAttribute, notFoundAt } from '../../helpers/errors.js';
import { createWebhook } from '../../helpers/webhooks.js';
import { WebhooksRepository } from '../../../src/resources/webhooks/webhooks.repository.js';
import { secretBox } from '../../../src/security/secret-box.js';
import { MAX_WEBHOOKS_PER_CUSTOMER } from '../../../src/resources/webhooks/webhooks.service.js';

const SETTING_KEY = Buffer.alloc(32, 7).toString('base64');

describe.each(ENGINES)('webhooks on %s', { timeout: 60_000 }, (engine) => {
  const { t, x } = useSeededApp(engine, { WEBHOOK_SECRET_KEY: SETTING_KEY });
  const stored = () => t.store.db.selectFrom('webhooks').selectAll().orderBy('id').execute();
  const webhook = (id: string, customerId: string, attributes: Record<string, unknown>) => ({
    type: 'webhook',
    id,
    attributes: { customer_id: customerId, status: 'ok', failing_reason: null, created_at: expect.any(String), ...attributes },
    relationships: { customer: { data: { type: 'customer', id: customerId } }, deliveries: { links: { related: `${BASE}/webhooks/${id}/deliveries` } } },
    links: { self: `${BASE}/webhooks/${id}` },
  });

  it('POST → 201 with the webhook and its whsec_ secret, shown this once; GET and the list never show it; the store keeps it sealed', async () => {
    const r = await createWebhook(t, x.end1.token, { url: 'https://hooks.example.net/a?x=1', events: ['queue-job.done', 'dns-record.created'], description: 'bot' });
    expect(r.status, r.body).toBe(201);
    const id = r.json.data.id;
    const secret = r.json.data.attributes.secret;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    const shown = { url: 'https://hooks.example.net/a?x=1', events: ['queue-job.done', 'dns-record.created'], description: 'bot', active: true };
    expect(r.json).toEqual({ data: webhook(id, x.end1.customerId, { ...shown, secret }), links: { self: `${BASE}/webhooks` } });
    expect(Object.keys(r.json.data.attributes)).toEqual(['customer_id', 'url', 'events', 'description', 'active', 'status', 'failing_reason', 'created_at', 'secret']);

    const one = await call(t.app, 'GET', `/webhooks/${id}`, { token: x.end1.token });
    expect(one.json).toEqual({ data: webhook(id, x.end1.customerId, shown), links: { self: `${BASE}/webhooks/${id}` } });
    const list = await call(t.app, 'GET', '/webhooks', { token: x.end1.token });
    expect(list.json).toEqual({ links: { self: `${BASE}/webhooks` }, data: [webhook(id, x.end1.customerId, shown)], meta: { total: 1 } });
    for (const body of [one.body, list.body]) expect(body).not.toContain(secret.slice(6, 20));

    // Sealed under the setting's key (its id first), opened only with a key: never the secret itself.
    const row = (await stored()).find((w) => String(w.id) === id)!;
    expect(row.secret).not.toContain(secret.slice(6, 20));
    expect(row.secret).toMatch(/^k[0-9a-f]{12}\./);
    const repo = new WebhooksRepository(t.store.db);
    expect(secretBox([SETTING_KEY], await repo.storeKey()).open(row.secret)).toBe(secret);
    // A server whose setting no longer names that key cannot open it (and says why).
    expect(() => secretBox([], 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=').open(row.secret)).toThrow(/sealed with key k[0-9a-f]{12}, which this server does not have/);
    await call(t.app, 'DELETE', `/webhooks/${id}`, { token: x.end1.token });
  });

  it('PATCH → 200 with the webhook as changed; DELETE → 204 with no body, then 404 for it everywhere', async () => {
    const token = x.end2.token;
    const id = (await createWebhook(t, token, { url: 'https://a.example.net/', events: ['*'], active: false })).json.data.id;
    const p = await call(t.app, 'PATCH', `/webhooks/${id}`, {
      token,
      body: { data: { type: 'webhook', id, attributes: { url: 'https://b.example.net/h', events: ['queue-job.failed'], description: null, active: true } } },
    });
    expect(p.status, p.body).toBe(200);
    const changed = { url: 'https://b.example.net/h', events: ['queue-job.failed'], description: '', active: true };
    expect(p.json).toEqual({ data: webhook(id, x.end2.customerId, changed), links: { self: `${BASE}/webhooks/${id}` } });
    // Only what is given changes.
    const q = await call(t.app, 'PATCH', `/webhooks/${id}`, { token, body: { data: { type: 'webhook', id, attributes: { description: 'ci' } } } });
    expect(q.json.data.attributes).toMatchObject({ ...changed, description: 'ci' });
    // What no client may set: the body's shape refuses it.
    for (const attributes of [{ secret: 'whsec_x' }, { status: 'ok' }, { customer_id: x.end1.customerId }]) {
      const bad = await call(t.app, 'PATCH', `/webhooks/${id}`, { token, body: { data: { type: 'webhook', id, attributes } } });
      expect(bad.status, JSON.stringify(attributes)).toBe(422);
    }
    const mismatch = await call(t.app, 'PATCH', `/webhooks/${id}`, { token, body: { data: { type: 'webhook', id: '999', attributes: {} } } });
    expect(mismatch.json.errors[0]).toMatchObject({ id: 'id_mismatch', source: { pointer: '/data/id' } });

    const d = await call(t.app, 'DELETE', `/webhooks/${id}`, { token });
    expect([d.status, d.body]).toEqual([204, '']);
    for (const [method, url] of [['GET', `/webhooks/${id}`], ['DELETE', `/webhooks/${id}`], ['GET', `/webhooks/${id}/deliveries`]] as const) {
      expect((await call(t.app, method, url, { token })).json, `${method} ${url}`).toEqual(notFoundAt(`${BASE}${url}`, 'webhook'));
    }
  });

  it('If-Match (API guide "Safe retries"): a stale tag → 412 and nothing changed, the current one → the PATCH or DELETE goes through', async () => {
    const token = x.end2.token;
    const id = (await createWebhook(t, token, { url: 'https://c.example.net/', events: ['*'] })).json.data.id;
    const before = await call(t.app, 'GET', `/webhooks/${id}`, { token });
    const tag = String(before.headers.etag);
    expect(tag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    const patch = (ifMatch: string, description: string) =>
      call(t.app, 'PATCH', `/webhooks/${id}`, { token, headers: { 'if-match': ifMatch }, body: { data: { type: 'webhook', id, attributes: { description } } } });
    const first = await patch(tag, 'one');
    expect(first.status, first.body).toBe(200);
    expect(first.headers.etag).not.toBe(tag);
    const stale = await patch(tag, 'two');
    expect(stale.status).toBe(412);
    expect(stale.json.errors[0].id).toBe('precondition_failed');
    expect((await call(t.app, 'GET', `/webhooks/${id}`, { token })).json.data.attributes.description).toBe('one');
    expect((await call(t.app, 'DELETE', `/webhooks/${id}`, { token, headers: { 'if-match': tag } })).status).toBe(412);
    expect((await call(t.app, 'GET', `/webhooks/${id}`, { token })).status).toBe(200);
    const gone = await call(t.app, 'DELETE', `/webhooks/${id}`, { token, headers: { 'if-match': String(first.headers.etag) } });
    expect(gone.status).toBe(204);
    expect((await call(t.app, 'GET', `/webhooks/${id}`, { token })).status).toBe(404);
  });

  it('a bad url or events → 422 pointing at it (an entry of events by its index), nothing stored', async () => {
    const before = await stored();
    const ok = { url: 'https://hooks.example.net/', events: ['*'] };
    const special = 'webhooks are never sent to loopback, private, link-local, multicast, unspecified or other special addresses, nor to the service\'s own.';
    const cases: [Record<string, unknown>, string, string][] = [
      [{ url: 'http://hooks.example.net/' }, 'url', 'url must be an https:// URL: plain http:// is only for addresses the operator allows.'],
      [{ url: 'ftp://hooks.example.net/' }, 'url', 'url must be an https:// URL.'],
      [{ url: 'hooks.example.net/x' }, 'url', 'url is not an absolute URL.'],
      [{ url: '' }, 'url', 'url must be an absolute https:// URL.'],
      [{ url: 'https://user:pw@hooks.example.net/' }, 'url', 'url must not carry a user name or password; the signature authenticates each delivery.'],
      [{ url: 'https://hooks.example.net/#x' }, 'url', 'url must not have a fragment (#…).'],
      [{ url: 'https://hooks.example.net/a b' }, 'url', 'url must not contain spaces or control characters.'],
      [{ url: 'https://10.1.2.3/' }, 'url', `10.1.2.3 is a private address: ${special}`],
      [{ url: 'https://169.254.169.254/latest/meta-data' }, 'url', `169.254.169.254 is a link-local address: ${special}`],
      [{ url: 'https://127.0.0.1:8080/' }, 'url', `127.0.0.1 is a loopback address: ${special}`],
      // The URL parser's other spellings of 127.0.0.1 are the same address.
      [{ url: 'https://2130706433/' }, 'url', `127.0.0.1 is a loopback address: ${special}`],
      [{ url: 'https://[::1]/' }, 'url', `::1 is a loopback address: ${special}`],
      [{ url: 'https://[::ffff:127.0.0.1]/' }, 'url', `::ffff:7f00:1 is a loopback address (IPv4-mapped, carrying 127.0.0.1): ${special}`],
      [{ url: 'https://[fe80::1]/' }, 'url', `fe80::1 is a link-local address: ${special}`],
      [{ url: 'https://[fd00::5]/' }, 'url', `fd00::5 is a private (unique local) address: ${special}`],
      [{ url: 'https://0.0.0.0/' }, 'url', `0.0.0.0 is a unspecified address: ${special}`],
      [{ url: 'https://[::]/' }, 'url', `:: is a unspecified address: ${special}`],
      [{ url: 'https://224.0.0.1/' }, 'url', `224.0.0.1 is a multicast address: ${special}`],
      [{ url: `https://hooks.example.net/${'a'.repeat(2000)}` }, 'url', 'url is longer than 2000 characters.'],
      [{ events: [] }, 'events', 'events must list at least one event, e.g. ["queue-job.done"], or ["*"] for all.'],
      [{ events: ['queue-job.done', 'dns-record.updated'] }, 'events/1', expect.stringMatching(/^"dns-record\.updated" is not an event\. Known: \*, queue-job\.done, queue-job\.failed, dns-record\.created, dns-record\.deleted, database\.created, /) as unknown as string],
      [{ events: ['*', 'queue-job.done', '*'] }, 'events/2', '* is listed twice.'],
    ];
    for (const [change, field, detail] of cases) {
      const r = await createWebhook(t, x.end1.token, { ...ok, ...change });
      expect(r.json, JSON.stringify(change)).toEqual(invalidAttribute('/webhooks', field, detail));
    }
    // The body's shape: events not a list, no url, an attribute we do not take, a too long description.
    for (const [attributes, pointer] of [
      [{ ...ok, events: 'queue-job.done' }, '/data/attributes/events'],
      [{ events: ['*'] }, '/data/attributes'],
      [{ ...ok, secret: 'whsec_mine' }, '/data/attributes'],
      [{ ...ok, description: 'd'.repeat(256) }, '/data/attributes/description'],
    ] as const) {
      const r = await createWebhook(t, x.end1.token, attributes);
      expect(r.status, JSON.stringify(attributes)).toBe(422);
      expect(r.json.errors[0], JSON.stringify(attributes)).toMatchObject({ id: 'invalid_api_data', source: { pointer: expect.stringContaining(pointer) } });
    }
    // The same checks on PATCH.
    const id = (await createWebhook(t, x.end1.token, ok)).json.data.id;
    const p = await call(t.app, 'PATCH', `/webhooks/${id}`, { token: x.end1.token, body: { data: { type: 'webhook', id, attributes: { url: 'https://[::1]/' } } } });
    expect(p.json).toEqual(invalidAttribute(`/webhooks/${id}`, 'url', `::1 is a loopback address: ${special}`));
    await call(t.app, 'DELETE', `/webhooks/${id}`, { token: x.end1.token });
    expect(await stored()).toEqual(before);
  });

  it("tenancy: another customer's webhook is 404; a reseller's webhook may belong to an end customer, who then sees it; nobody names a customer out of scope", async () => {
    const mine = await createWebhook(t, x.end1.token, { url: 'https://end1.example.net/', events: ['*'] });
    const id = mine.json.data.id;
    for (const token of [x.end2.token, x.solo.token]) {
      for (const [method, url] of [['GET', `/webhooks/${id}`], ['DELETE', `/webhooks/${id}`], ['GET', `/webhooks/${id}/deliveries`]] as const) {
        expect((await call(t.app, method, url, { token })).json, `${method} ${url}`).toEqual(notFoundAt(`${BASE}${url}`, 'webhook'));
      }
      const patch = await call(t.app, 'PATCH', `/webhooks/${id}`, { token, body: { data: { type: 'webhook', id, attributes: { active: false } } } });
      expect(patch.json).toEqual(notFoundAt(`${BASE}/webhooks/${id}`, 'webhook'));
      expect((await call(t.app, 'GET', '/webhooks', { token })).json.data.map((w: { id: string }) => w.id)).not.toContain(id);
    }
    // The reseller sees its end customer's webhook and makes one for end2.
    expect((await call(t.app, 'GET', `/webhooks/${id}`, { token: x.reseller.token })).status).toBe(200);
    const forEnd2 = await createWebhook(t, x.reseller.token, { customer_id: x.end2.customerId, url: 'https://end2.example.net/', events: ['*'] });
    expect(forEnd2.status, forEnd2.body).toBe(201);
    expect(forEnd2.json.data.attributes.customer_id).toBe(x.end2.customerId);
    expect((await call(t.app, 'GET', `/webhooks/${forEnd2.json.data.id}`, { token: x.end2.token })).status).toBe(200);
    const own = await createWebhook(t, x.reseller.token, { url: 'https://reseller.example.net/', events: ['*'] });
    const byCustomer = await call(t.app, 'GET', `/webhooks?filter[customer_id]=${x.end2.customerId},${x.reseller.customerId}`, { token: x.reseller.token });
    expect(byCustomer.json.data.map((w: { id: string }) => w.id)).toEqual([forEnd2.json.data.id, own.json.data.id]);
    const paged = await call(t.app, 'GET', '/webhooks?page[number]=2&page[size]=1', { token: x.reseller.token });
    expect(paged.json.meta).toEqual({ total: 3, page: { number: 2, size: 1, total_pages: 3 } });
    expect((await call(t.app, 'GET', '/webhooks?filter[status]=failing', { token: x.reseller.token })).json.data).toEqual([]);
    expect((await call(t.app, 'GET', '/webhooks?filter[nope]=1', { token: x.reseller.token })).status).toBe(400);
    // A customer out of scope, or no customer at all, is 404: a customer for its reseller, the solo customer for end1.
    for (const [token, customerId] of [[x.end1.token, x.reseller.customerId], [x.solo.token, x.end1.customerId], [x.reseller.token, x.solo.customerId], [x.end1.token, 'abc']]) {
      const r = await createWebhook(t, token, { customer_id: customerId, url: 'https://x.example.net/', events: ['*'] });
      expect(r.json, customerId).toEqual(errorBody('resource_not_found', 404, 'Resource not found', 'No such customer.', `${BASE}/webhooks`));
    }
    for (const w of [id, forEnd2.json.data.id, own.json.data.id]) await call(t.app, 'DELETE', `/webhooks/${w}`, { token: x.reseller.token });
  });

  it(`a customer has at most ${MAX_WEBHOOKS_PER_CUSTOMER} webhooks: one more → 409 limit_reached`, async () => {
    const ids: string[] = [];
    for (let i = 0; i < MAX_WEBHOOKS_PER_CUSTOMER; i++) ids.push((await createWebhook(t, x.solo.token, { url: `https://h${i}.example.net/`, events: ['*'] })).json.data.id);
    const over = await createWebhook(t, x.solo.token, { url: 'https://one-more.example.net/', events: ['*'] });
    expect(over.json).toEqual(errorBody('limit_reached', 409, 'Plan limit reached', `This customer has ${MAX_WEBHOOKS_PER_CUSTOMER} webhooks, the most it may have; delete one first.`, `${BASE}/webhooks`));
    for (const id of ids) await call(t.app, 'DELETE', `/webhooks/${id}`, { token: x.solo.token });
  });
});
