// The job queue tests' setup (API guide "Queue jobs"; docs/decisions/0004-provisioning-seams.md): a
// fresh store per suite, workers with short polls and leases that are stopped after each test, and
// jobs enqueued as rows.
import net from 'node:net';
import Fastify from 'fastify';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { openStore, type Store } from '../../src/db/index.js';
import { QueueRepository } from '../../src/queue/queue.repository.js';
import type { NewQueueJob, QueueJobRow } from '../../src/queue/jobs.js';
import { notifyEnqueued } from '../../src/queue/wakeups.js';
import type { JobRegistry } from '../../src/queue/types.js';
import { workerLockName } from '../../src/queue/session-lock.js';
import { Worker, type WorkerOptions } from '../../src/queue/worker.js';
import { freshStore, type EngineName, type TestStore } from './app.js';
import { testDrivers } from './jobs.js';
import { filledLater } from './suite.js';
import { waitFor } from './wait.js';

/** A logger that writes nothing, for workers built in a test. */
export const log = Fastify({ logger: { level: 'silent' } }).log;

/** What a worker logged (pino records): `const { log, records } = capturedLog(); … records.some((r) => r.msg === '…')`. */
export function capturedLog() {
  const records: { level: number; msg: string; [key: string]: unknown }[] = [];
  const stream = { write: (line: string) => void records.push(JSON.parse(line)) };
  return { log: Fastify({ logger: { level: 'debug', stream } }).log, records };
}

/**
 * Registers the hooks of a queue suite (a fresh store; after each test its workers stopped and its
 * jobs deleted) and returns the tools:
 * `const { startWorker, enqueue, settled } = useQueue(engine); await startWorker(jobs); await settled(await enqueue())`.
 */
