// Fresh jobs (src/queue/enqueue.ts withJobs, src/queue/reservations.ts): a job whose object is created in the
// enqueueing transaction is stored already leased to a worker of the same process that has a free
// slot, and runs when the transaction commits, without a claim. Otherwise (rolled back, no slot,
// another queue, a worker stopping) everything is as for any other job.
import { describe, expect, it, vi } from 'vitest';
import { withJobs } from '../../src/queue/enqueue.js';
import { QueueRepository } from '../../src/queue/queue.repository.js';
import type { NewQueueJob } from '../../src/queue/jobs.js';
import { ENGINES } from '../helpers/app.js';
import { TestJobs } from '../helpers/jobs.js';
import { useQueue } from '../helpers/queue.js';
import { sleep } from '../helpers/wait.js';

const fresh = (objectId: string, more: Partial<NewQueueJob> = {}): NewQueueJob => ({ customerId: null, jobType: 'dns-record', action: 'create', objectId, fresh: true, ...more });

describe.each(ENGINES)('fresh jobs on %s', (engine) => {
  const { store, startWorker, row, settled, enqueue } = useQueue(engine);
  /** Polls and NOTIFY out of the way: only a hand-over can start a job quickly. */
  const quiet = { pollMs: 60_000, listen: false };
  /**
   * A claim on its way counts against the slots (it may bring back jobs): let the worker's claims
   * at start, after a job and after a freed slot finish before a test expects a slot.
   */
  const idle = () => sleep(100);

  it('a fresh job is stored leased to this process\'s worker and runs at commit, without a claim', async () => {
    const runs: { id: number; owner: string | null; claimsBefore: number }[] = [];
    const w = await startWorker(new TestJobs().register('dns-record', 'create', async (ctx) => {
      runs.push({ id: ctx.job.id, owner: ctx.job.lease_owner, claimsBefore: claims.mock.calls.length });
      return { status: 'done' };
    }), quiet);
    await idle();
    const claims = vi.spyOn(QueueRepository.prototype, 'claim');
    try {
      const job = await withJobs(store, (_trx, enqueue) => enqueue(fresh('11')));
      expect(job.lease_owner).toMatch(new RegExp(`^${w.id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}#`));
      expect(job.lease_until).not.toBeNull();
      expect(await settled(job.id)).toMatchObject({ status: 'done', attempts: 0, lease_owner: null });
      // (After the run the worker looks for more work, as after every job.)
      expect(runs).toEqual([{ id: job.id, owner: job.lease_owner, claimsBefore: 0 }]);
    } finally {
      claims.mockRestore();
    }
  });

  it('a rolled-back transaction frees the slot; a job without `fresh` is claimed as before', async () => {
    await startWorker(new TestJobs().register('dns-record', 'create', async () => ({ status: 'done' })), { concurrency: 1, ...quiet });
    await idle();
    await expect(
      withJobs(store, async (_trx, enqueue) => {
        await enqueue(fresh('21'));
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await store.db.selectFrom('queue_jobs').selectAll().execute()).toEqual([]);
    await idle();
    const taken = await withJobs(store, (_trx, enqueue) => enqueue(fresh('22')));
    expect(taken.lease_owner).not.toBeNull();
    const plain = await withJobs(store, (_trx, enqueue) => enqueue({ ...fresh('23'), fresh: undefined }));
    expect(plain.lease_owner).toBeNull();
    expect(await settled(taken.id)).toMatchObject({ status: 'done' });
    expect(await settled(plain.id)).toMatchObject({ status: 'done' });
  });

  it('the run at commit gets the job\'s `prefetched` in memory; it is not stored, and a claimed run has none', async () => {
    const seen: unknown[] = [];
    await startWorker(new TestJobs().register('dns-record', 'create', async (ctx) => {
      seen.push(ctx.prefetched);
      return { status: 'done' };
    }), quiet);
    await idle();
    const handed = await withJobs(store, (_trx, enqueue) => enqueue(fresh('61', { prefetched: { name: 'from-the-transaction' } })));
    expect(await settled(handed.id)).toMatchObject({ status: 'done' });
    expect(JSON.stringify(await row(handed.id))).not.toContain('from-the-transaction');
    await idle();
    // Not fresh: claimed (woken in this process), so no hand-over and nothing prefetched.
    const claimed = await withJobs(store, (_trx, enqueue) => enqueue({ ...fresh('62', { prefetched: { name: 'never-handed' } }), fresh: undefined }));
    expect(claimed.lease_owner).toBeNull();
    expect(await settled(claimed.id)).toMatchObject({ status: 'done' });
    expect(seen).toEqual([{ name: 'from-the-transaction' }, undefined]);
  });

  it('no free slot, another queue, or a later run_after: stored unleased and claimed as any job', async () => {
    let release!: () => void;
    const blocked = new Promise<void>((r) => (release = r));
    await startWorker(new TestJobs().register('dns-record', 'create', async (ctx) => {
      if (ctx.job.object_id === '31') await blocked;
      return { status: 'done' };
    }), { concurrency: 1, pollMs: 20 });
    const busy = await enqueue({ objectId: '31' });
    await sleep(100);
    expect((await row(busy)).lease_owner).not.toBeNull();
    const full = await withJobs(store, (_trx, enqueue) => enqueue(fresh('32')));
    const web = await withJobs(store, (_trx, enqueue) => enqueue(fresh('33', { queue: 'web:web9' })));
    const later = await withJobs(store, (_trx, enqueue) => enqueue(fresh('34', { runAfter: new Date(Date.now() + 200).toISOString() })));
    for (const j of [full, web, later]) expect(j.lease_owner).toBeNull();
    release();
    expect(await settled(full.id)).toMatchObject({ status: 'done' });
    expect(await settled(later.id)).toMatchObject({ status: 'done' });
    expect((await row(web.id)).status).toBe('pending'); // no worker of web9
  });

  it('a worker that begins stopping before the commit gives the job back at once; another worker runs it', async () => {
    const jobs = new TestJobs().register('dns-record', 'create', async () => ({ status: 'done' }));
    const w = await startWorker(jobs, quiet);
    await idle();
    let stopped: Promise<void> | undefined;
    const job = await withJobs(store, async (_trx, enqueue) => {
      const j = await enqueue(fresh('41'));
      stopped = w.stop({ graceMs: 0 });
      return j;
    });
    expect(job.lease_owner).not.toBeNull();
    await stopped;
    await sleep(50);
    expect(await row(job.id)).toMatchObject({ status: 'pending', lease_owner: null, lease_until: null, attempts: 0 });
    await startWorker(jobs, { pollMs: 20 });
    expect(await settled(job.id)).toMatchObject({ status: 'done', attempts: 0 });
  });

  it('never more jobs at once than the concurrency, with fresh jobs and claims together', async () => {
    let running = 0;
    let most = 0;
    await startWorker(new TestJobs().register('dns-record', 'create', async () => {
      most = Math.max(most, ++running);
      await sleep(30);
      running--;
      return { status: 'done' };
    }), { concurrency: 2, pollMs: 5 });
    const ids: number[] = [];
    for (let i = 0; i < 12; i++) {
      ids.push((await withJobs(store, (_trx, enqueue) => enqueue(fresh(`5${i}`)))).id);
      ids.push(await enqueue({ objectId: `6${i}` }));
    }
    for (const id of ids) expect(await settled(id)).toMatchObject({ status: 'done' });
    expect(most).toBeLessThanOrEqual(2);
  });
});
