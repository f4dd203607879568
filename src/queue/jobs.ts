// The job vocabulary (API guide "Queue jobs"; docs/decisions/0004-provisioning-seams.md): what a
// queue_jobs row is, what a producer enqueues, and how long a done job is kept. Everything that
// enqueues, runs or shows jobs speaks these types; the HTTP view (resources/queue-jobs) only reads
// them.
import type { Selectable } from 'kysely';
import type { QueueJobsTable } from '../db/schema.js';

/** A job's `job_type`: the JSON:API type of the object it changes (`dns-record`); the queue knows none by name. */
export type JobType = string;
/**
 * create, update and delete change the object a client asked for (API guide "Queue jobs");
 * `refresh` (measure usage), `schedule` (apply dates that were reached) and `purge` (delete what
 * expired) are scheduled jobs of the system (their definition's `every`), enqueued without a
 * customer, so no client ever sees them.
 */
export type JobAction = 'create' | 'update' | 'delete' | 'refresh' | 'schedule' | 'purge';
/** `failed` is our extension for jobs that exhausted their retries (API guide "Queue jobs"). */
export type JobStatus = 'pending' | 'done' | 'failed';

/**
 * Finished jobs retention (API guide "Queue jobs"): a done job is gone 24 h after `finished_at`.
 */
export const DONE_JOB_RETENTION_MS = 24 * 60 * 60 * 1000;

export type QueueJobRow = Selectable<QueueJobsTable>;


/**
 * Which jobs a worker claims: the general ones (queue null) unless `general` is false, and those
 * of the named queues: `{ general: true, named: [] }` for the usual worker, `{ general: false,
 * named: ['web:web1'] }` for `hostplane worker --web-server web1`.
 */
export interface QueueSelection {
  general: boolean;
  named: string[];
}

export interface NewQueueJob {
  /** The owning customer (relationships.owner); null only for jobs nobody may see. */
  customerId: number | null;
  jobType: JobType;
  action: JobAction;
  /** Id of the object created or changed (links.object); jobs on one object run in enqueue order. */
  objectId: string | null;
  /** What the job's run needs; stored as JSON, never shown, checked against the job's payload schema. */
  payload?: unknown;
  /** `web:<server>` for work only that web server's worker can do (docs/decisions/0008-web-servers.md); default null: any worker. */
  queue?: string | null;
  /** Started from the customer menu / operator CLI: never listed (API guide "Queue jobs"). */
  fromMenu?: boolean;
  /**
   * The object was created in the same transaction, so no older job on it can be pending: a
   * worker of this process with a free slot may take the job as it is stored, without a claim
   * (withJobs, src/queue/enqueue.ts). Ignored for jobs not runnable at once.
   */
  fresh?: boolean;
  /**
   * With `fresh`: what the enqueueing transaction wrote or read of the job's object, handed in
   * memory to the run that a worker of this process starts at commit (JobContext.prefetched), so
   * that run need not read it back. Never stored: any other run of the job reads the store.
   */
  prefetched?: unknown;
  /** The API token whose request enqueues it (withJobs' `by`): a limited token sees only these (API guide "Scoped tokens"). */
  tokenId?: number | null;
  /** Set by withJobs when a worker of this process takes the job as it is stored: its lease. */
  lease?: { owner: string; until: string };
  /** Defaults: a pending job created now, runnable at once. Tests set finished states directly. */
  status?: JobStatus;
  error?: string | null;
  createdAt?: string;
  finishedAt?: string | null;
  runAfter?: string;
}
