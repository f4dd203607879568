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

/** SQLite: another connection holds the write lock (a write of the app waits 5 s, then gives up) until `release`. */
function holdWriteLock(ts: TestStore) {
  const other = new SQLite(ts.url);
  other.exec('begin immediate');
  return {
    release() {
      other.exec('rollback');
      other.close();
    },
  };
}

/**
 * PostgreSQL: a session holds `tables` of the test's schema locked (`exclusive`: reads go on, writes
 * wait); who waits for them, ending their connections, letting go.
 */
async function lockTables(ts: TestStore, tables: string[], mode: 'access exclusive' | 'exclusive' = 'access exclusive') {
  const locker = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await locker.connect();
  await locker.query(`begin; set local search_path to ${ts.schema}; lock table ${tables.join(', ')} in ${mode} mode`);
  const names = tables.map((table) => `${ts.schema}.${table}`);
  return {
    waiting: async () => (await locker.query(`select pid from pg_locks where not granted and relation = any($1::regclass[])`, [names])).rows.map((r: { pid: number }) => r.pid),
    async end(pids: number[]) {
      for (const pid of pids) await locker.query('select pg_terminate_backend($1)', [pid]);
    },
    async release() {
      await locker.query('rollback').catch(() => {});
      await locker.end();
    },
  };
}

/**
 * Makes the store refuse the next write of `send`: SQLite's write lock held past its wait; on
 * PostgreSQL the table locked and the waiting statement's connection ended (what a restart does).
 * Answers `send`'s answer; the store answers again after.
 */
async function whileStoreRefuses<T>(engine: string, ts: TestStore, send: () => Promise<T>): Promise<T> {
  if (engine === 'sqlite') {
    const lock = holdWriteLock(ts);
    try {
      return await send();
    } finally {
      lock.release();
    }
  }
  const lock = await lockTables(ts, ['dns_records']);
  try {
    const answer = send();
    await waitFor('the request waits for the table', async () => (await lock.waiting()).length > 0);
    await lock.end(await lock.waiting());
    return await answer;
  } finally {
    await lock.release();
  }
}

/**
 * Answers `send`'s answer, whose batches (its stored answer, its audit event) the store refuses
 * once and then takes: SQLite's write lock held past the first try's wait; on PostgreSQL the
 * tables locked for writes before `send`, the waiting statements' connections ended, the lock let
 * go while the next tries wait.
 */
async function refusingBatchesOnce<T>(engine: string, ts: TestStore, send: () => Promise<T>): Promise<T> {
  if (engine === 'sqlite') {
    const answer = await send();
    const lock = holdWriteLock(ts);
    // Runs once the first try gave up (the API's thread waits in SQLite until then).
    await new Promise<void>((resolve) => setTimeout(() => resolve(lock.release()), 200));
    return answer;
  }
  const lock = await lockTables(ts, ['audit_events', 'idempotency_keys'], 'exclusive');
  try {
    const answer = await send();
    await waitFor('both batches wait for their tables', async () => new Set(await lock.waiting()).size >= 2);
    const first = await lock.waiting();
    await lock.end(first);
    await waitFor('the batches are tried again', async () => (await lock.waiting()).some((pid) => !first.includes(pid)));
    return answer;
  } finally {
    await lock.release();
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
    const first = await refusingBatchesOnce(engine, ts, () => withKey(t, 'POST', '/dns-records', x.end1.token, key, body));
    expect(first.status).toBe(202);
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
