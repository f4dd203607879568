// GET /audit-events and GET /audit-events/{id} (API guide "Audit events"): tenancy (a customer sees
// its own events, a reseller its end customers' too, nobody an event without a customer), every
// filter with its refusals, paging (paged even without page[…]), newest first; and the hourly purge
// of expired events by the worker.
import { describe, expect, it } from 'vitest';
import { BASE, ENGINES, call, createTestApp, freshStore } from '../../helpers/app.js';
import { useSeededApp } from '../../helpers/suite.js';
import { errorBody, notFoundAt } from '../../helpers/errors.js';
import { waitFor } from '../../helpers/wait.js';
import { auditEventObject, auditRows, auditRowsAfter, lastAuditId, storeEvent, tokenIdOf } from '../../helpers/audit-events.js';

const txt = (domain: string, name: string) => ({ data: { type: 'dns-record', attributes: { record_type: 'TXT', name, domain, data: `v-${name}` } } });
const ids = (r: { json: { data: { id: string }[] } }) => r.json.data.map((e) => Number(e.id));

describe.each(ENGINES)('GET /audit-events on %s', { timeout: 60_000 }, (engine) => {
  const { t, x } = useSeededApp(engine);

  it("tenancy: a customer sees its own events, newest first; a reseller its end customers' too; an event without a customer nobody", async () => {
    const before = await lastAuditId(t);
    for (const [tenant, name] of [[x.end1, 'e1a'], [x.end2, 'e2'], [x.end1, 'e1b'], [x.reseller, 'r'], [x.solo, 's']] as const) {
      expect((await call(t.app, 'POST', '/dns-records', { token: tenant.token, body: txt(tenant.domain, name) })).status).toBe(202);
    }
    expect((await call(t.app, 'GET', '/domains', { token: 'hp_wrong' })).status).toBe(401);
    const events = await auditRowsAfter(t, before);
    const of = (customerId: string) => events.filter((e) => e.customer_id === Number(customerId)).map((e) => e.id).reverse();

    const mine = await call(t.app, 'GET', '/audit-events', { token: x.end1.token });
    expect(mine.status).toBe(200);
    expect(ids(mine)).toEqual(of(x.end1.customerId));
    expect(mine.json.data).toEqual(events.filter((e) => e.customer_id === Number(x.end1.customerId)).reverse().map(auditEventObject));
    const reseller = await call(t.app, 'GET', '/audit-events', { token: x.reseller.token });
    expect(ids(reseller)).toEqual(events.filter((e) => [x.reseller, x.end1, x.end2].some((c) => e.customer_id === Number(c.customerId))).map((e) => e.id).reverse());
    expect(ids(await call(t.app, 'GET', '/audit-events', { token: x.solo.token }))).toEqual(of(x.solo.customerId));

    const e1 = of(x.end1.customerId)[0];
    for (const token of [x.end2.token, x.solo.token]) {
      expect((await call(t.app, 'GET', `/audit-events/${e1}`, { token })).json).toEqual(notFoundAt(`${BASE}/audit-events/${e1}`, 'audit-event'));
    }
    expect((await call(t.app, 'GET', `/audit-events/${e1}`, { token: x.reseller.token })).json.data.id).toBe(String(e1));
    const refused = events.find((e) => e.status === 401)!;
    expect(refused.customer_id).toBeNull();
    for (const tenant of [x.reseller, x.end1, x.end2, x.solo]) expect((await call(t.app, 'GET', `/audit-events/${refused.id}`, { token: tenant.token })).status).toBe(404);
    for (const id of ['abc', '0', '99999999999']) expect((await call(t.app, 'GET', `/audit-events/${id}`, { token: x.end1.token })).json).toEqual(notFoundAt(`${BASE}/audit-events/${id}`, 'audit-event'));
  });

  it('filters: customer_id, token_id, method, path (the path or below it), status (exact or class), since (inclusive), until (exclusive); AND across, OR within', async () => {
    const { customerId, contactId } = await t.admin.customers.createCustomer({ organization: 'Audit AG', contact: { name: 'a', email: 'a@audit.example', phone: '+49 30 1234567' } });
    const { token } = await t.admin.customers.issueToken(contactId, 'reader');
    const a = await tokenIdOf(t.store, contactId);
    const b = a + 1000;
    const rows: [string, string, number, number | null][] = [
      ['POST', '/dns-records', 202, a],
      ['DELETE', '/dns-records/1', 202, a],
      ['DELETE', '/dns-records/12', 404, b],
      ['POST', '/dns-records?x=1', 422, b],
      ['PATCH', '/dns-recordsX', 500, null],
      ['PUT', '/Dns-records/1', 409, null],
    ];
    const before = await lastAuditId(t);
    for (const [i, [method, path, status, tokenId]] of rows.entries()) {
      await storeEvent(t.store, { customer_id: customerId, token_id: tokenId, method, path, status, created_at: `2026-01-0${i + 1}T00:00:00.000Z` });
    }
    const stored = (await auditRowsAfter(t, before)).map((r) => r.id);
    // Row n (1-based, in the order above), newest first as the list answers.
    const pick = (...n: number[]) => n.sort((p, q) => q - p).map((i) => stored[i - 1]);
    const get = (query: string) => call(t.app, 'GET', `/audit-events?${query}`, { token });
    const cases: [string, number[]][] = [
      ['', [1, 2, 3, 4, 5, 6]],
      [`filter[customer_id]=${customerId}`, [1, 2, 3, 4, 5, 6]],
      [`filter[customer_id]=${x.end1.customerId}`, []],
      [`filter[token_id]=${a}`, [1, 2]],
      [`filter[token_id]=${a},${b}`, [1, 2, 3, 4]],
      [`filter[token_id]=${a}&filter[token_id]=${b}`, [1, 2, 3, 4]],
      ['filter[token_id]=abc', []],
      ['filter[method]=delete', [2, 3]],
      ['filter[method]=POST,patch', [1, 4, 5]],
      ['filter[path]=/dns-records', [1, 2, 3, 4]],
      ['filter[path]=/dns-records/', [1, 2, 3, 4]],
      ['filter[path]=/dns-records/1', [2]],
      ['filter[path]=/dns-records/1,/dns-recordsX', [2, 5]],
      ['filter[path]=/', [1, 2, 3, 4, 5, 6]],
      ['filter[status]=202', [1, 2]],
      ['filter[status]=4xx', [3, 4, 6]],
      ['filter[status]=4XX,500', [3, 4, 5, 6]],
      ['filter[since]=2026-01-03', [3, 4, 5, 6]],
      ['filter[until]=2026-01-03', [1, 2]],
      ['filter[since]=2026-01-02T00:00:00Z&filter[until]=2026-01-04T01:00:00%2B01:00', [2, 3]],
      ['filter[since]=2026-01-02T00:00:00.001Z', [3, 4, 5, 6]],
      ['filter[method]=DELETE&filter[status]=404', [3]],
      ['filter[since]=2026-01-05&filter[until]=2026-01-01', []],
    ];
    for (const [query, expected] of cases) {
      const r = await get(query);
      expect({ query, status: r.status, ids: ids(r), total: r.json.meta.total }).toEqual({ query, status: 200, ids: pick(...expected), total: expected.length });
    }
    const refusals: [string, string, string][] = [
      ['filter[method]=FETCH', 'filter[method]', 'must be one of GET, HEAD, OPTIONS, POST, PUT, PATCH, DELETE.'],
      ['filter[path]=dns-records', 'filter[path]', 'must start with /, e.g. /dns-records.'],
      ['filter[status]=600', 'filter[status]', 'must be an HTTP status (100–599) or a class such as 4xx.'],
      ['filter[status]=2x', 'filter[status]', 'must be an HTTP status (100–599) or a class such as 4xx.'],
      ['filter[since]=2026-02-30', 'filter[since]', 'must be an ISO 8601 time such as 2026-11-22T03:51:28Z (or with an offset, +01:00) or a date such as 2026-11-22 (00:00 UTC).'],
      ['filter[until]=yesterday', 'filter[until]', 'must be an ISO 8601 time such as 2026-11-22T03:51:28Z (or with an offset, +01:00) or a date such as 2026-11-22 (00:00 UTC).'],
      ['filter[since]=2026-01-01,2026-01-02', 'filter[since]', 'must be given once.'],
    ];
    for (const [query, parameter, detail] of refusals) {
      expect((await get(query)).json, query).toEqual(errorBody('invalid_parameter', 400, 'Invalid query parameter', `${parameter} ${detail}`, `${BASE}/audit-events?${query}`, { parameter }));
    }
    expect((await get('filter[actor]=1')).status).toBe(400);
  });

  it('paging: page[size] up to 1000 with meta.total and links; without page[…] the first 100', async () => {
    const { customerId, contactId } = await t.admin.customers.createCustomer({ organization: 'Pages AG', contact: { name: 'p', email: 'p@pages.example', phone: '+49 30 1234567' } });
    const { token } = await t.admin.customers.issueToken(contactId, 'reader');
    const before = await lastAuditId(t);
    for (let i = 0; i < 105; i++) await storeEvent(t.store, { customer_id: customerId, path: `/dns-records/${i}` });
    const stored = (await auditRowsAfter(t, before)).map((r) => r.id).reverse();
    const all = await call(t.app, 'GET', '/audit-events', { token });
    expect(ids(all)).toEqual(stored.slice(0, 100));
    expect(all.json.links).toEqual({
      self: `${BASE}/audit-events`,
      first: `${BASE}/audit-events?page[number]=1&page[size]=100`,
      last: `${BASE}/audit-events?page[number]=2&page[size]=100`,
      prev: null,
      next: `${BASE}/audit-events?page[number]=2&page[size]=100`,
    });
    expect(all.json.meta).toEqual({ total: 105, page: { number: 1, size: 100, total_pages: 2 } });
    const second = await call(t.app, 'GET', '/audit-events?page[number]=2&page[size]=100', { token });
    expect(ids(second)).toEqual(stored.slice(100));
    const small = await call(t.app, 'GET', '/audit-events?page[number]=3&page[size]=2&filter[path]=/dns-records', { token });
    expect(ids(small)).toEqual(stored.slice(4, 6));
    expect(small.json.meta).toEqual({ total: 105, page: { number: 3, size: 2, total_pages: 53 } });
    expect(ids(await call(t.app, 'GET', '/audit-events?page[size]=1000', { token }))).toEqual(stored);
    expect((await call(t.app, 'GET', '/audit-events?page[size]=1001', { token })).json.errors[0]).toMatchObject({ id: 'invalid_parameter', source: { parameter: 'page[size]' } });
  });
});

