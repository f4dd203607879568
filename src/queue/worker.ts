// The job worker (DESIGN "Jobs are rows"; spec §3.1; docs/operator-guide.md "The worker").
// Delivery is at least once, effects exactly once: a job is claimed with a lease that heartbeats
// extend while its handler runs; a worker that dies stops heartbeating, its lease expires and
// another worker runs the job again; handlers are idempotent (and can fence their own writes
// with saveProgress(…, trx)), so running twice changes nothing twice.
//
// Wake-ups: notifyEnqueued (same process, and NOTIFY/LISTEN on PostgreSQL); every JOB_POLL_MS a
// poll finds what no wake-up announced (other SQLite processes, `wait` and back-off times of
// other workers, expired leases).
import os from 'node:os';
import crypto from 'node:crypto';
import { sql } from 'kysely';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.js';
import type { Store } from '../db/index.js';
import { nowIso } from '../db/time.js';
import { DONE_JOB_RETENTION_MS } from '../resources/queue-jobs/queue-jobs.service.js';
import type { QueueJobRow } from '../resources/queue-jobs/queue-jobs.repository.js';
import { JOBS_CHANNEL, onEnqueued } from './notify.js';
import { QueueRepository } from './queue.repository.js';
import { HandlerRegistry, LeaseLostError, PermanentJobError, type JobContext, type JobResult } from './types.js';

export interface WorkerOptions {
  store: Store;
  handlers: HandlerRegistry;
  log: FastifyBaseLogger;
  /** Jobs run at the same time [4]. */
  concurrency?: number;
  /** A claim reserves a job this long; heartbeats every third of it extend the lease [30000]. */
  leaseMs?: number;
  /** Runs of a failing job (thrown errors, lost workers) before it is marked failed [10]. */
  maxAttempts?: number;
  /** Idle poll interval [200]. */
  pollMs?: number;
  /** Back-off after the n-th failure: min(max, base·2^(n-1)), then a random 50–100 % of it [1000, 300000]. */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** How often done jobs past retention are deleted [60000], and the retention [24 h]. */
  purgeEveryMs?: number;
  doneRetentionMs?: number;
  /** PostgreSQL: LISTEN for wake-ups from other processes [true]. */
  listen?: boolean;
}

/** The worker settings of `config` (JOB_*): `new Worker({ store, handlers, log, ...workerSettings(config) })`. */
export function workerSettings(config: Config) {
  const j = config.jobs;
  return { concurrency: j.concurrency, leaseMs: j.leaseMs, maxAttempts: j.maxAttempts, pollMs: j.pollMs };
}

interface Running {
  job: QueueJobRow;
  token: string;
  abort: AbortController;
  heartbeat: NodeJS.Timeout;
  done: Promise<void>;
}

const RELISTEN_MS = 5_000;
const CLAIM_ERROR_LOG_EVERY_MS = 30_000;

/** First line of the error message, at most 300 characters: shown to clients as `error`, so never a stack. */
export function shortError(err: unknown): string {
  const e = err as { message?: unknown; name?: unknown };
  const text = typeof e?.message === 'string' && e.message ? e.message : typeof e?.name === 'string' ? e.name : String(err);
  const line = text.split('\n', 1)[0].trim() || 'error';
  return line.length > 300 ? `${line.slice(0, 299)}…` : line;
}

/**
 * Runs jobs of one store:
 * `const w = new Worker({ store, handlers: buildHandlers({ config, store }), log, ...workerSettings(config) });
 *  await w.start(); … await w.stop();`
 */
export class Worker {
  /** Names this worker in `lease_owner` (host, pid, random): operators see who holds a job. */
  readonly id = `${os.hostname()}:${process.pid}:${crypto.randomBytes(3).toString('hex')}`;
  private readonly repo: QueueRepository;
  private readonly o: Required<Omit<WorkerOptions, 'store' | 'handlers' | 'log'>>;
  private readonly running = new Map<number, Running>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private seq = 0;
  private started = false;
  private stopping = false;
  private stopped: Promise<void> | null = null;
  private pumping: Promise<void> | null = null;
  private again = false;
  private unsubscribe: (() => void) | null = null;
  private unlisten: (() => Promise<void>) | null = null;
  private lastClaimErrorAt = 0;

  constructor(private readonly opts: WorkerOptions) {
    this.repo = new QueueRepository(opts.store.db, opts.store.engine);
    this.o = {
      concurrency: opts.concurrency ?? 4,
      leaseMs: opts.leaseMs ?? 30_000,
      maxAttempts: opts.maxAttempts ?? 10,
      pollMs: opts.pollMs ?? 200,
      backoffBaseMs: opts.backoffBaseMs ?? 1_000,
      backoffMaxMs: opts.backoffMaxMs ?? 300_000,
      purgeEveryMs: opts.purgeEveryMs ?? 60_000,
      doneRetentionMs: opts.doneRetentionMs ?? DONE_JOB_RETENTION_MS,
      listen: opts.listen ?? true,
    };
  }

