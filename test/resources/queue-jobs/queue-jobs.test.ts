// /queue-jobs (API guide "Queue jobs", "Compatibility with existing clients"): pending jobs of the
// scope in the list, one job until a done job is 24 h past completion; every value a string or
// null.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, ENGINES, call, createTestApp, type TestApp } from '../../helpers/app.js';
import { notFoundAt } from '../../helpers/errors.js';
import { seedTenants, type Tenants } from '../../helpers/tenants.js';
import { QueueRepository } from '../../../src/queue/queue.repository.js';
import type { NewQueueJob } from '../../../src/queue/jobs.js';
import { nowIso } from '../../../src/db/time.js';

const HOUR = 3600_000;
const CREATED = '2025-06-01T10:00:00.000Z';

describe.each(ENGINES)('queue-jobs on %s', (engine) => {
  let t: TestApp;
  let x: Tenants;
  const j: Record<string, string> = {};
  const finished: Record<string, string> = {};
  const get = (id: string, token = x.end1.token) => call(t.app, 'GET', `/queue-jobs/${id}`, { token });
  const listIds = async (token: string) => {
    const r = await call(t.app, 'GET', '/queue-jobs', { token });
    expect(r.status).toBe(200);
    expect(r.json.meta).toEqual({ total: r.json.data.length });
    return r.json.data.map((q: any) => q.id);
  };
  const notFoundBody = (id: string) => notFoundAt(`${BASE}/queue-jobs/${id}`, 'queue-job');

  beforeAll(async () => {
    t = await createTestApp(engine);
    x = await seedTenants(t.admin);
    const repo = new QueueRepository(t.store.db);
    const add = async (key: string, job: Omit<NewQueueJob, 'customerId'> & { owner: keyof Tenants }) => {
      const { owner, ...rest } = job;
      if (rest.finishedAt) finished[key] = rest.finishedAt;
      j[key] = String((await repo.insert({ createdAt: CREATED, ...rest, customerId: Number((x[owner] as { customerId: string }).customerId) })).id);
    };
    await add('pending', { owner: 'end1', jobType: 'dns-record', action: 'create', objectId: '101', payload: { name: '_acme-challenge' } });
    await add('done', { owner: 'end1', jobType: 'dns-record', action: 'delete', objectId: '102', status: 'done', finishedAt: nowIso(-1 * HOUR) });
    await add('doneAlmostDay', { owner: 'end1', jobType: 'database', action: 'create', objectId: '7', status: 'done', finishedAt: nowIso(-23.9 * HOUR) });
    await add('doneOld', { owner: 'end1', jobType: 'dns-record', action: 'create', objectId: '103', status: 'done', finishedAt: nowIso(-24.1 * HOUR) });
    await add('failed', { owner: 'end1', jobType: 'database', action: 'create', objectId: '8', status: 'failed', error: 'database server unreachable', finishedAt: nowIso(-48 * HOUR) });
    await add('menu', { owner: 'end1', jobType: 'subdomain', action: 'update', objectId: '5', fromMenu: true });
    await add('noObject', { owner: 'end1', jobType: 'email-address', action: 'delete', objectId: null });
    await add('end2', { owner: 'end2', jobType: 'subdomain', action: 'create', objectId: 's-1' });
    await add('reseller', { owner: 'reseller', jobType: 'email-address', action: 'update', objectId: 'ea 1/x' });
    await add('solo', { owner: 'solo', jobType: 'dns-record', action: 'create', objectId: '900' });
  });
  afterAll(() => t.close());

  /**
   * API guide "Compatibility with existing clients": one client decodes attributes and links into a
   * map of strings.
   */
  const expectStringsOrNull = (data: any) => {
    for (const v of [...Object.values(data.attributes), ...Object.values(data.links)]) expect(v === null || typeof v === 'string').toBe(true);
  };

  it('GET /queue-jobs/{id} of a pending job: the exact document (API guide "Queue jobs", "Compatibility with existing clients")', async () => {
    const r = await get(j.pending);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/json');
    const self = `${BASE}/queue-jobs/${j.pending}`;
    const object = `${BASE}/dns-records/101`;
    expect(r.body).toBe(
      `{"data":{"type":"queue-job","id":"${j.pending}","attributes":{"job_type":"dns-record","status":"pending","action":"create",` +
        `"created_at":"${CREATED}","finished_at":null,"error":null},"relationships":{"owner":{"data":{"type":"customer","id":"${x.end1.customerId}"}}},` +
        `"links":{"self":"${self}","queue-job":"${self}","object":"${object}","dns-record":"${object}"}},"links":{"self":"${self}"}}`,
    );
    expectStringsOrNull(r.json.data);
    // lego derives the record id by stripping `<base>/dns-records/` (API guide "Compatibility with
    // existing clients").
    expect(r.json.data.links['dns-record'].replace(`${BASE}/dns-records/`, '')).toBe('101');
  });

  it('a done job keeps answering with status done and finished_at until 24 h after completion (API guide "Compatibility with existing clients")', async () => {
    const r = await get(j.done);
    expect(r.status).toBe(200);
    const self = `${BASE}/queue-jobs/${j.done}`;
    expect(r.json.data).toEqual({
      type: 'queue-job',
      id: j.done,
      attributes: { job_type: 'dns-record', status: 'done', action: 'delete', created_at: CREATED, finished_at: finished.done, error: null },
      relationships: { owner: { data: { type: 'customer', id: x.end1.customerId } } },
      links: { self, 'queue-job': self, object: `${BASE}/dns-records/102`, 'dns-record': `${BASE}/dns-records/102` },
    });
    expectStringsOrNull(r.json.data);
    const late = await get(j.doneAlmostDay);
    expect(late.status).toBe(200);
    expect(late.json.data.attributes.status).toBe('done');
  });

  it('a done job more than 24 h after finished_at is gone (404) even before the purge (API guide "Queue jobs")', async () => {
    const r = await get(j.doneOld);
    expect(r.status).toBe(404);
    expect(r.json).toEqual(notFoundBody(j.doneOld));
    // The row is still there: only the purge (next issue's worker) deletes it.
    const row = await t.store.db.selectFrom('queue_jobs').select('status').where('id', '=', Number(j.doneOld)).executeTakeFirst();
    expect(row).toEqual({ status: 'done' });
  });

  it('a failed job shows status failed and its error as a string (API guide "Queue jobs")', async () => {
    const r = await get(j.failed);
    expect(r.status).toBe(200);
    const self = `${BASE}/queue-jobs/${j.failed}`;
    expect(r.json.data).toEqual({
      type: 'queue-job',
      id: j.failed,
      attributes: { job_type: 'database', status: 'failed', action: 'create', created_at: CREATED, finished_at: finished.failed, error: 'database server unreachable' },
      relationships: { owner: { data: { type: 'customer', id: x.end1.customerId } } },
      links: { self, 'queue-job': self, object: `${BASE}/databases/8`, database: `${BASE}/databases/8` },
    });
    expectStringsOrNull(r.json.data);
  });

  it('links name the object by the plural segment of job_type; null when there is no object', async () => {
    const sub = await get(j.end2, x.end2.token);
    expect(sub.json.data.links).toMatchObject({ object: `${BASE}/subdomains/s-1`, subdomain: `${BASE}/subdomains/s-1` });
    const ea = await get(j.reseller, x.reseller.token);
    // Object ids are percent-encoded in links.
    expect(ea.json.data.links).toMatchObject({ object: `${BASE}/email-addresses/ea%201%2Fx`, 'email-address': `${BASE}/email-addresses/ea%201%2Fx` });
    const none = await get(j.noObject);
    expect(none.json.data.links).toEqual({
      self: `${BASE}/queue-jobs/${j.noObject}`,
      'queue-job': `${BASE}/queue-jobs/${j.noObject}`,
      object: null,
      'email-address': null,
    });
    expectStringsOrNull(none.json.data);
  });

  it('jobs started from the customer menu never appear: not listed, 404 (API guide "Queue jobs")', async () => {
    expect(await listIds(x.end1.token)).not.toContain(j.menu);
    const r = await get(j.menu);
    expect(r.status).toBe(404);
    expect(r.json).toEqual(notFoundBody(j.menu));
    expect((await get(j.menu, x.reseller.token)).status).toBe(404);
  });

  it('GET /queue-jobs lists the pending jobs of the scope only, ordered by id, links first (API guide "Queue jobs")', async () => {
    const r = await call(t.app, 'GET', '/queue-jobs', { token: x.end1.token });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      links: { self: `${BASE}/queue-jobs` },
      data: [(await get(j.pending)).json.data, (await get(j.noObject)).json.data],
      meta: { total: 2 },
    });
    expect(await listIds(x.end2.token)).toEqual([j.end2]);
    expect(await listIds(x.reseller.token)).toEqual([j.pending, j.noObject, j.end2, j.reseller]);
    expect(await listIds(x.solo.token)).toEqual([j.solo]);
  });

  it('a reseller reads its end customers\' jobs; nobody reads a foreign one', async () => {
    expect((await get(j.done, x.reseller.token)).json.data.relationships.owner).toEqual({ data: { type: 'customer', id: x.end1.customerId } });
    for (const [id, token] of [[j.solo, x.end1.token], [j.pending, x.solo.token], [j.end2, x.end1.token], [j.reseller, x.end1.token], [j.solo, x.reseller.token]]) {
      const r = await get(id, token);
      expect(r.status).toBe(404);
      expect(r.json).toEqual(notFoundBody(id));
    }
  });

  it('no filters on the list (API guide "Queue jobs"); paging works (API guide "Filters and paging")', async () => {
    const f = await call(t.app, 'GET', '/queue-jobs?filter[status]=done', { token: x.end1.token });
    expect(f.status).toBe(400);
    expect(f.json.errors).toEqual([
      { id: 'invalid_parameter', status: '400', title: 'Invalid query parameter', detail: 'This list has no filters.', source: { parameter: 'filter[status]' } },
    ]);
    const p = await call(t.app, 'GET', '/queue-jobs?page[size]=1&page[number]=2', { token: x.reseller.token });
    const link = (n: number) => `${BASE}/queue-jobs?page[number]=${n}&page[size]=1`;
    expect(p.json.links).toEqual({ self: `${BASE}/queue-jobs?page[size]=1&page[number]=2`, first: link(1), last: link(4), prev: link(1), next: link(3) });
    expect(p.json.data.map((q: any) => q.id)).toEqual([j.noObject]);
    expect(p.json.meta).toEqual({ total: 4, page: { number: 2, size: 1, total_pages: 4 } });
  });

  it.each(['999999', 'abc', '99999999999', '-1'])('GET /queue-jobs/%s → 404', async (id) => {
    const r = await get(id);
    expect(r.status).toBe(404);
    expect(r.json).toEqual(notFoundBody(id));
  });
});
