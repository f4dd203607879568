// Waking workers when a job is enqueued (DESIGN "Jobs are rows"; spec §3.1). Polling alone would
// put JOB_POLL_MS between a POST and its effect; a wake-up makes the worker claim at once.
//
// - Same process (serve runs API and worker together): an in-memory signal per database.
// - PostgreSQL, other processes: `NOTIFY hostplane_jobs`; every worker LISTENs (worker.ts).
//   The payload is the schema, so deployments sharing one database (`?schema=`) do not wake
//   each other's workers.
// - SQLite, other processes: nothing to send; those workers find the job by polling.
// A lost wake-up is never a lost job: polling finds every due job anyway.
import type { Store } from '../db/index.js';
import { notifySchema } from '../db/dialect.js';
import type { NewQueueJob, QueueJobRow } from './jobs.js';

/** The PostgreSQL channel workers LISTEN on. */
export const JOBS_CHANNEL = 'hostplane_jobs';

/**
 * This process, in the payload of its NOTIFYs (`<schema> <tag>`): its own workers were woken in
 * memory already, so they skip their own notification instead of claiming a second time.
 */
export const PROCESS_TAG = `${process.pid}-${Math.random().toString(36).slice(2, 8)}`;

/** Whether a notification `payload` should wake a worker of `schema` in this process. */
export const wakesUs = (payload: string, schema: string): boolean => payload === schema || (payload.startsWith(`${schema} `) && payload !== `${schema} ${PROCESS_TAG}`);

// Keyed by Store.where (file path, or server + database + schema): two Store objects on the same
// database in one process wake each other too.
const local = new Map<string, Set<() => void>>();

/**
 * A worker's slot for a job of an enqueueing transaction (Worker.reserve): the lease to store the
 * job with, and `hand`, called once when the transaction has ended, with the stored row (committed)
 * or null (rolled back, or the job was not stored), and the job's `prefetched` (NewQueueJob).
 */
export interface Reservation {
  owner: string;
  until: string;
  hand(row: QueueJobRow | null, prefetched?: unknown): void;
}

type Taker = (job: NewQueueJob) => Reservation | null;
const takers = new Map<string, Set<Taker>>();

/** A slot for `job` in a worker of this process on `store`'s database, or null (withJobs asks). */
export function reserveLocally(store: Store, job: NewQueueJob): Reservation | null {
  for (const take of takers.get(store.where) ?? []) {
    const r = take(job);
    if (r) return r;
  }
  return null;
}

/** In-process offer of fresh jobs, used by the worker; returns the unsubscribe function. */
export function onFreshJob(store: Store, take: Taker): () => void {
  let set = takers.get(store.where);
  if (!set) takers.set(store.where, (set = new Set()));
  set.add(take);
  return () => {
    set.delete(take);
    if (!set.size && takers.get(store.where) === set) takers.delete(store.where);
  };
}

/**
 * Wakes the workers of `store`'s database; call it after the transaction that inserted the job
 * has committed (a worker woken earlier would not see the job yet). withJobs does this for you.
 * Never throws: a failed NOTIFY only means the job waits for the next poll.
 */
export async function notifyEnqueued(store: Store): Promise<void> {
  for (const wake of local.get(store.where) ?? []) wake();
  try {
    await notifySchema(store.db, JOBS_CHANNEL, PROCESS_TAG);
  } catch {
    // Polling covers it.
  }
}

/** In-process subscription used by the worker; returns the unsubscribe function. */
export function onEnqueued(store: Store, wake: () => void): () => void {
  let set = local.get(store.where);
  if (!set) local.set(store.where, (set = new Set()));
  set.add(wake);
  return () => {
    set.delete(wake);
    if (!set.size && local.get(store.where) === set) local.delete(store.where);
  };
}
