// A store that cannot answer (API guide "Errors"; src/db/unavailable.ts): the request that meets it
// answers 503 service_unavailable with Retry-After instead of an unexpected fault, changes nothing
// and leaves its Idempotency-Key free, and the same request goes through once the store answers
// again. SQLite: another connection holds the write lock past the 5 s busy wait. PostgreSQL: the
// statement's connection is ended by the server while it waits (what a restart does). The batches
// written after an answer (its stored answer, its audit event) are tried again until the store
// takes them.
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, ENGINES, call, createTestApp, freshStore, type TestApp, type TestStore } from '../helpers/app.js';
import { errorBody } from '../helpers/errors.js';
import { filledLater } from '../helpers/suite.js';
import { seedTenants, type Tenants } from '../helpers/tenants.js';
import { waitFor } from '../helpers/wait.js';
import { freshKey, txtRecord, withKey } from '../helpers/safe-retries.js';
import { auditRowsAfter, lastAuditId } from '../helpers/audit-events.js';

const unavailable = (self: string) =>
  errorBody(
    'service_unavailable', 503, 'Service unavailable',
    'The service cannot answer this request right now (its data store, or a server it needs, is busy or unreachable). Repeat it in 5 seconds (Retry-After).',
    self,
  );

/**
 * Makes the store refuse the next write of `send`: SQLite's write lock held by another connection
 * (the write waits 5 s, then gives up); on PostgreSQL the table locked by another session and the
 * waiting statement's connection ended. Answers `send`'s answer once the store answers again.
 */
async function whileStoreRefuses<T>(engine: string, ts: TestStore, send: () => Promise<T>): Promise<T> {
  if (engine === 'sqlite') {
    const other = new SQLite(ts.url);
    other.exec('begin immediate');
    try {
      return await send();
    } finally {
      other.exec('rollback');
      other.close();
    }
  }
  const locker = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await locker.connect();
  try {
    await locker.query(`begin; set local search_path to ${ts.schema}; lock table dns_records in access exclusive mode`);
    const answer = send();
    // The request's statement waits for the lock: its connection is ended under it.
    const waiting = async () =>
      (await locker.query(`select pid from pg_locks where not granted and relation = $1::regclass`, [`${ts.schema}.dns_records`])).rows as { pid: number }[];
    await waitFor('the request waits for the table', async () => (await waiting()).length > 0);
    for (const { pid } of await waiting()) await locker.query('select pg_terminate_backend($1)', [pid]);
    return await answer;
  } finally {
    await locker.query('rollback').catch(() => {});
    await locker.end();
  }
}

/**
 * Makes the store refuse the batches written after an answer (its stored answer, its audit event)
 * once, then answer again: SQLite's write lock held past the first try's busy wait; on PostgreSQL
 * the tables locked and the waiting statements' connections ended, then the lock let go while the
 * next tries wait.
 */
async function refuseBatchesOnce(engine: string, ts: TestStore): Promise<void> {
  if (engine === 'sqlite') {
    const other = new SQLite(ts.url);
    other.exec('begin immediate');
    // Runs once the first try gave up (the API's thread waits in SQLite until then).
    await new Promise<void>((resolve) =>
      setTimeout(() => {
        other.exec('rollback');
        other.close();
        resolve();
      }, 200),
    );
    return;
  }
  const locker = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await locker.connect();
  try {
    await locker.query(`begin; set local search_path to ${ts.schema}; lock table audit_events, idempotency_keys in access exclusive mode`);
    const waiting = async () =>
      (await locker.query(`select pid from pg_locks where not granted and relation in ($1::regclass, $2::regclass)`, [`${ts.schema}.audit_events`, `${ts.schema}.idempotency_keys`])).rows.map((r: { pid: number }) => r.pid);
    await waitFor('both batches wait for their tables', async () => new Set(await waiting()).size >= 2);
    const first = await waiting();
    for (const pid of first) await locker.query('select pg_terminate_backend($1)', [pid]);
    await waitFor('the batches are tried again', async () => (await waiting()).some((pid) => !first.includes(pid)));
  } finally {
    await locker.query('rollback').catch(() => {});
    await locker.end();
  }
}

describe.each(ENGINES)('a store that cannot answer, on %s', { timeout: 60_000 }, (engine) => {
  const ts = filledLater<TestStore>();
  const t = filledLater<TestApp>();
  const x = filledLater<Tenants>();

  beforeAll(async () => {
    Object.assign(ts, await freshStore(engine));
    Object.assign(t, await createTestApp(engine, {}, { store: ts }));
    Object.assign(x, await seedTenants(t.admin));
  }, 60_000);
  afterAll(async () => {
    await t.close?.();
    await ts.drop?.();
  });

  const records = async () => (await call(t.app, 'GET', `/dns-records?filter[domain]=${x.end1.domain}`, { token: x.end1.token })).json.meta.total as number;

  it('a write answers 503 service_unavailable with Retry-After and changes nothing; its key stays free, and the same request with it goes through afterwards', async () => {
    const before = await records();
    const key = freshKey();
    const body = txtRecord(x.end1.domain, '_busy');
    const refused = await whileStoreRefuses(engine, ts, () => withKey(t, 'POST', '/dns-records', x.end1.token, key, body));
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('5');
    expect(refused.headers['content-type']).toMatch(/^application\/vnd\.api\+json/);
    expect(refused.json).toEqual(unavailable(`${BASE}/dns-records`));
    expect(await records()).toBe(before);

    const again = await withKey(t, 'POST', '/dns-records', x.end1.token, key, body);
    expect(again.status).toBe(202);
    expect(again.headers['retry-after']).toBeUndefined();
    expect(await records()).toBe(before + 1);
  });

  it("an answer's batches (its stored answer, its audit event) that meet it are written once it answers again: the repeat replays, the event is there", async () => {
    const since = await lastAuditId({ store: t.store, app: t.app });
    const before = await records();
    const key = freshKey();
    const body = txtRecord(x.end1.domain, '_batch');
    const first = await withKey(t, 'POST', '/dns-records', x.end1.token, key, body);
    expect(first.status).toBe(202);
    await refuseBatchesOnce(engine, ts);
    await t.app.idempotencyKeys.settled();

    const repeat = await withKey(t, 'POST', '/dns-records', x.end1.token, key, body);
    expect({ status: repeat.status, location: repeat.headers['content-location'], body: repeat.body }).toEqual({ status: 202, location: first.headers['content-location'], body: first.body });
    expect(await records()).toBe(before + 1);
    const events = (await auditRowsAfter({ store: t.store, app: t.app }, since)).filter((e) => e.idempotency_key === key);
    expect(events.map((e) => [e.method, e.path, e.status])).toEqual([['POST', '/dns-records', 202], ['POST', '/dns-records', 202]]);
  });

  it('a read that meets it answers 503 too, and the next one its data', async () => {
    const refused = await whileStoreRefuses(engine, ts, () => call(t.app, 'GET', `/dns-records?filter[domain]=${x.end1.domain}`, { token: x.end1.token }));
    // SQLite readers never wait for the write lock: the read is answered.
    if (engine === 'sqlite') expect(refused.status).toBe(200);
    else {
      expect(refused.status).toBe(503);
      expect(refused.headers['retry-after']).toBe('5');
      expect(refused.json).toEqual(unavailable(`${BASE}/dns-records?filter[domain]=${x.end1.domain}`));
    }
    expect((await call(t.app, 'GET', `/dns-records?filter[domain]=${x.end1.domain}`, { token: x.end1.token })).status).toBe(200);
  });
});
