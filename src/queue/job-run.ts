// One run of a claimed or reserved job under its lease: the payload checked against the job's
// schema, the handler run, and its outcome written only while the lease is still this run's.
// Delivery is at least once, effects exactly once: handlers are idempotent (and can fence their
// own writes with saveProgress(…, trx)), so a job run again after a lost lease changes nothing twice.
import type { FastifyBaseLogger } from 'fastify';
import { Value } from 'typebox/value';
import { nowIso } from '../db/time.js';
import type { QueueJobRow } from './jobs.js';
import { QueueRepository } from './queue.repository.js';
import { shortError } from './short-error.js';
import { LeaseLostError, PermanentJobError, type JobContext, type JobDefinition, type JobRegistry, type JobResult } from './types.js';
import type { WorkerContext } from './worker-context.js';

export interface RunSettings {
  /** Runs of a failing job (thrown errors, lost workers) before it is marked failed. */
  maxAttempts: number;
  /** Back-off after the n-th failure: min(max, base·2^(n-1)), then a random 50–100 % of it. */
  backoffBaseMs: number;
  backoffMaxMs: number;
}

export class JobRunner {
  constructor(
    private readonly ctx: WorkerContext,
    private readonly jobs: JobRegistry,
    private readonly drivers: unknown,
    private readonly o: RunSettings,
  ) {}

  async run(job: QueueJobRow, token: string, abort: AbortController, prefetched?: unknown): Promise<void> {
    const { ctx } = this;
    const log = ctx.log.child({ job: job.id, job_type: job.job_type, action: job.action });
    const definition = this.jobs.get(job.job_type, job.action);
    if (!definition) return this.fail(job, token, job.attempts + 1, `no handler for ${job.job_type} ${job.action}`, log);
    if (job.attempts >= this.o.maxAttempts) {
      // Only lost leases raise attempts at claim time: workers died or hung running this job.
      return this.fail(job, token, job.attempts, `abandoned by workers ${job.attempts} times (crash or timeout)`, log);
    }
    let payload: unknown;
    let progress: unknown;
    try {
      payload = job.payload === null ? null : JSON.parse(job.payload);
      progress = job.progress === null ? null : JSON.parse(job.progress);
    } catch {
      return this.fail(job, token, job.attempts + 1, 'stored payload or progress is not JSON', log);
    }
    const misfit = payloadProblem(definition, payload);
    if (misfit) return this.fail(job, token, job.attempts + 1, misfit, log);

    const jobCtx: JobContext = {
      job,
      payload,
      progress,
      saveProgress: async (value, db) => {
        const repo = db ? new QueueRepository(db) : ctx.repo;
        if (!(await repo.saveProgress(job.id, token, JSON.stringify(value ?? null)))) throw new LeaseLostError(job.id);
        jobCtx.progress = value;
      },
      store: ctx.store,
      drivers: this.drivers,
      log,
      signal: abort.signal,
      prefetched,
    };

    let result: JobResult | undefined;
    let error: unknown;
    const started = Date.now();
    try {
      result = await definition.run(jobCtx);
      if (!isJobResult(result)) throw new Error('handler returned no valid result');
    } catch (err) {
      error = err;
    }
    if (abort.signal.aborted) {
      // Lease lost or abandoned by stop(): whoever owns the job now decides its outcome.
      log.warn({ reason: shortError(abort.signal.reason) }, 'job run ended without its lease');
      return;
    }

    const now = Date.now();
    let kept: boolean;
    if (error === undefined && result!.status === 'done') {
      const finishedAt = new Date(now).toISOString();
      kept = await this.outcome({ ...job, status: 'done', finished_at: finishedAt, error: null }, (repo) => repo.complete(job.id, token, finishedAt));
      if (kept) log.debug({ ms: now - started }, 'job done');
    } else if (error === undefined && result!.status === 'wait') {
      const ms = Math.max(0, result!.ms);
      kept = await ctx.repo.release(job.id, token, new Date(now + ms).toISOString());
      // This worker comes back for it on time even between polls. Timers may fire a millisecond
      // before Date.now() reaches run_after; a claim then would find nothing and the job would
      // wait for the next poll, so come back just after it.
      if (kept) ctx.after(ms + 2, () => ctx.wake());
    } else if (error instanceof LeaseLostError) {
      kept = false;
    } else {
      const attempts = job.attempts + 1;
      const message = shortError(error);
      if (error instanceof PermanentJobError || attempts >= this.o.maxAttempts) {
        return this.fail(job, token, attempts, message, log);
      }
      const delay = this.backoff(attempts);
      kept = await ctx.repo.release(job.id, token, new Date(now + delay).toISOString(), attempts);
      if (kept) {
        log.warn({ err: error, attempts, retryInMs: delay }, 'job failed; will retry');
        ctx.after(delay, () => ctx.wake());
      }
    }
    if (!kept) log.warn('job was taken by another worker (lease expired or ended); its outcome is theirs');
  }

  /** Delay before the run after the `attempts`-th failure: exponential, capped, with jitter so retries spread out. */
  backoff(attempts: number): number {
    const ceiling = Math.min(this.o.backoffMaxMs, this.o.backoffBaseMs * 2 ** Math.min(attempts - 1, 30));
    return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
  }

  private async fail(job: QueueJobRow, token: string, attempts: number, message: string, log: FastifyBaseLogger) {
    const finishedAt = nowIso();
    const failed = { ...job, status: 'failed', attempts, error: message, finished_at: finishedAt };
    if (await this.outcome(failed, (repo) => repo.fail(job.id, token, attempts, message, finishedAt))) {
      log.error({ attempts, error: message }, 'job failed for good');
    }
  }

  /**
   * Writes a job's outcome with `write` (false: the lease was lost, nothing written) and, in the
   * same transaction, what the registry's outcome observers write about it.
   */
  private async outcome(after: QueueJobRow, write: (repo: QueueRepository) => Promise<boolean>): Promise<boolean> {
    const observers = this.jobs.outcomeObservers;
    if (!observers.length) return write(this.ctx.repo);
    return this.ctx.store.db.transaction().execute(async (trx) => {
      if (!(await write(new QueueRepository(trx)))) return false;
      for (const observe of observers) await observe(trx, { ...after, lease_owner: null, lease_until: null });
      return true;
    });
  }
}

/**
 * Why `payload` does not fit the definition's schema (the first problem, as a client reads it in
 * the job's `error`), or null when it fits. A job enqueued by an older or a broken producer fails
 * for good instead of running on data it does not understand.
 */
function payloadProblem(definition: JobDefinition, payload: unknown): string | null {
  if (Value.Check(definition.payload, payload)) return null;
  const first = [...Value.Errors(definition.payload, payload)][0];
  const where = first?.instancePath ? ` at ${first.instancePath}` : '';
  return `job payload does not fit ${definition.type} ${definition.action}${where}: ${first?.message ?? 'invalid'}`;
}

function isJobResult(r: unknown): r is JobResult {
  const x = r as JobResult | undefined;
  return x?.status === 'done' || (x?.status === 'wait' && typeof x.ms === 'number' && Number.isFinite(x.ms));
}