describe.each(ENGINES)('the purge of expired audit events on %s', { timeout: 60_000 }, (engine) => {
  it('a worker deletes every event whose expiry has passed (hourly job audit-event purge, seen by no customer); the others stay', async () => {
    const ts = await freshStore(engine);
    try {
      const past = new Date(Date.now() - 1000).toISOString();
      const future = new Date(Date.now() + 60_000).toISOString();
      await storeEvent(ts.store, { customer_id: 1, path: '/old', expires_at: '2026-01-01T00:00:00.000Z' });
      await storeEvent(ts.store, { customer_id: 1, path: '/just-expired', expires_at: past });
      await storeEvent(ts.store, { customer_id: 1, path: '/kept', expires_at: future });
      await storeEvent(ts.store, { path: '/kept-too' });
      const app = await createTestApp(engine, { JOB_POLL_MS: '50' }, { store: ts, worker: true });
      try {
        await waitFor('the purge', async () => (await auditRows(ts)).length === 2);
        expect((await auditRows(ts)).map((e) => e.path)).toEqual(['/kept', '/kept-too']);
        const job = await ts.store.db.selectFrom('queue_jobs').selectAll().where('job_type', '=', 'audit-event').executeTakeFirstOrThrow();
        expect(job).toMatchObject({ action: 'purge', customer_id: null, object_id: null });
        await waitFor('the purge job done', async () => (await ts.store.db.selectFrom('queue_jobs').select('status').where('id', '=', job.id).executeTakeFirstOrThrow()).status === 'done');
      } finally {
        await app.close();
      }
    } finally {
      await ts.drop();
    }
  });
});