export function useQueue(engine: EngineName) {
  const ts = filledLater<TestStore>();
  const store = filledLater<Store>();
  const workers: Worker[] = [];
  const extraStores: Store[] = [];
  const locks: (() => Promise<void>)[] = [];
  const proxies: net.Server[] = [];

  beforeAll(async () => {
    Object.assign(ts, await freshStore(engine));
    Object.assign(store, ts.store);
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop({ graceMs: 0 })));
    await Promise.all(locks.splice(0).map((release) => release()));
    await sql`delete from queue_jobs`.execute(store.db);
    await sql`delete from queue_schedules`.execute(store.db);
  });
  afterAll(async () => {
    for (const s of extraStores) await s.close();
    for (const p of proxies) p.close();
    await ts.drop?.();
  });

  /** Another connection (pool) to the same database (through `url`, e.g. a proxy), as a second process would have. */
  async function secondStore(url = ts.url): Promise<Store> {
    const s = engine === 'postgres' ? await openStore(url, { schema: ts.schema, poolSize: 5 }) : await openStore(url);
    extraStores.push(s);
    return s;
  }

  /**
   * A started worker on the suite's store (poll 50 ms, lease 5 s, back-off base 100 ms unless `o`
   * says otherwise; `{ leaseMs: undefined }` for the engine's default lease).
   */
  async function startWorker(handlers: JobRegistry, o: Partial<WorkerOptions> = {}) {
    const w = new Worker({ store, jobs: handlers, drivers: testDrivers(store), log, pollMs: 50, leaseMs: 5_000, backoffBaseMs: 100, ...o });
    workers.push(w);
    await w.start();
    return w;
  }

  /**
   * PostgreSQL: holds the session lock of worker `workerId` until the test ends or the returned
   * function is called, as that worker does while it lives (its jobs are then not taken over
   * before their leases run out). Nothing on SQLite, where the lease is all there is.
   */
  async function keepAlive(workerId: string): Promise<() => Promise<void>> {
    const lock = await store.holdLock?.(workerLockName(workerId), () => {});
    const release = lock?.release ?? (async () => {});
    locks.push(release);
    return release;
  }

  /** PostgreSQL: the server process holding worker `workerId`'s session lock (or waiting for it, `granted` false), or undefined. */
  async function lockHolder(workerId: string, granted = true): Promise<number | undefined> {
    const { rows } = await sql<{ pid: number }>`
      select pid from pg_locks where locktype = 'advisory' and objsubid = 1 and granted = ${granted}
        and ((classid::bigint << 32) | objid::bigint) = hashtextextended(${workerLockName(workerId)}, 0)`.execute(store.db);
    return rows[0]?.pid;
  }

  /**
   * PostgreSQL: ends the session in which worker `workerId` holds its lock and holds the lock in
   * its place (the test's request waits in line first, so the server hands the lock straight to
   * it), until the test ends or the returned function is called. The worker lives on without its
   * lock, as after a database restart before it takes the lock again.
   */
  async function takeLock(workerId: string): Promise<() => Promise<void>> {
    const holder = await lockHolder(workerId);
    const held = keepAlive(workerId);
    await waitFor('the test waiting for the lock', () => lockHolder(workerId, false));
    await sql`select pg_terminate_backend(${holder})`.execute(store.db);
    return held;
  }

  /**
   * PostgreSQL: a TCP proxy to the test database whose connections can go silent, as when a NAT
   * drops a connection or the database fails over: `silence(pid)` stops forwarding on the
   * connection of server process `pid` without closing the client's side, so the client hears
   * nothing more. `url` is the database URL through the proxy.
   */
  async function silentProxy() {
    const target = new URL(ts.url);
    /** Both sockets of each connection, by the proxy's local port towards the server (the server's `client_port`). */
    const pairs = new Map<number, { client: net.Socket; upstream: net.Socket }>();
    const server = net.createServer((client) => {
      const upstream = net.connect(Number(target.port || 5432), target.hostname);
      const close = () => {
        client.destroy();
        upstream.destroy();
      };
      upstream.on('connect', () => pairs.set(upstream.localPort!, { client, upstream }));
      for (const s of [client, upstream]) s.on('error', close).on('close', close);
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    proxies.push(server);
    const url = new URL(ts.url);
    url.host = `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
    return {
      url: url.toString(),
      async silence(pid: number) {
        const { rows } = await sql<{ port: number }>`select client_port as port from pg_stat_activity where pid = ${pid}`.execute(store.db);
        const pair = pairs.get(rows[0]?.port);
        if (!pair) throw new Error(`no proxied connection for server process ${pid}`);
        pair.client.unpipe(pair.upstream);
        pair.upstream.unpipe(pair.client);
        // What the server says from now on is dropped; its side closing does not close the client's.
        pair.upstream.removeAllListeners('close').removeAllListeners('error').on('error', () => {}).resume();
        // The client's side stays open and unanswered until the client closes it.
        pair.client.removeAllListeners('close').on('close', () => pair.upstream.destroy());
      },
    };
  }

  /** Inserts a pending dns-record create job (or `job`) and, unless `notify` is false, wakes the workers. */
  async function enqueue(job: Partial<NewQueueJob> = {}, notify = true): Promise<number> {
    const { id } = await new QueueRepository(store.db).insert({ customerId: null, jobType: 'dns-record', action: 'create', objectId: '1', ...job });
    if (notify) await notifyEnqueued(store);
    return id;
  }

  const row = (id: number) => store.db.selectFrom('queue_jobs').selectAll().where('id', '=', id).executeTakeFirst() as Promise<QueueJobRow>;
  const settled = (id: number) => waitFor(`job ${id} to settle`, async () => {
    const r = await row(id);
    return r && r.status !== 'pending' ? r : undefined;
  });

  return {
    ts,
    store,
    /** Workers a test built itself go here, so they are stopped after it. */
    workers,
    secondStore,
    startWorker,
    keepAlive,
    lockHolder,
    takeLock,
    silentProxy,
    enqueue,
    row,
    settled,
  };
}
