// Jobs whose worker stops answering (API guide "Queue jobs"; docs/decisions/0005-dead-workers.md):
// a hung worker's job taken over when its lease runs out, a dead worker's job taken over without
// waiting out a long lease (PostgreSQL: its session lock; SQLite: its short lease), and a job
// whose workers keep dying. On PostgreSQL also: a worker without its own lock judges nobody, a lock
// free at one look only keeps its jobs, and a lock connection that dies silently is found by the
// liveness check. The worker's other rules: worker.test.ts.
import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { FREE_FOR_MS } from '../../src/queue/dead-workers.js';
import { DEFAULT_LEASE_MS, Worker } from '../../src/queue/worker.js';
import { LeaseLostError } from '../../src/queue/types.js';
import { ENGINES } from '../helpers/app.js';
import { TestJobs, testDrivers } from '../helpers/jobs.js';
import { capturedLog, log, useQueue } from '../helpers/queue.js';
import { sleep, waitFor } from '../helpers/wait.js';

describe.each(ENGINES)('job queue on %s', (engine) => {
  const { store, workers, secondStore, startWorker, keepAlive, lockHolder, takeLock, silentProxy, enqueue, row, settled } = useQueue(engine);

  it("a hung worker (alive, silent) loses its job when its lease runs out; another worker finishes it; the late run changes nothing", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const effects: string[] = [];
    let leaseLost: unknown;
    let signalAborted = false;
    let aRunning!: () => void;
    const aStarted = new Promise<void>((r) => (aRunning = r));
    const stuck = new TestJobs().register('dns-record', 'create', async (ctx) => {
      aRunning();
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
    // Wait until A's handler runs: a job claimed while stop() begins is handed back at once
    // (lease cleared), which is not the case under test here.
    await aStarted;
    // A hangs: no more heartbeats, its run is abandoned, but (PostgreSQL) its session lives on.
    await a.stop({ graceMs: 0 });
    await keepAlive(a.id);
    const lastLease = Date.parse((await row(id)).lease_until!);
    let bStarted = 0;
    const healthy = new TestJobs().register('dns-record', 'create', async (ctx) => {
      bStarted = Date.now();
      await ctx.saveProgress({ by: 'b' });
      effects.push('b');
      return { status: 'done' };
    });
    const b = new Worker({ store: await secondStore(), jobs: healthy, drivers: testDrivers(store), log, pollMs: 20, leaseMs: 5_000 });
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

  it("a dead worker's job is taken over without waiting out a long lease (PostgreSQL: its session lock is free; SQLite: its short lease ran out)", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let aRunning!: () => void;
    const aStarted = new Promise<void>((r) => (aRunning = r));
    const dying = new TestJobs().register('dns-record', 'create', async () => {
      aRunning();
      await gate;
      return { status: 'done' };
    });
    // Both workers with the engine's default lease (30 s on PostgreSQL, 3 s on SQLite).
    const a = await startWorker(dying, { leaseMs: undefined });
    const id = await enqueue();
    await aStarted;
    expect((await row(id)).lease_owner!.startsWith(`${a.id}#`)).toBe(true);
    // A dies mid-run: its heartbeats stop and (PostgreSQL) its lock connection closes, as when its
    // process is killed (test/queue/crash.test.ts does that with SIGKILL).
    await a.stop({ graceMs: 0 });
    const diedAt = Date.now();
    const aLease = Date.parse((await row(id)).lease_until!);
    let bStarted = 0;
    let bLeaseOwner = '';
    const healthy = new TestJobs().register('dns-record', 'create', async (ctx) => {
      bStarted = Date.now();
      bLeaseOwner = ctx.job.lease_owner!;
      return { status: 'done' };
    });
    const b = new Worker({ store: await secondStore(), jobs: healthy, drivers: testDrivers(store), log, pollMs: 20 });
    workers.push(b);
    await b.start();
    const r = await settled(id);
    if (engine === 'postgres') {
      // A's session lock was free: B took the job long before A's lease would have run out.
      expect(aLease - diedAt).toBeGreaterThan(DEFAULT_LEASE_MS.leaseOnly);
      expect(bStarted).toBeLessThan(aLease);
    } else {
      // Nothing but the lease tells B that A is gone, and the lease is short: it ended at most
      // 3 s after A's last heartbeat, and B waited for it.
      expect(aLease).toBeLessThanOrEqual(diedAt + DEFAULT_LEASE_MS.leaseOnly);
      expect(bStarted).toBeGreaterThanOrEqual(aLease);
    }
    expect(bLeaseOwner.startsWith(`${b.id}#`)).toBe(true);
    // The take-over counts an attempt; A's late `done` changes nothing.
    expect(r).toMatchObject({ status: 'done', attempts: 1, lease_owner: null });
    release();
    await sleep(50);
    expect(await row(id)).toEqual(r);
  });

  // PostgreSQL only: SQLite workers hold no session.
  if (engine === 'postgres') it('a worker whose session breaks takes its lock again and goes on claiming', async () => {
    const by: string[] = [];
    const handlers = new TestJobs().register('dns-record', 'create', async (ctx) => {
      by.push(ctx.job.lease_owner!.split('#')[0]);
      return { status: 'done' };
    });
    const a = await startWorker(handlers);
    const first = await lockHolder(a.id);
    expect(first).toBeGreaterThan(0);
    // The server ends A's lock session, as a database restart or a cut connection would.
    await sql`select pg_terminate_backend(${first})`.execute(store.db);
    await waitFor('lock taken again', async () => {
      const holder = await lockHolder(a.id);
      return holder !== undefined && holder !== first;
    });
    const id = await enqueue();
    expect(await settled(id)).toMatchObject({ status: 'done', attempts: 0 });
    expect(by).toEqual([a.id]);
  });

  /** Puts job `id` under the lease of worker `workerId` for a minute, as that worker's claim would; returns the lease. */
  async function leaseTo(id: number, workerId: string) {
    const lease = { lease_owner: `${workerId}#1`, lease_until: new Date(Date.now() + 60_000).toISOString() };
    await store.db.updateTable('queue_jobs').set(lease).where('id', '=', id).execute();
    return lease;
  }

  // PostgreSQL only, like the session lock. Workers here look every 20 ms (deadWorkerCheckMs) and log what they see.
  if (engine === 'postgres') it("a worker without its own lock (as after a database restart) takes over nobody's jobs until it has the lock back", async () => {
    const by: string[] = [];
    const handlers = new TestJobs().register('dns-record', 'create', async (ctx) => {
      by.push(ctx.job.lease_owner!.split('#')[0]);
      return { status: 'done' };
    });
    const { log: captured, records } = capturedLog();
    const a = await startWorker(handlers, { log: captured, deadWorkerCheckMs: 20 });
    // A lives on, but the test holds its lock: it cannot tell whether it is the one cut off.
    const giveBack = await takeLock(a.id);
    // A job of a worker that is gone: nobody holds its lock.
    const id = await enqueue({}, false);
    const lease = await leaseTo(id, 'gone:1:000000');
    const skipped = () => records.filter((r) => r.msg.startsWith('not looking for dead workers')).length;
    const before = skipped();
    // Looks 20 ms apart or more, over a longer time than a lock must stay free to count as gone.
    const looks = Math.ceil(FREE_FOR_MS / 20) + 10;
    await waitFor(`${looks} looks without its own lock`, async () => skipped() >= before + looks);
    expect(await row(id)).toMatchObject({ status: 'pending', attempts: 0, ...lease });
    expect(by).toEqual([]);
    // With its lock back, A finds the job's worker gone and takes the job over.
    await giveBack();
    expect(await settled(id)).toMatchObject({ status: 'done', attempts: 1, lease_owner: null });
    expect(by).toEqual([a.id]);
  });

  if (engine === 'postgres') it('a worker whose lock is free at one look and held again at the next (its connection broke and came back) keeps its jobs', async () => {
    let runs = 0;
    const handlers = new TestJobs().register('dns-record', 'create', async () => {
      runs++;
      return { status: 'done' };
    });
    const owner = 'blip:1:000000';
    const id = await enqueue({}, false);
    const lease = await leaseTo(id, owner);
    const { log: captured, records } = capturedLog();
    await startWorker(handlers, { log: captured, deadWorkerCheckMs: 20 });
    const said = (msg: string) => records.filter((r) => r.msg.startsWith(msg) && (r.workers as string[]).includes(owner)).length;
    const FREE = 'workers with running jobs whose lock is free';
    await waitFor("the owner's lock found free", async () => said(FREE) === 1);
    // Ten more looks find it free; then the owner takes its lock again, well before a look 1.5 s
    // (FREE_FOR_MS) after the first would count.
    await sleep(10 * 20);
    const release = await keepAlive(owner);
    await waitFor('the lock seen held again', async () => said('workers whose lock was free hold it again') === 1);
    expect(await row(id)).toMatchObject({ status: 'pending', attempts: 0, ...lease });
    expect(runs).toBe(0);
    // Free for good now: found free anew (the first sighting was forgotten), then taken over.
    await release();
    expect(await settled(id)).toMatchObject({ status: 'done', attempts: 1, lease_owner: null });
    expect(runs).toBe(1);
    expect(said(FREE)).toBe(2);
  });

  if (engine === 'postgres') it('a lock connection that dies without a word (a NAT, a failover) is found by the liveness check; the worker claims nothing until it holds its lock again', async () => {
    const proxy = await silentProxy();
    const proxied = await secondStore(proxy.url);
    let holderAtRun: number | undefined;
    const handlers = new TestJobs().register('dns-record', 'create', async (ctx) => {
      holderAtRun = await lockHolder(ctx.job.lease_owner!.split('#')[0]);
      return { status: 'done' };
    });
    const { log: captured, records } = capturedLog();
    const a = await startWorker(handlers, { store: proxied, drivers: testDrivers(proxied), log: captured, deadWorkerCheckMs: 20 });
    const first = (await lockHolder(a.id))!;
    expect(first).toBeGreaterThan(0);
    // The server ends A's lock session and frees the lock; A's side of the connection hears nothing.
    await proxy.silence(first);
    await sql`select pg_terminate_backend(${first})`.execute(store.db);
    const lost = await waitFor('the lost lock noticed', async () => records.find((r) => r.msg.startsWith('lost the session that shows this worker alive')), 15_000);
    // Noticed by the liveness check's unanswered round trip, not by a closed connection.
    expect((lost.err as { message: string }).message).toBe('the session lock connection gave no answer within 5000 ms');
    const id = await enqueue();
    expect(await settled(id)).toMatchObject({ status: 'done', attempts: 0 });
    // A claimed it holding its lock again, on a new connection.
    expect(holderAtRun).toBeGreaterThan(0);
    expect(holderAtRun).not.toBe(first);
  });

  it('a job whose workers keep dying ends failed after JOB_MAX_ATTEMPTS take-overs', async () => {
    const handlers = new TestJobs().register('dns-record', 'create', async () => ({ status: 'done' }));
    const id = await enqueue({}, false);
    // A dead worker's claim: lease expired, already taken over twice.
    await store.db.updateTable('queue_jobs').set({ lease_owner: 'dead:1:000000#1', lease_until: new Date(Date.now() - 1).toISOString(), attempts: 2 }).where('id', '=', id).execute();
    await startWorker(handlers, { maxAttempts: 3 });
    expect(await settled(id)).toMatchObject({ status: 'failed', attempts: 3, error: 'abandoned by workers 3 times (crash or timeout)' });
  });
});
