// The contract between job producers, job definitions and the worker (API guide "Queue jobs";
// docs/decisions/0004-provisioning-seams.md). Producers write their intent and enqueue in the same
// transaction (withJobs); the worker claims the job with a lease, checks its payload against the
// job's schema and runs it.
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import { Type, type Static, type TSchema } from 'typebox';
import type { Store } from '../db/index.js';
import type { Database } from '../db/schema.js';
import type { JobAction, JobType, QueueJobRow } from './jobs.js';
import { parseNumericId } from '../db/ids.js';
import { PermanentJobError } from '../errors.js';

export interface JobContext<P = unknown, D = unknown> {
  job: QueueJobRow;
  /** The job's payload as enqueued (parsed JSON), already checked against the definition's schema. */
  payload: P;
  /** What an earlier run of this job saved with saveProgress (parsed JSON), or null. */
  progress: unknown;
  /**
   * Persists progress so a retry or another worker resumes from it (runs must be idempotent).
   * Pass your transaction to save it atomically with the change it describes:
   * `await store.db.transaction().execute(async (trx) => { const id = await recordChange(trx, d); await ctx.saveProgress({ changeId: id }, trx); })`.
   * Throws LeaseLostError when another worker has taken the job meanwhile, which rolls that
   * transaction back: the change then happens once, by the job's current owner.
   */
  saveProgress(progress: unknown, db?: Kysely<Database>): Promise<void>;
  store: Store;
  /** The backends, built once per process and handed to every run (the resources': src/provisioning/drivers.ts). */
  drivers: D;
  log: FastifyBaseLogger;
  /** Aborted when the run no longer owns the job (lease lost) or the worker stops without waiting longer. */
  signal?: AbortSignal;
  /**
   * Only in the run a fresh job gets at commit in the enqueueing process: what that transaction
   * wrote or read of the job's object (NewQueueJob.prefetched), as it committed. Undefined in
   * every other run (a retry, another worker's claim): read the store then.
   */
  prefetched?: unknown;
}

/**
 * `done`: the change is live; the job is marked done.
 * `wait`: not live yet and nothing failed (e.g. DNS servers still applying): run again after `ms`
 * without counting an attempt.
 */
export type JobResult = { status: 'done' } | { status: 'wait'; ms: number };

/** The result of a run whose change is live. */
export const DONE: JobResult = { status: 'done' };

/** The id of the object a job acts on; a job without one fails at once: `const id = objectIdOf(ctx.job)`. */
export function objectIdOf(job: Pick<QueueJobRow, 'id' | 'job_type' | 'object_id'>): number {
  const id = job.object_id === null ? null : parseNumericId(job.object_id);
  if (id === null) throw new PermanentJobError(`job ${job.id} has no ${job.job_type} to act on`);
  return id;
}

/**
 * One kind of job: what it acts on, the shape of its payload, and how it runs. Thrown errors are
 * transient (retried with backoff) unless they are PermanentJobError.
 */
export interface JobDefinition<S extends TSchema = TSchema, D = any> {
  type: JobType;
  action: JobAction;
  /** The payload every job of this kind carries; a job whose payload does not fit fails at once. */
  payload: S;
  /**
   * Scheduled: the workers enqueue one job of this kind (empty payload, no customer, no object)
   * every `every` ms, the first when a worker first starts (src/queue/queue.repository.ts scheduleDue).
   */
  every?: number;
  run(ctx: JobContext<Static<S>, D>): Promise<JobResult>;
}

/**
 * Types a job definition from its payload schema:
 * `defineJob({ type: 'dns-record', action: 'create', payload: Type.Object({ domain: Type.String() }), run: async (ctx) => … ctx.payload.domain … })`.
 */
export const defineJob = <S extends TSchema, D>(definition: JobDefinition<S, D>): JobDefinition<S, D> => definition;

export { PermanentJobError };

/**
 * A scheduled job that deletes what has expired, once an hour on one worker of the deployment:
 * `purgeJob('idempotency-key', 'schedule', 'expired idempotency keys', (ctx) => repo(ctx).purge(nowIso()))`.
 * Rows past their end are refused on use at once; the purge only keeps their tables small.
 */
export const purgeJob = <D = any>(type: JobType, action: JobAction, what: string, purge: (ctx: JobContext<Record<string, never>, D>) => Promise<number>) =>
  defineJob({
    type,
    action,
    payload: Type.Object({}),
    every: 60 * 60 * 1000,
    run: async (ctx: JobContext<Record<string, never>, D>) => {
      const purged = await purge(ctx);
      if (purged) ctx.log.info({ purged }, `purged ${what}`);
      return DONE;
    },
  });

/** This run no longer owns its job (its lease expired and another worker took it): stop, change nothing. */
export class LeaseLostError extends Error {
  constructor(jobId: number) {
    super(`job ${jobId}: lease lost to another worker`);
  }
}

/**
 * Runs in the transaction that writes a job's outcome (done, or failed for good), with the job as
 * that outcome leaves it: what it writes commits with the outcome or not at all (an outbox, e.g.
 * the webhook events of docs/decisions/0027-webhooks.md). A throw rolls the outcome back; the job
 * then runs again once its lease has run out.
 */
export type OutcomeObserver = (db: Kysely<Database>, job: QueueJobRow) => Promise<void>;

/** Job definitions by job_type and action: `new JobRegistry().add(createRecord, deleteRecord)`. */
export class JobRegistry {
  private readonly map = new Map<string, JobDefinition>();
  private readonly observers: OutcomeObserver[] = [];

  /** `registry.onOutcome(recordJobEvents)`: called for every job whose outcome a worker of this registry writes. */
  onOutcome(observer: OutcomeObserver): this {
    this.observers.push(observer);
    return this;
  }

  get outcomeObservers(): readonly OutcomeObserver[] {
    return this.observers;
  }

  add(...definitions: JobDefinition<any>[]): this {
    for (const d of definitions) {
      const key = `${d.type}:${d.action}`;
      if (this.map.has(key)) throw new Error(`job ${d.type} ${d.action} is defined twice`);
      this.map.set(key, d);
    }
    return this;
  }
  get(jobType: string, action: string): JobDefinition | undefined {
    return this.map.get(`${jobType}:${action}`);
  }

  /** The scheduled definitions (those with `every`), each with its schedule name `type:action`. */
  scheduled(): Array<{ name: string; definition: JobDefinition & { every: number } }> {
    return [...this.map].flatMap(([name, d]) => (d.every === undefined ? [] : [{ name, definition: d as JobDefinition & { every: number } }]));
  }
}
