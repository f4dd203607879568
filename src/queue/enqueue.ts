// The one way to enqueue (API guide "Queue jobs"; docs/decisions/0004-provisioning-seams.md): the
// intent and its job are written in one transaction, and the workers are woken only after it
// commits.
import type { Kysely } from 'kysely';
import type { Store } from '../db/index.js';
import type { Database } from '../db/schema.js';
import type { NewQueueJob, QueueJobRow } from './jobs.js';
import { notifyEnqueued, reserveLocally, type Reservation } from './wakeups.js';
import { QueueRepository, type JobKey, type ObjectInsert } from './queue.repository.js';

/** Enqueues in the transaction it was handed with (withJobs). */
export interface Enqueue {
  /** Inserts a job and returns the job's row as stored. */
  (job: NewQueueJob): Promise<QueueJobRow>;
  /**
   * Stores an object and its job together: `insert` is the object's INSERT … RETURNING (one row or
   * none), built by the object's repository; the job's object_id becomes the new row's id. One
   * statement on PostgreSQL. Undefined, and nothing enqueued, when `insert` stored no row.
   * `prefetch(row)` is what the run of a fresh job gets in memory (NewQueueJob.prefetched):
   * `const r = await enqueue.withObject(job, repo.nextInsert(d), (row) => ({ row, server }))`.
   */
  withObject<R extends { id: number }>(job: NewQueueJob, insert: ObjectInsert<R>, prefetch?: (row: R) => unknown): Promise<{ row: R; job: QueueJobRow } | undefined>;
  /**
   * The job a repeated request answers. When `underway` (the object is already in the state this
   * request would put it in), the newest job of `key` unless it failed; otherwise, or when there is
   * none, `start()`: `return enqueue.unlessStanding(row.state === 'deleting', { jobType, action: 'delete', objectId }, () => …)`.
   */
  unlessStanding(underway: boolean, key: JobKey, start: () => Promise<QueueJobRow>): Promise<QueueJobRow>;
}

/**
 * Runs `work` in one transaction of `store`; the jobs it enqueues commit (or roll back) with its
 * writes, and the workers are woken once it has committed:
 * `const job = await withJobs(store, async (trx, enqueue) => { const id = await repo(trx).insert(…);
 *  return enqueue({ customerId, jobType: 'database', action: 'create', objectId: String(id), payload }) })`.
 * A transaction that enqueued nothing wakes nobody. `by` is the API caller whose request this is:
 * its token is noted on every job (a limited token sees only its own jobs, API guide "Scoped tokens").
 *
 * A `fresh` job goes to a worker of this process with a free slot, already leased, and runs at
 * commit (docs/decisions/0010-fresh-jobs.md).
 */
export async function withJobs<T>(store: Store, work: (trx: Kysely<Database>, enqueue: Enqueue) => Promise<T>, by?: { tokenId: number | null }): Promise<T> {
  let enqueued = 0;
  const taken: { slot: Reservation; row: QueueJobRow | null; prefetched: unknown }[] = [];
  let result: T;
  try {
    result = await store.db.transaction().execute((trx) => {
      const queue = new QueueRepository(trx);
      // A fresh job that a worker of this process has a slot for is stored leased to it.
      const through = async <R>(given: NewQueueJob, write: (stored: NewQueueJob) => Promise<{ job: QueueJobRow; prefetched?: unknown } | undefined>) => {
        const job = by?.tokenId ? { ...given, tokenId: by.tokenId } : given;
        const slot = job.fresh && job.runAfter === undefined && (job.status ?? 'pending') === 'pending' ? reserveLocally(store, job) : null;
        if (!slot) {
          const r = await write(job);
          if (r) enqueued++;
          return r as R;
        }
        // Pushed before the write: a write that fails still frees the slot (below).
        const entry = { slot, row: null as QueueJobRow | null, prefetched: job.prefetched };
        taken.push(entry);
        const r = await write({ ...job, lease: { owner: slot.owner, until: slot.until } });
        entry.row = r?.job ?? null;
        if (r?.prefetched !== undefined) entry.prefetched = r.prefetched;
        return r as R;
      };
      const enqueue: Enqueue = Object.assign(async (job: NewQueueJob) => (await through<{ job: QueueJobRow }>(job, async (stored) => ({ job: await queue.insert(stored) }))).job, {
        withObject: <R extends { id: number }>(job: NewQueueJob, insert: ObjectInsert<R>, prefetch?: (row: R) => unknown) =>
          through<{ row: R; job: QueueJobRow } | undefined>(job, async (stored) => {
            const r = await queue.insertWithObject(stored, insert);
            return r && { ...r, prefetched: prefetch?.(r.row) };
          }),
        unlessStanding: async (underway: boolean, key: JobKey, start: () => Promise<QueueJobRow>) =>
          (underway && (await queue.standingJobFor(key.jobType, key.action, key.objectId))) || start(),
      });
      return work(trx, enqueue);
    });
  } catch (err) {
    for (const t of taken) t.slot.hand(null);
    throw err;
  }
  for (const t of taken) t.slot.hand(t.row, t.prefetched);
  // Not awaited: the in-process wake-up happens at once, the NOTIFY needs no answer, and the
  // response should not wait for it (a lost wake-up only means the next poll finds the job).
  if (enqueued) void notifyEnqueued(store);
  // One turn of the event loop lets a handed job's first statement go out before the answer is
  // rendered (docs/decisions/0010-fresh-jobs.md).
  if (taken.some((t) => t.row)) await new Promise((resolve) => setImmediate(resolve));
  return result;
}
