// The contract between job producers, handlers and the worker (DESIGN "Jobs are rows"; spec §3.1).
// Producers write their intent and call `enqueue` in the same transaction; the worker claims the
// job with a lease and runs the handler registered for its (job_type, action).
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Store } from '../db/index.js';
import type { Database } from '../db/schema.js';
import type { QueueJobRow } from '../resources/queue-jobs/queue-jobs.repository.js';

export type { NewQueueJob } from '../resources/queue-jobs/queue-jobs.repository.js';

export interface JobContext {
  job: QueueJobRow;
  /** The job's payload as enqueued (parsed JSON). */
  payload: unknown;
  /** What an earlier run of this job saved with saveProgress (parsed JSON), or null. */
  progress: unknown;
  /**
   * Persists progress so a retry or another worker resumes from it (handlers must be idempotent).
   * Pass your transaction to save it atomically with the change it describes:
   * `await store.db.transaction().execute(async (trx) => { const id = await recordChange(trx, d); await ctx.saveProgress({ changeId: id }, trx); })`.
   * Throws LeaseLostError when another worker has taken the job meanwhile, which rolls that
   * transaction back: the change then happens once, by the job's current owner.
   */
  saveProgress(progress: unknown, db?: Kysely<Database>): Promise<void>;
  store: Store;
  log: FastifyBaseLogger;
  /** Aborted when the run no longer owns the job (lease lost) or the worker stops without waiting longer. */
  signal?: AbortSignal;
}

/**
 * `done`: the change is live; the job is marked done.
 * `wait`: not live yet and nothing failed (e.g. DNS servers still applying): run again after `ms`
 * without counting an attempt.
 */
export type JobResult = { status: 'done' } | { status: 'wait'; ms: number };

/** Thrown errors are transient (retried with backoff) unless they are PermanentJobError. */
export type JobHandler = (ctx: JobContext) => Promise<JobResult>;

/** A failure no retry can fix (the object is gone, the data is invalid): the job fails at once. */
export class PermanentJobError extends Error {}

/** This run no longer owns its job (its lease expired and another worker took it): stop, change nothing. */
export class LeaseLostError extends Error {
  constructor(jobId: number) {
    super(`job ${jobId}: lease lost to another worker`);
  }
}

/** Handlers by job_type and action: `handlers.register('dns-record', 'create', fn)`. */
export class HandlerRegistry {
  private readonly map = new Map<string, JobHandler>();
  register(jobType: string, action: string, handler: JobHandler): this {
    this.map.set(`${jobType}:${action}`, handler);
    return this;
  }
  get(jobType: string, action: string): JobHandler | undefined {
    return this.map.get(`${jobType}:${action}`);
  }
}
