// Waking workers when a job is enqueued (docs/operator-guide.md "The worker"). Polling alone would
// put JOB_POLL_MS between a POST and its effect; a wake-up makes the worker claim at once.
//
// - Same Store (serve runs API and worker together): the Store's in-process signals
//   (src/db/signals.ts). Two Stores on one database in one process are two processes here.
// - PostgreSQL, other Stores: `NOTIFY hostplane_jobs`; every worker LISTENs (listen.ts). The
//   payload is the schema, so deployments sharing one database (`?schema=`) do not wake each
//   other's workers, and the sending Store's tag, so its own workers (woken already) skip it.
// - SQLite, other processes: nothing to send; those workers find the job by polling.
// A lost wake-up is never a lost job: polling finds every due job anyway.
import type { Store } from '../db/index.js';
import { notifySchema } from '../db/dialect.js';
import type { NewQueueJob, QueueJobRow } from './jobs.js';

/** The PostgreSQL channel workers LISTEN on. */
export const JOBS_CHANNEL = 'hostplane_jobs';

/** The in-process signals (Store.signals): a job was enqueued; a fresh job looks for a slot. */
const ENQUEUED = 'jobs';
const FRESH = 'jobs.fresh';

/**
 * Whether a notification `payload` (`<schema>` or `<schema> <tag>`) should wake a worker of
 * `schema` on the Store whose signals carry `tag`: not when that Store sent it.
 */
export const wakesUs = (payload: string, schema: string, tag: string): boolean =>
  payload === schema || (payload.startsWith(`${schema} `) && payload !== `${schema} ${tag}`);

/**
 * A worker's slot for a job of an enqueueing transaction (reservations.ts): the lease to store the
 * job with, and `hand`, called once when the transaction has ended, with the stored row (committed)
 * or null (rolled back, or the job was not stored), and the job's `prefetched` (NewQueueJob).
 */
export interface Reservation {
  owner: string;
  until: string;
  hand(row: QueueJobRow | null, prefetched?: unknown): void;
}

type Taker = (job: NewQueueJob) => Reservation | null;

/** A slot for `job` in a worker on this Store, or null (withJobs asks). */
export function reserveLocally(store: Store, job: NewQueueJob): Reservation | null {
  for (const take of store.signals.listeners<NewQueueJob>(FRESH)) {
    const r = take(job) as Reservation | null;
    if (r) return r;
  }
  return null;
}

/** In-process offer of fresh jobs, used by the worker; returns the unsubscribe function. */
export function onFreshJob(store: Store, take: Taker): () => void {
  return store.signals.on<NewQueueJob>(FRESH, take);
}

/**
 * Wakes the workers of `store`'s database; call it after the transaction that inserted the job
 * has committed (a worker woken earlier would not see the job yet). withJobs does this for you.
 * Never throws: a failed NOTIFY only means the job waits for the next poll.
 */
export async function notifyEnqueued(store: Store): Promise<void> {
  store.signals.emit(ENQUEUED);
  try {
    await notifySchema(store.db, JOBS_CHANNEL, store.signals.tag);
  } catch {
    // Polling covers it.
  }
}

/** In-process subscription used by the worker; returns the unsubscribe function. */
export function onEnqueued(store: Store, wake: () => void): () => void {
  return store.signals.on(ENQUEUED, () => wake());
}
