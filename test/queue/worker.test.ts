// The job worker (API guide "Queue jobs"; docs/decisions/0004-provisioning-seams.md): claim with a
// lease, done/wait/retry with back-off/failed, heartbeats, several workers, stop(), and the JOB_*
// settings. Jobs of workers that hang or die: worker-takeover.test.ts.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { QueueRepository } from '../../src/queue/queue.repository.js';
import { notifyEnqueued } from '../../src/queue/wakeups.js';
import { shortError } from '../../src/queue/short-error.js';
import { Worker } from '../../src/queue/worker.js';
import { PermanentJobError, type JobContext } from '../../src/queue/types.js';
import { ENGINES, createTestApp } from '../helpers/app.js';
import { TestJobs, testDrivers, type JobRun } from '../helpers/jobs.js';
import { log, useQueue } from '../helpers/queue.js';
import { sleep, waitFor } from '../helpers/wait.js';

describe.each(ENGINES)('job queue on %s', (engine) => {
  const { store, workers, secondStore, startWorker, keepAlive, enqueue, row, settled } = useQueue(engine);

  it('a done handler: status done, finished_at set, lease cleared, payload given, no attempt counted', async () => {
    const seen: JobContext[] = [];
    const handlers = new TestJobs().register('dns-record', 'create', async (ctx) => {
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
    const handlers = new TestJobs().register('dns-record', 'create', async () => {
      started = Date.now();
      return { status: 'done' };
    });
    const w = await startWorker(handlers, { pollMs: 60_000 });
    // Its first look for due jobs over (on a busy machine it may come later than any fixed wait).
    await w.claimed();
    const id = await enqueue({}, false);
    await sleep(300);
    expect((await row(id)).status).toBe('pending');
    const t0 = Date.now();
    await notifyEnqueued(store);
    await settled(id);
    // Far below the 60 s poll (even on a busy machine): the wake-up did it.
    expect(started - t0).toBeLessThan(10_000);
  });

  it('in-process wake-ups stay within one Store: a worker on another Store of the same database hears NOTIFY (PostgreSQL) or nothing until its poll (SQLite)', async () => {
    let started = 0;
    const handlers = new TestJobs().register('dns-record', 'create', async () => {
      started = Date.now();
      return { status: 'done' };
    });
    const other = await secondStore();
    const w = await startWorker(handlers, { store: other, drivers: testDrivers(other), pollMs: 60_000 });
    await w.claimed();
    const t0 = Date.now();
    const id = await enqueue();
    if (engine === 'postgres') {
      await settled(id);
      expect(started - t0).toBeLessThan(10_000);
    } else {
      // As a worker of another process: the Store that enqueued has no way to reach it.
      await sleep(300);
      expect((await row(id)).status).toBe('pending');
    }
  });

  it('wait: the lease is released, run_after moves, no attempt counts, progress carries over', async () => {
    const runs: unknown[] = [];
    let t = 0;
    const handlers = new TestJobs().register('dns-record', 'create', async (ctx) => {
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
    const handlers = new TestJobs().register('dns-record', 'create', async () => {
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
    const w = new Worker({ store, jobs: new TestJobs(), drivers: testDrivers(store), log, backoffBaseMs: 1000, backoffMaxMs: 300_000 });
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
    const handlers = new TestJobs().register('dns-record', 'create', async () => {
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
    const handlers = new TestJobs().register('dns-record', 'delete', async () => {
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
    const handlers = new TestJobs().register('dns-record', 'create', (async () => ({ status: 'maybe' })) as unknown as JobRun);
    await startWorker(handlers, { maxAttempts: 2, backoffBaseMs: 10 });
    const unknown = await enqueue({ jobType: 'database', action: 'update' });
    const invalid = await enqueue();
    expect(await settled(unknown)).toMatchObject({ status: 'failed', attempts: 1, error: 'no handler for database update' });
    expect(await settled(invalid)).toMatchObject({ status: 'failed', attempts: 2, error: 'handler returned no valid result' });
  });

  it('heartbeats keep a long job leased: a second worker never runs it', async () => {
    let runs = 0;
    const handlers = new TestJobs().register('dns-record', 'create', async () => {
      runs++;
      await sleep(1_600);
      return { status: 'done' };
    });
    await startWorker(handlers, { leaseMs: 600 });
    const id = await enqueue();
    const first = await waitFor('claim', async () => (await row(id)).lease_until);
    const other = new Worker({ store: await secondStore(), jobs: handlers, drivers: testDrivers(store), log, pollMs: 20, leaseMs: 600 });
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
    const handlers = new TestJobs().register('dns-record', 'create', async (ctx) => {
      runs.set(ctx.job.id, (runs.get(ctx.job.id) ?? 0) + 1);
      const w = ctx.job.lease_owner!.split('#')[0];
      by.set(w, (by.get(w) ?? 0) + 1);
      await sleep(Math.random() * 15);
      return { status: 'done' };
    });
    await startWorker(handlers, { concurrency: 4, pollMs: 10 });
    const other = new Worker({ store: await secondStore(), jobs: handlers, drivers: testDrivers(store), log, concurrency: 4, pollMs: 10 });
    workers.push(other);
    await other.start();
    const ids: number[] = [];
    for (let i = 0; i < 80; i++) ids.push(await enqueue({ objectId: String(i) }));
    for (const id of ids) expect(await settled(id)).toMatchObject({ status: 'done' });
    expect(runs.size).toBe(80);
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
    expect(by.size).toBe(2);
  });


  it('jobs not yet due (run_after in the future) and leased jobs are not claimed', async () => {
    let runs = 0;
    const handlers = new TestJobs().register('dns-record', 'create', async () => {
      runs++;
      return { status: 'done' };
    });
    const future = await enqueue({ runAfter: new Date(Date.now() + 60_000).toISOString() }, false);
    const leased = await enqueue({ objectId: '2' }, false);
    // Leased by a worker that is alive (on PostgreSQL: holds its session lock).
    await keepAlive('other:1:000000');
    await store.db.updateTable('queue_jobs').set({ lease_owner: 'other:1:000000#1', lease_until: new Date(Date.now() + 60_000).toISOString() }).where('id', '=', leased).execute();
    const w = await startWorker(handlers);
    // Its first look for due jobs over, and a few polls after it.
    await w.claimed();
    await sleep(300);
    expect(runs).toBe(0);
    expect(await row(future)).toMatchObject({ status: 'pending', lease_owner: null });
    expect(await row(leased)).toMatchObject({ status: 'pending', lease_owner: 'other:1:000000#1' });
  });

  it('stop() waits for running handlers; claims nothing new afterwards', async () => {
    let runs = 0;
    const handlers = new TestJobs().register('dns-record', 'create', async () => {
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

  it('createTestApp(…, { worker: true }) runs jobs with the application job definitions (buildJobs)', async () => {
    const t = await createTestApp(engine, { JOB_POLL_MS: '50' }, { worker: true });
    try {
      const { id } = await new QueueRepository(t.store.db).insert({ customerId: null, jobType: 'email-address', action: 'update', objectId: '1' });
      await notifyEnqueued(t.store);
      const r = await waitFor('app worker', async () => {
        const j = await t.store.db.selectFrom('queue_jobs').selectAll().where('id', '=', id).executeTakeFirst();
        return j?.status === 'failed' ? j : undefined;
      });
      expect(r.error).toBe('no handler for email-address update');
      expect(t.worker).not.toBeNull();
    } finally {
      await t.close();
    }
  });
});

describe('job settings (JOB_*)', () => {
  it('defaults, values, and problems reported together', () => {
    // No JOB_LEASE_MS: the worker's default for the engine (30 s on PostgreSQL, 3 s on SQLite).
    expect(loadConfig({}).jobs).toEqual({ concurrency: 4, leaseMs: null, maxAttempts: 10, pollMs: 200 });
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
