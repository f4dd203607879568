// The one way to enqueue (DESIGN "Jobs are rows"; spec §3.1): the intent and its job are written in
// one transaction, and the workers are woken only after it commits.
import type { Kysely } from 'kysely';
import type { Store } from '../db/index.js';
import type { Database } from '../db/schema.js';
import type { NewQueueJob, QueueJobRow } from './jobs.js';
import { notifyEnqueued } from './notify.js';
import { QueueRepository } from './queue.repository.js';

/** Inserts a job in the transaction it was handed with and returns the job's row as stored. */
export type Enqueue = (job: NewQueueJob) => Promise<QueueJobRow>;

/**
 * Runs `work` in one transaction of `store`; the jobs it enqueues commit (or roll back) with its
 * writes, and the workers are woken once it has committed:
 * `const job = await withJobs(store, async (trx, enqueue) => { const id = await repo(trx).insert(…);
 *  return enqueue({ customerId, jobType: 'database', action: 'create', objectId: String(id), payload }) })`.
 * A transaction that enqueued nothing wakes nobody.
 */
export async function withJobs<T>(store: Store, work: (trx: Kysely<Database>, enqueue: Enqueue) => Promise<T>): Promise<T> {
  let enqueued = 0;
  const result = await store.db.transaction().execute((trx) =>
    work(trx, (job) => {
      enqueued++;
      return new QueueRepository(trx).insert(job);
    }),
  );
  // Not awaited: the in-process wake-up happens at once, the NOTIFY needs no answer, and the
  // response should not wait for it (a lost wake-up only means the next poll finds the job).
  if (enqueued) void notifyEnqueued(store);
  return result;
}
