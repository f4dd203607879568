// The job queue and worker (spec §3.1; API-NOTES §5; DESIGN "Jobs are rows"; issue 3 item 2):
// claim with a lease, heartbeats, wait, retry with back-off, failed, purge, several workers,
// a killed worker's job taken over, the `hostplane worker` command.
import path from 'node:path';
import { spawn } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import { sql } from 'kysely';
import { ConfigError, loadConfig } from '../src/config.js';
import { openStore, type Store } from '../src/db/index.js';
import { QueueJobsRepository, type NewQueueJob, type QueueJobRow } from '../src/resources/queue-jobs/queue-jobs.repository.js';
import { notifyEnqueued } from '../src/queue/notify.js';
import { Worker, shortError, type WorkerOptions } from '../src/queue/worker.js';
import { HandlerRegistry, LeaseLostError, PermanentJobError, type JobContext, type JobHandler } from '../src/queue/types.js';
import { ENGINES, createTestApp, freshStore, type TestStore } from './helpers/app.js';

const log = Fastify({ logger: { level: 'silent' } }).log;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor<T>(what: string, fn: () => Promise<T | undefined | null | false>, timeoutMs = 10_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

describe.each(ENGINES)('job queue on %s', (engine) => {
  let ts: TestStore;
  let store: Store;
  const workers: Worker[] = [];
  const extraStores: Store[] = [];

  beforeAll(async () => {
    ts = await freshStore(engine);
    store = ts.store;
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop({ graceMs: 0 })));
    await sql`delete from queue_jobs`.execute(store.db);
  });
  afterAll(async () => {
    for (const s of extraStores) await s.close();
    await ts.drop();
  });

  /** Another connection (pool) to the same database, as a second process would have. */
  async function secondStore(): Promise<Store> {
    const s = engine === 'postgres' ? await openStore(ts.url, { schema: ts.schema, poolSize: 5 }) : await openStore(ts.url);
    extraStores.push(s);
    return s;
  }

  async function startWorker(handlers: HandlerRegistry, o: Partial<WorkerOptions> = {}) {
    const w = new Worker({ store, handlers, log, pollMs: 50, leaseMs: 5_000, backoffBaseMs: 100, ...o });
    workers.push(w);
    await w.start();
    return w;
  }

  async function enqueue(job: Partial<NewQueueJob> = {}, notify = true): Promise<number> {
    const id = await new QueueJobsRepository(store.db).insert({ customerId: null, jobType: 'dns-record', action: 'create', objectId: '1', ...job });
    if (notify) await notifyEnqueued(store);
    return id;
  }

  const row = (id: number) => store.db.selectFrom('queue_jobs').selectAll().where('id', '=', id).executeTakeFirst() as Promise<QueueJobRow>;
  const settled = (id: number) => waitFor(`job ${id} to settle`, async () => {
    const r = await row(id);
    return r && r.status !== 'pending' ? r : undefined;
  });

  it('a done handler: status done, finished_at set, lease cleared, payload given, no attempt counted', async () => {
    const seen: JobContext[] = [];
    const handlers = new HandlerRegistry().register('dns-record', 'create', async (ctx) => {
      seen.push(ctx);
      return { status: 'done' };
    });
    await startWorker(handlers);
    const before = new Date().toISOString();
    const id = await enqueue({ payload: { record: 7, name: 'www' } });
    const r = await settled(id);
    expect(r).toMatchObject({ status: 'done', attempts: 0, error: null, lease_owner: null, lease_until: null });
    expect(r.finished_at! >= before).toBe(true);
    expect(seen).toHaveLength(1);
    expect(seen[0].payload).toEqual({ record: 7, name: 'www' });
    expect(seen[0].progress).toBeNull();
    expect(seen[0].job.id).toBe(id);
    expect(seen[0].job.lease_owner).toMatch(/^.+:\d+:[0-9a-f]{6}#\d+$/);
  });

  it('notifyEnqueued wakes an idle worker at once; without it the job waits for the poll', async () => {
    let started = 0;
    const handlers = new HandlerRegistry().register('dns-record', 'create', async () => {
      started = Date.now();
      return { status: 'done' };
    });
    await startWorker(handlers, { pollMs: 60_000 });
    await sleep(50);
    const id = await enqueue({}, false);
    await sleep(300);
    expect((await row(id)).status).toBe('pending');
    const t0 = Date.now();
    await notifyEnqueued(store);
    await settled(id);
    // Far below the 60 s poll: the wake-up did it.
    expect(started - t0).toBeLessThan(1_000);
  });

  it('wait: the lease is released, run_after moves, no attempt counts, progress carries over', async () => {
    const runs: unknown[] = [];
    let t = 0;
    const handlers = new HandlerRegistry().register('dns-record', 'create', async (ctx) => {
      runs.push(ctx.progress);
      if (ctx.progress === null) {
        await ctx.saveProgress({ changeId: 41 });
        t = Date.now();
        return { status: 'wait', ms: 400 };
      }
      return { status: 'done' };
    });
    await startWorker(handlers);
    const id = await enqueue();
    const mid = await waitFor('release', async () => {
      const r = await row(id);
      return r.lease_owner === null && r.progress !== null ? r : undefined;
    });
    const seen = Date.now();
    expect(mid).toMatchObject({ status: 'pending', attempts: 0, lease_owner: null, lease_until: null, progress: '{"changeId":41}' });
    // Released between t (the handler returned) and seen, due 400 ms after that.
    expect(Date.parse(mid.run_after)).toBeGreaterThanOrEqual(t + 400);
    expect(Date.parse(mid.run_after)).toBeLessThanOrEqual(seen + 405);
    const r = await settled(id);
    expect(r).toMatchObject({ status: 'done', attempts: 0, error: null });
    expect(runs).toEqual([null, { changeId: 41 }]);
  });

  it('a thrown error is retried with exponential back-off and jitter; attempts count; error stays null while pending', async () => {
    const times: number[] = [];
    const handlers = new HandlerRegistry().register('dns-record', 'create', async () => {
      times.push(Date.now());
      if (times.length <= 2) throw new Error('backend unreachable');
      return { status: 'done' };
    });
    await startWorker(handlers, { backoffBaseMs: 200 });
    const id = await enqueue();
    const after1 = await waitFor('first failure', async () => {
      const r = await row(id);
      return r.attempts === 1 ? r : undefined;
    });
    const seen = Date.now();
    expect(after1).toMatchObject({ status: 'pending', error: null, lease_owner: null, finished_at: null });
    // 1st failure (released between times[0] and seen): 50–100 % of 200 ms later.
    expect(Date.parse(after1.run_after) - times[0]).toBeGreaterThanOrEqual(95);
    expect(Date.parse(after1.run_after) - seen).toBeLessThanOrEqual(205);
    const r = await settled(id);
    expect(r).toMatchObject({ status: 'done', attempts: 2, error: null });
    expect(times).toHaveLength(3);
    // 2nd failure: 50–100 % of 400 ms.
    expect(times[2] - times[1]).toBeGreaterThanOrEqual(190);
    expect(times[2] - times[1]).toBeLessThan(2_000);
  });

  it('back-off doubles per attempt up to its ceiling, never below half of it', () => {
    const w = new Worker({ store, handlers: new HandlerRegistry(), log, backoffBaseMs: 1000, backoffMaxMs: 300_000 });
    for (let i = 0; i < 50; i++) {
      const d1 = w.backoff(1);
      expect(d1).toBeGreaterThanOrEqual(500);
      expect(d1).toBeLessThanOrEqual(1000);
      const d4 = w.backoff(4);
      expect(d4).toBeGreaterThanOrEqual(4000);
      expect(d4).toBeLessThanOrEqual(8000);
      const d30 = w.backoff(30);
      expect(d30).toBeGreaterThanOrEqual(150_000);
      expect(d30).toBeLessThanOrEqual(300_000);
    }
  });

  it('after JOB_MAX_ATTEMPTS failures the job is failed with the short message (no stack)', async () => {
    let runs = 0;
    const handlers = new HandlerRegistry().register('dns-record', 'create', async () => {
      runs++;
      throw new Error('zone transfer refused\n    at secret (/srv/app.js:1:1)');
    });
    await startWorker(handlers, { maxAttempts: 3, backoffBaseMs: 20 });
    const id = await enqueue();
    const r = await settled(id);
    expect(r).toMatchObject({ status: 'failed', attempts: 3, error: 'zone transfer refused', lease_owner: null, lease_until: null });
    expect(r.finished_at).not.toBeNull();
    expect(runs).toBe(3);
  });

  it('PermanentJobError fails the job at once', async () => {
    let runs = 0;
    const handlers = new HandlerRegistry().register('dns-record', 'delete', async () => {
      runs++;
      throw new PermanentJobError('record 9 no longer exists');
    });
    await startWorker(handlers);
    const id = await enqueue({ action: 'delete' });
    const r = await settled(id);
    expect(r).toMatchObject({ status: 'failed', attempts: 1, error: 'record 9 no longer exists' });
    await sleep(200);
    expect(runs).toBe(1);
  });

  it('a job nobody handles (unknown job_type/action) fails at once; an invalid result is retried as an error', async () => {
    const handlers = new HandlerRegistry().register('dns-record', 'create', (async () => ({ status: 'maybe' })) as unknown as JobHandler);
    await startWorker(handlers, { maxAttempts: 2, backoffBaseMs: 10 });
    const unknown = await enqueue({ jobType: 'database', action: 'update' });
    const invalid = await enqueue();
    expect(await settled(unknown)).toMatchObject({ status: 'failed', attempts: 1, error: 'no handler for database update' });
    expect(await settled(invalid)).toMatchObject({ status: 'failed', attempts: 2, error: 'handler returned no valid result' });
  });

  it('heartbeats keep a long job leased: a second worker never runs it', async () => {
    let runs = 0;
    const handlers = new HandlerRegistry().register('dns-record', 'create', async () => {
      runs++;
      await sleep(1_600);
      return { status: 'done' };
    });
    await startWorker(handlers, { leaseMs: 600 });
    const id = await enqueue();
    const first = await waitFor('claim', async () => (await row(id)).lease_until);
    const other = new Worker({ store: await secondStore(), handlers, log, pollMs: 20, leaseMs: 600 });
    workers.push(other);
    await other.start();
    await sleep(1_000);
    const mid = await row(id);
    expect(mid.status).toBe('pending');
    expect(mid.lease_until! > first).toBe(true);
    expect(Date.parse(mid.lease_until!)).toBeGreaterThan(Date.now());
    const r = await settled(id);
    expect(r).toMatchObject({ status: 'done', attempts: 0 });
    expect(runs).toBe(1);
  });

  it('two workers (own connections, concurrency 4 each) never run a job twice', async () => {
    const runs = new Map<number, number>();
    const by = new Map<string, number>();
    const handlers = new HandlerRegistry().register('dns-record', 'create', async (ctx) => {
      runs.set(ctx.job.id, (runs.get(ctx.job.id) ?? 0) + 1);
      const w = ctx.job.lease_owner!.split('#')[0];
      by.set(w, (by.get(w) ?? 0) + 1);
      await sleep(Math.random() * 15);
      return { status: 'done' };
    });
    await startWorker(handlers, { concurrency: 4, pollMs: 10 });
    const other = new Worker({ store: await secondStore(), handlers, log, concurrency: 4, pollMs: 10 });
    workers.push(other);
    await other.start();
    const ids: number[] = [];
    for (let i = 0; i < 80; i++) ids.push(await enqueue({ objectId: String(i) }));
    for (const id of ids) expect(await settled(id)).toMatchObject({ status: 'done' });
    expect(runs.size).toBe(80);
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
    expect(by.size).toBe(2);
  });

  it("a killed worker's lease expires and another worker finishes the job; the late run changes nothing", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const effects: string[] = [];
    let leaseLost: unknown;
    let signalAborted = false;
    const stuck = new HandlerRegistry().register('dns-record', 'create', async (ctx) => {
      await gate;
      signalAborted = ctx.signal?.aborted ?? false;
      try {
        await ctx.store.db.transaction().execute(async (trx) => {
          await sql`insert into queue_jobs (job_type, action, status, run_after, created_at) values ('fx', 'late', 'done', '', '')`.execute(trx);
          await ctx.saveProgress({ by: 'late' }, trx);
        });
      } catch (err) {
        leaseLost = err;
      }
      effects.push('late');
      return { status: 'done' };
    });
    const a = await startWorker(stuck, { leaseMs: 400 });
    const id = await enqueue();
    const claimed = await waitFor('claim by A', async () => (await row(id)).lease_owner);
    expect(claimed.startsWith(a.id)).toBe(true);
    // "Kill" A: no more heartbeats, its run is abandoned.
    await a.stop({ graceMs: 0 });
    const lastLease = Date.parse((await row(id)).lease_until!);
    let bStarted = 0;
    const healthy = new HandlerRegistry().register('dns-record', 'create', async (ctx) => {
      bStarted = Date.now();
      await ctx.saveProgress({ by: 'b' });
      effects.push('b');
      return { status: 'done' };
    });
    const b = new Worker({ store: await secondStore(), handlers: healthy, log, pollMs: 20, leaseMs: 5_000 });
    workers.push(b);
    await b.start();
    const r = await settled(id);
    // B waited for A's lease to run out; it did not steal the job.
    expect(bStarted).toBeGreaterThanOrEqual(lastLease);
    // The take-over counts an attempt (a job that kills every worker must end failed).
    expect(r).toMatchObject({ status: 'done', attempts: 1, progress: '{"by":"b"}', lease_owner: null });
    expect(effects).toEqual(['b']);
    // A's run finishes late: its fenced write rolls back and its `done` changes nothing.
    release();
    await waitFor('late run', async () => effects.length === 2);
    await sleep(50);
    expect(signalAborted).toBe(true);
    expect(leaseLost).toBeInstanceOf(LeaseLostError);
    expect(await row(id)).toEqual(r);
    const late = await store.db.selectFrom('queue_jobs').select('id').where('job_type', '=', 'fx').execute();
    expect(late).toEqual([]);
  });

  it('a job whose workers keep dying ends failed after JOB_MAX_ATTEMPTS take-overs', async () => {
    const handlers = new HandlerRegistry().register('dns-record', 'create', async () => ({ status: 'done' }));
    const id = await enqueue({}, false);
    // A dead worker's claim: lease expired, already taken over twice.
    await store.db.updateTable('queue_jobs').set({ lease_owner: 'dead:1:000000#1', lease_until: new Date(Date.now() - 1).toISOString(), attempts: 2 }).where('id', '=', id).execute();
    await startWorker(handlers, { maxAttempts: 3 });
    expect(await settled(id)).toMatchObject({ status: 'failed', attempts: 3, error: 'abandoned by workers 3 times (crash or timeout)' });
  });

  it('jobs not yet due (run_after in the future) and leased jobs are not claimed', async () => {
    let runs = 0;
    const handlers = new HandlerRegistry().register('dns-record', 'create', async () => {
      runs++;
      return { status: 'done' };
    });
    const future = await enqueue({ runAfter: new Date(Date.now() + 60_000).toISOString() }, false);
    const leased = await enqueue({}, false);
    await store.db.updateTable('queue_jobs').set({ lease_owner: 'other:1:000000#1', lease_until: new Date(Date.now() + 60_000).toISOString() }).where('id', '=', leased).execute();
    await startWorker(handlers);
    await sleep(300);
    expect(runs).toBe(0);
    expect(await row(future)).toMatchObject({ status: 'pending', lease_owner: null });
    expect(await row(leased)).toMatchObject({ status: 'pending', lease_owner: 'other:1:000000#1' });
  });

  it('purge: done jobs 24 h past finished_at are deleted; younger done, failed and pending jobs stay (spec §3.1)', async () => {
    const h = 3_600_000;
    const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
    const old = await enqueue({ status: 'done', createdAt: ago(26 * h), finishedAt: ago(24 * h + 60_000) }, false);
    const young = await enqueue({ status: 'done', createdAt: ago(24 * h), finishedAt: ago(23 * h) }, false);
    const failed = await enqueue({ status: 'failed', error: 'x', createdAt: ago(30 * h), finishedAt: ago(29 * h) }, false);
    const pending = await enqueue({ createdAt: ago(30 * h), runAfter: new Date(Date.now() + h).toISOString() }, false);
    await startWorker(new HandlerRegistry());
    await waitFor('purge', async () => !(await row(old)));
    const left = await store.db.selectFrom('queue_jobs').select('id').orderBy('id').execute();
    expect(left.map((r) => r.id)).toEqual([young, failed, pending]);
  });

  it('stop() waits for running handlers; claims nothing new afterwards', async () => {
    let runs = 0;
    const handlers = new HandlerRegistry().register('dns-record', 'create', async () => {
      runs++;
      await sleep(300);
      return { status: 'done' };
    });
    const w = await startWorker(handlers);
    const id = await enqueue();
    await waitFor('start', async () => runs === 1);
    await w.stop({ graceMs: 5_000 });
    expect(await row(id)).toMatchObject({ status: 'done' });
    const later = await enqueue();
    await sleep(200);
    expect(await row(later)).toMatchObject({ status: 'pending', lease_owner: null });
    expect(runs).toBe(1);
  });

  it('createTestApp(…, { worker: true }) runs jobs with the application handlers (buildHandlers)', async () => {
    const t = await createTestApp(engine, { JOB_POLL_MS: '50' }, { worker: true });
    try {
      const id = await new QueueJobsRepository(t.store.db).insert({ customerId: null, jobType: 'subdomain', action: 'update', objectId: '1' });
      await notifyEnqueued(t.store);
      const r = await waitFor('app worker', async () => {
        const j = await t.store.db.selectFrom('queue_jobs').selectAll().where('id', '=', id).executeTakeFirst();
        return j?.status === 'failed' ? j : undefined;
      });
      expect(r.error).toBe('no handler for subdomain update');
      expect(t.worker).not.toBeNull();
    } finally {
      await t.close();
    }
  });

  it('`hostplane worker` runs jobs from another process (woken by NOTIFY on PostgreSQL) and exits 0 on SIGTERM', async () => {
    const databaseUrl = engine === 'postgres' ? `${ts.url}${ts.url.includes('?') ? '&' : '?'}schema=${ts.schema}` : ts.url;
    const child = spawn(process.execPath, ['--import', 'tsx', path.resolve('src/main.ts'), 'worker'], {
      // PostgreSQL: no polling to speak of, so only LISTEN/NOTIFY can bring the job over in time.
      env: { ...process.env, DATABASE_URL: databaseUrl, JOB_POLL_MS: engine === 'postgres' ? '600000' : '50', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await waitFor('worker ready', async () => out.includes('hostplane worker ready'), 20_000);
      expect(out).toContain(`"listen":${engine === 'postgres'}`);
      // No handler for it (buildHandlers): the other process marks it failed, which shows it ran it.
      const t0 = Date.now();
      const id = await enqueue({ jobType: 'subdomain', action: 'update' });
      expect(await settled(id)).toMatchObject({ status: 'failed', error: 'no handler for subdomain update' });
      expect(Date.now() - t0).toBeLessThan(2_000);
      const leaseOwner = out.match(/"worker":"([^"]+)"/)?.[1];
      expect(leaseOwner).toContain(`:${child.pid}:`);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(out).toContain('worker stopped');
  }, 30_000);
});

describe('job settings (JOB_*)', () => {
  it('defaults, values, and problems reported together', () => {
    expect(loadConfig({}).jobs).toEqual({ concurrency: 4, leaseMs: 30_000, maxAttempts: 10, pollMs: 200 });
    expect(loadConfig({ JOB_CONCURRENCY: '16', JOB_LEASE_MS: '60000', JOB_MAX_ATTEMPTS: '3', JOB_POLL_MS: '1000' }).jobs).toEqual({
      concurrency: 16,
      leaseMs: 60_000,
      maxAttempts: 3,
      pollMs: 1000,
    });
    let problems: string[] = [];
    try {
      loadConfig({ JOB_CONCURRENCY: '0', JOB_LEASE_MS: '500', JOB_POLL_MS: 'soon' });
    } catch (err) {
      problems = (err as ConfigError).problems;
    }
    expect(problems).toEqual(expect.arrayContaining(['JOB_CONCURRENCY: must be greater than 0', 'JOB_LEASE_MS: must be at least 1000']));
    expect(problems.some((p) => p.startsWith('JOB_POLL_MS'))).toBe(true);
  });

  it('shortError keeps the first line, no stack, at most 300 characters', () => {
    expect(shortError(new Error('a\nb'))).toBe('a');
    expect(shortError(new Error(''))).toBe('Error');
    expect(shortError('plain')).toBe('plain');
    expect(shortError(new Error('x'.repeat(400)))).toHaveLength(300);
  });
});