  /** Jobs running now. */
  get active(): number {
    return this.running.size;
  }

  /** Subscribes to wake-ups, starts polling and purging, and claims what is due. */
  async start(): Promise<void> {
    if (this.started) throw new Error('worker already started');
    this.started = true;
    this.unsubscribe = onEnqueued(this.opts.store, () => this.wake());
    if (this.o.listen) await this.listen();
    this.every(this.o.pollMs, () => this.wake());
    this.every(this.o.purgeEveryMs, () => void this.purge());
    void this.purge();
    this.wake();
    this.opts.log.info({ worker: this.id, concurrency: this.o.concurrency, listen: this.unlisten !== null }, 'worker started');
  }

  /**
   * Stops claiming and waits up to `graceMs` for running handlers. Handlers still running then
   * are abandoned (signal aborted, heartbeats stopped): their leases expire and another worker
   * runs those jobs again.
   */
  stop({ graceMs = 8_000 }: { graceMs?: number } = {}): Promise<void> {
    this.stopped ??= (async () => {
      this.stopping = true;
      for (const t of this.timers) clearTimeout(t);
      this.timers.clear();
      this.unsubscribe?.();
      await this.unlisten?.().catch(() => {});
      this.unlisten = null;
      await this.pumping;
      const all = Promise.allSettled([...this.running.values()].map((r) => r.done));
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([all, new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
      clearTimeout(timer);
      if (this.running.size) {
        this.opts.log.warn({ worker: this.id, jobs: [...this.running.keys()] }, 'worker stopped with jobs running; their leases will expire');
        for (const r of this.running.values()) {
          clearInterval(r.heartbeat);
          r.abort.abort(new Error('worker stopping'));
        }
      }
      this.opts.log.info({ worker: this.id }, 'worker stopped');
    })();
    return this.stopped;
  }

  /** Looks for due jobs now (notifyEnqueued calls this for workers of the same process). */
  wake(): void {
    if (this.stopping || !this.started) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = this.pump().finally(() => {
      this.pumping = null;
    });
  }

  private async pump(): Promise<void> {
    do {
      this.again = false;
      while (!this.stopping && this.running.size < this.o.concurrency) {
        const want = this.o.concurrency - this.running.size;
        const token = `${this.id}#${++this.seq}`;
        let jobs: QueueJobRow[];
        try {
          const now = Date.now();
          jobs = await this.repo.claim(token, want, new Date(now).toISOString(), new Date(now + this.o.leaseMs).toISOString());
        } catch (err) {
          if (this.stopping) return;
          // A database that is down: one line every 30 s, not one per poll.
          if (Date.now() - this.lastClaimErrorAt > CLAIM_ERROR_LOG_EVERY_MS) {
            this.lastClaimErrorAt = Date.now();
            this.opts.log.error({ err, worker: this.id }, 'claiming jobs failed; retrying at the next poll');
          }
          return;
        }
        for (const job of jobs) {
          if (this.stopping) {
            // Claimed while stop() began: hand it back at once rather than make it wait for the lease.
            await this.repo.release(job.id, token, job.run_after, job.attempts).catch(() => {});
          } else {
            this.launch(job, token);
          }
        }
        if (jobs.length < want) break;
      }
    } while (this.again && !this.stopping);
  }

  private launch(job: QueueJobRow, token: string) {
    const abort = new AbortController();
    const heartbeat = setInterval(() => void this.heartbeat(job.id, token, abort), Math.max(1, Math.floor(this.o.leaseMs / 3)));
    const entry: Running = { job, token, abort, heartbeat, done: Promise.resolve() };
    this.running.set(job.id, entry);
    entry.done = this.run(job, token, abort)
      .catch((err) => this.opts.log.error({ err, job: job.id }, 'job bookkeeping failed; the lease will expire and the job run again'))
      .finally(() => {
        clearInterval(heartbeat);
        if (this.running.get(job.id) === entry) this.running.delete(job.id);
        this.wake();
      });
  }

  private async heartbeat(id: number, token: string, abort: AbortController) {
    try {
      const now = Date.now();
      if (!(await this.repo.heartbeat(id, token, new Date(now + this.o.leaseMs).toISOString()))) {
        abort.abort(new LeaseLostError(id));
      }
    } catch (err) {
      // The next heartbeat may get through before the lease runs out.
      this.opts.log.warn({ err, job: id }, 'heartbeat failed');
    }
  }

  private async run(job: QueueJobRow, token: string, abort: AbortController): Promise<void> {
    const log = this.opts.log.child({ job: job.id, job_type: job.job_type, action: job.action });
    const handler = this.opts.handlers.get(job.job_type, job.action);
    if (!handler) return this.fail(job, token, job.attempts + 1, `no handler for ${job.job_type} ${job.action}`, log);
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

    const ctx: JobContext = {
      job,
      payload,
      progress,
      saveProgress: async (value, db) => {
        const repo = db ? new QueueRepository(db, this.opts.store.engine) : this.repo;
        if (!(await repo.saveProgress(job.id, token, JSON.stringify(value ?? null)))) throw new LeaseLostError(job.id);
        ctx.progress = value;
      },
      store: this.opts.store,
      log,
      signal: abort.signal,
    };

    let result: JobResult | undefined;
    let error: unknown;
    const started = Date.now();
    try {
      result = await handler(ctx);
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
      kept = await this.repo.complete(job.id, token, new Date(now).toISOString());
      if (kept) log.debug({ ms: now - started }, 'job done');
    } else if (error === undefined && result!.status === 'wait') {
      const ms = Math.max(0, result!.ms);
      kept = await this.repo.release(job.id, token, new Date(now + ms).toISOString());
      // This worker comes back for it on time even between polls. Timers may fire a millisecond
      // before Date.now() reaches run_after; a claim then would find nothing and the job would
      // wait for the next poll, so come back just after it.
      if (kept) this.after(ms + 2, () => this.wake());
    } else if (error instanceof LeaseLostError) {
      kept = false;
    } else {
      const attempts = job.attempts + 1;
      const message = shortError(error);
      if (error instanceof PermanentJobError || attempts >= this.o.maxAttempts) {
        return this.fail(job, token, attempts, message, log);
      }
      const delay = this.backoff(attempts);
      kept = await this.repo.release(job.id, token, new Date(now + delay).toISOString(), attempts);
      if (kept) {
        log.warn({ err: error, attempts, retryInMs: delay }, 'job failed; will retry');
        this.after(delay, () => this.wake());
      }
    }
    if (!kept) log.warn('job was taken by another worker (lease expired); its outcome is theirs');
  }

  private async fail(job: QueueJobRow, token: string, attempts: number, message: string, log: FastifyBaseLogger) {
    if (await this.repo.fail(job.id, token, attempts, message, nowIso())) {
      log.error({ attempts, error: message }, 'job failed for good');
    }
  }

  /** Delay before the run after the `attempts`-th failure: exponential, capped, with jitter so retries spread out. */
  backoff(attempts: number): number {
    const ceiling = Math.min(this.o.backoffMaxMs, this.o.backoffBaseMs * 2 ** Math.min(attempts - 1, 30));
    return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
  }

  private async purge() {
    try {
      const n = await this.repo.purgeDone(nowIso(-this.o.doneRetentionMs));
      if (n) this.opts.log.info({ purged: n }, 'purged done jobs past retention');
    } catch (err) {
      if (!this.stopping) this.opts.log.warn({ err }, 'purging done jobs failed');
    }
  }

  private async listen() {
    const { store, log } = this.opts;
    if (!store.listen || this.stopping) return;
    try {
      // NOTIFY carries the sender's schema; deployments sharing the database ignore each other.
      const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(store.db);
      const schema = rows[0]?.schema ?? '';
      const stop = await store.listen(
        JOBS_CHANNEL,
        (payload) => {
          if (payload === schema) this.wake();
        },
        (err) => {
          this.unlisten = null;
          if (this.stopping) return;
          log.warn({ err }, 'LISTEN connection lost; polling until it is back');
          this.after(RELISTEN_MS, () => void this.listen());
        },
      );
      if (this.stopping) await stop();
      else {
        this.unlisten = stop;
        // Notifications sent while we were not listening are lost: look now.
        this.wake();
      }
    } catch (err) {
      if (this.stopping) return;
      log.warn({ err }, 'LISTEN failed; polling until it works');
      this.after(RELISTEN_MS, () => void this.listen());
    }
  }

  private after(ms: number, fn: () => void) {
    if (this.stopping) return;
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    this.timers.add(t);
  }

  private every(ms: number, fn: () => void) {
    const tick = () => {
      fn();
      this.after(ms, tick);
    };
    this.after(ms, tick);
  }
}

function isJobResult(r: unknown): r is JobResult {
  const x = r as JobResult | undefined;
  return x?.status === 'done' || (x?.status === 'wait' && typeof x.ms === 'number' && Number.isFinite(x.ms));
}
