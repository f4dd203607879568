// The job worker (DESIGN "Jobs are rows"; spec §3.1; docs/operator-guide.md "The worker").
// Delivery is at least once, effects exactly once: a job is claimed with a lease that heartbeats
// extend while its handler runs; when its worker dies another worker runs the job again;
// handlers are idempotent (and can fence their own writes with saveProgress(…, trx)), so running
// twice changes nothing twice.
//
// A dead worker is found within seconds (issue 7 item 4; docs/decisions/0005-dead-workers.md):
// - PostgreSQL: every worker holds a session lock on a connection of its own, which the server
//   frees when the process dies. Every second each worker that holds its own lock checks that
//   lock's connection and the owners of running jobs; whose lock is free on two checks 1.5 s
//   apart is gone, and its leases end. Leases are long (30 s): a worker that is alive but slow
//   (GC pause, slow database) keeps its jobs; one that hangs loses them then.
// - SQLite (workers share one file on one host; nothing like a session lock): leases are short
//   (3 s) and heartbeats come every second, so a dead worker's leases run out within 3 s.
//
// Wake-ups: notifyEnqueued (same process, and NOTIFY/LISTEN on PostgreSQL; also sent when a dead
// worker's leases end); every JOB_POLL_MS a poll finds what no wake-up announced (other SQLite
// processes, `wait` and back-off times of other workers, expired leases). A `fresh` job enqueued
// in this process needs neither: a worker with a free slot takes it as it is stored (reserve).
import os from 'node:os';
import crypto from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { Value } from 'typebox/value';
import type { Config } from '../config.js';
import type { HeldLock, Store } from '../db/index.js';
import { currentSchema, freeSessionLocks } from '../db/dialect.js';
import { nowIso } from '../db/time.js';
import type { Drivers } from '../provisioning/drivers.js';
import { DONE_JOB_RETENTION_MS, webQueue, type NewQueueJob, type QueueJobRow, type QueueSelection } from './jobs.js';
import { JOBS_CHANNEL, notifyEnqueued, onEnqueued, onFreshJob, wakesUs, type Reservation } from './notify.js';
import { QueueRepository } from './queue.repository.js';
import { withJobs } from './enqueue.js';
import { JobRegistry, LeaseLostError, PermanentJobError, type JobContext, type JobDefinition, type JobResult } from './types.js';

export interface WorkerOptions {
  store: Store;
  /** The job definitions it runs (src/resources/jobs.ts builds the application's). */
  jobs: JobRegistry;
  /** Handed to every run in its context (src/provisioning/drivers.ts). */
  drivers: Drivers;
  log: FastifyBaseLogger;
  /** Jobs run at the same time [4]. */
  concurrency?: number;
  /**
   * A claim reserves a job this long; heartbeats every third of it extend the lease [30000 where
   * the store has session locks (PostgreSQL), 3000 without (SQLite): see DEFAULT_LEASE_MS].
   */
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
  /**
   * Which jobs it claims [general ones only]; `{ general: false, named: [webQueue('web1')] }` for
   * the worker on web server web1's host (docs/decisions/0008-web-servers.md).
   */
  queues?: QueueSelection;
  /** How often the worker looks for scheduled jobs that are due (JobDefinition.every) [60000]. */
  scheduleEveryMs?: number;
  /** PostgreSQL: LISTEN for wake-ups from other processes [true]. */
  listen?: boolean;
  /**
   * PostgreSQL: how often the worker checks its own lock's connection and the owners of running
   * jobs for a free session lock [1000].
   */
  deadWorkerCheckMs?: number;
}

/**
 * The default lease: long where a dead worker is found by its free session lock (the lease then
 * only covers a worker that hangs or loses its host), short where the lease is all there is.
 */
export const DEFAULT_LEASE_MS = { sessionLock: 30_000, leaseOnly: 3_000 } as const;

/** The session lock a worker holds while it lives (PostgreSQL): `workerLockName(worker.id)`. */
export const workerLockName = (workerId: string) => `hostplane worker ${workerId}`;

/** The worker id in a lease token `${workerId}#${seq}`. */
const workerOf = (token: string) => token.slice(0, token.lastIndexOf('#'));

/** The worker settings of `config` (JOB_*): `new Worker({ store, jobs, drivers, log, ...workerSettings(config) })`. */
export function workerSettings(config: Config) {
  const j = config.jobs;
  // With WEB_SERVER the jobs of that web server too: it runs on this host (`hostplane worker`
  // with WEB_SERVER takes those only; docs/decisions/0008-web-servers.md).
  const queues: QueueSelection = { general: true, named: config.webServer ? [webQueue(config.webServer)] : [] };
  return { concurrency: j.concurrency, leaseMs: j.leaseMs ?? undefined, maxAttempts: j.maxAttempts, pollMs: j.pollMs, queues };
}

interface Running {
  job: QueueJobRow;
  token: string;
  abort: AbortController;
  done: Promise<void>;
}

const RELISTEN_MS = 5_000;
/** Without its session lock a worker claims nothing (the others would take those jobs over): get it back soon. */
const RELOCK_MS = 1_000;
/**
 * A worker whose lock was found free is taken over only if it is still free this long after: a
 * live worker whose connection broke (a database restart) takes its lock again within RELOCK_MS
 * and the time to connect, and keeps its jobs.
 */
export const FREE_FOR_MS = RELOCK_MS + 500;
const ERROR_LOG_EVERY_MS = 30_000;

/** First line of the error message, at most 300 characters: shown to clients as `error`, so never a stack. */
export function shortError(err: unknown): string {
  const e = err as { message?: unknown; name?: unknown };
  const text = typeof e?.message === 'string' && e.message ? e.message : typeof e?.name === 'string' ? e.name : String(err);
  const line = text.split('\n', 1)[0].trim() || 'error';
  return line.length > 300 ? `${line.slice(0, 299)}…` : line;
}

/**
 * Runs jobs of one store:
 * `const w = new Worker({ store, jobs: buildJobs(), drivers: buildDrivers({ config, store }), log, ...workerSettings(config) });
 *  await w.start(); … await w.stop();`
 */
export class Worker {
  /** Names this worker in `lease_owner` (host, pid, random): operators see who holds a job. */
  readonly id = `${os.hostname()}:${process.pid}:${crypto.randomBytes(3).toString('hex')}`;
  private readonly repo: QueueRepository;
  private readonly o: Required<Omit<WorkerOptions, 'store' | 'jobs' | 'drivers' | 'log'>>;
  private readonly running = new Map<number, Running>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private seq = 0;
  /** Slots promised to enqueueing transactions of this process (reserve) and not yet handed a job. */
  private reserved = 0;
  /** Jobs the claim on its way may bring back (pump); reserve counts them as taken. */
  private claiming = 0;
  private started = false;
  private stopping = false;
  private stopped: Promise<void> | null = null;
  private pumping: Promise<void> | null = null;
  private again = false;
  private unsubscribe: (() => void) | null = null;
  private unlisten: (() => Promise<void>) | null = null;
  /** PostgreSQL: the session lock; null while it is not held. */
  private lock: HeldLock | null = null;
  /** Set when stop() has let go of the lock: a lock taken after that is released at once. */
  private unlocked = false;
  private heartbeats: NodeJS.Timeout | null = null;
  private checking = false;
  /** Owners of running jobs whose lock this worker found free, and when it first did. */
  private readonly freeSince = new Map<string, number>();
  private readonly lastErrorAt = new Map<string, number>();

  constructor(private readonly opts: WorkerOptions) {
    this.repo = new QueueRepository(opts.store.db);
    this.o = {
      concurrency: opts.concurrency ?? 4,
      leaseMs: opts.leaseMs ?? (opts.store.holdLock ? DEFAULT_LEASE_MS.sessionLock : DEFAULT_LEASE_MS.leaseOnly),
      maxAttempts: opts.maxAttempts ?? 10,
      pollMs: opts.pollMs ?? 200,
      backoffBaseMs: opts.backoffBaseMs ?? 1_000,
      backoffMaxMs: opts.backoffMaxMs ?? 300_000,
      purgeEveryMs: opts.purgeEveryMs ?? 60_000,
      doneRetentionMs: opts.doneRetentionMs ?? DONE_JOB_RETENTION_MS,
      scheduleEveryMs: opts.scheduleEveryMs ?? 60_000,
      queues: opts.queues ?? { general: true, named: [] },
      listen: opts.listen ?? true,
      deadWorkerCheckMs: opts.deadWorkerCheckMs ?? 1_000,
    };
  }

  /** Jobs running now. */
  get active(): number {
    return this.running.size;
  }

  /** Takes its session lock (PostgreSQL), subscribes to wake-ups, starts polling, heartbeats and purging, and claims what is due. */
  async start(): Promise<void> {
    if (this.started) throw new Error('worker already started');
    this.started = true;
    const { store } = this.opts;
    if (store.holdLock) {
      await this.takeLock();
      // At once too: after a restart, the jobs of the process that died are taken over now.
      void this.takeOverDeadWorkers();
      this.every(this.o.deadWorkerCheckMs, () => void this.takeOverDeadWorkers());
    }
    const unwake = onEnqueued(store, () => this.wake());
    const untake = onFreshJob(store, (job) => this.reserve(job));
    this.unsubscribe = () => {
      unwake();
      untake();
    };
    if (this.o.listen) await this.listen();
    this.heartbeats = setInterval(() => void this.heartbeat(), Math.max(1, Math.floor(this.o.leaseMs / 3)));
    this.every(this.o.pollMs, () => this.wake());
    this.every(this.o.purgeEveryMs, () => void this.purge());
    void this.purge();
    if (this.o.queues.general && this.opts.jobs.scheduled().length) {
      this.every(this.o.scheduleEveryMs, () => void this.enqueueScheduled());
      void this.enqueueScheduled();
    }
    this.wake();
    this.opts.log.info(
      { worker: this.id, concurrency: this.o.concurrency, leaseMs: this.o.leaseMs, lock: this.lock !== null, listen: this.unlisten !== null },
      'worker started',
    );
  }

  /**
   * Stops claiming and waits up to `graceMs` for running handlers. Handlers still running then
   * are abandoned (signal aborted, heartbeats stopped) and another worker runs those jobs again:
   * at once on PostgreSQL (this worker's session lock is released last), once their leases run
   * out otherwise.
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
      if (this.heartbeats) clearInterval(this.heartbeats);
      if (this.running.size) {
        this.opts.log.warn({ worker: this.id, jobs: [...this.running.keys()] }, 'worker stopped with jobs running; other workers will take them over');
        for (const r of this.running.values()) r.abort.abort(new Error('worker stopping'));
      }
      this.unlocked = true;
      const lock = this.lock;
      this.lock = null;
      await lock?.release();
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
      // Without its session lock this worker looks dead to the others: claim nothing.
      if (this.opts.store.holdLock && !this.lock) return;
      while (!this.stopping && this.running.size + this.reserved < this.o.concurrency) {
        const want = this.o.concurrency - this.running.size - this.reserved;
        const token = `${this.id}#${++this.seq}`;
        let jobs: QueueJobRow[];
        this.claiming = want;
        try {
          const now = Date.now();
          jobs = await this.repo.claim(token, want, new Date(now).toISOString(), new Date(now + this.o.leaseMs).toISOString(), this.o.queues);
        } catch (err) {
          if (this.stopping) return;
          this.logError('claim', err, 'claiming jobs failed; retrying at the next poll');
          return;
        } finally {
          this.claiming = 0;
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

  /**
   * A slot for a fresh job that an enqueueing transaction of this process is about to store
   * (withJobs), or null: while stopping, without its session lock, for another queue, or when all
   * slots are taken. The job is stored leased to a new token of this worker; `hand` runs it once
   * the transaction has committed, or gives it back if this worker began stopping meanwhile.
   */
  private reserve(job: NewQueueJob): Reservation | null {
    if (this.stopping || !this.started) return null;
    if (this.opts.store.holdLock && !this.lock) return null;
    const queue = job.queue ?? null;
    if (queue === null ? !this.o.queues.general : !this.o.queues.named.includes(queue)) return null;
    if (this.running.size + this.reserved + this.claiming >= this.o.concurrency) return null;
    this.reserved++;
    const token = `${this.id}#${++this.seq}`;
    let handed = false;
    return {
      owner: token,
      until: new Date(Date.now() + this.o.leaseMs).toISOString(),
      hand: (row, prefetched) => {
        if (handed) return;
        handed = true;
        this.reserved--;
        if (row && !this.stopping) return this.launch(row, token, prefetched);
        // Given back at once, as pump() does with a job claimed while stopping.
        if (row) void this.repo.release(row.id, token, row.run_after, row.attempts).catch(() => {});
        this.wake();
      },
    };
  }

  private launch(job: QueueJobRow, token: string, prefetched?: unknown) {
    const abort = new AbortController();
    const entry: Running = { job, token, abort, done: Promise.resolve() };
    this.running.set(job.id, entry);
    entry.done = this.run(job, token, abort, prefetched)
      .catch((err) => this.opts.log.error({ err, job: job.id }, 'job bookkeeping failed; the lease will expire and the job run again'))
      .finally(() => {
        if (this.running.get(job.id) === entry) this.running.delete(job.id);
        this.wake();
      });
  }

  /** Extends the leases of all running jobs in one statement; aborts the runs whose job was taken over. */
  private async heartbeat() {
    const live = [...this.running.values()].filter((r) => !r.abort.signal.aborted);
    if (!live.length) return;
    try {
      const held = await this.repo.heartbeat(
        live.map((r) => ({ id: r.job.id, token: r.token })),
        new Date(Date.now() + this.o.leaseMs).toISOString(),
      );
      // A run that has just written its outcome is no longer leased either; aborting it changes nothing.
      for (const r of live) if (!held.has(r.job.id)) r.abort.abort(new LeaseLostError(r.job.id));
    } catch (err) {
      // The next heartbeat may get through before the leases run out.
      this.opts.log.warn({ err, jobs: live.map((r) => r.job.id) }, 'heartbeat failed');
    }
  }

  /**
   * PostgreSQL: takes the session lock that tells the other workers this one is alive; until it
   * has it, it claims nothing. Taken again after its connection breaks.
   */
  private async takeLock() {
    const { store, log } = this.opts;
    if (this.stopping) return;
    try {
      const lock = await store.holdLock!(workerLockName(this.id), (err) => {
        if (this.lock === lock) this.lock = null;
        if (this.stopping) return;
        log.warn({ err, worker: this.id }, 'lost the session that shows this worker alive; other workers take over its jobs, and it claims nothing until it is back');
        this.after(RELOCK_MS, () => void this.takeLock());
      });
      if (this.unlocked) return void (await lock.release());
      this.lock = lock;
      this.wake();
    } catch (err) {
      if (this.stopping) return;
      this.logError('lock', err, 'taking the session lock failed; claiming nothing until it works');
      this.after(RELOCK_MS, () => void this.takeLock());
    }
  }

  /**
   * PostgreSQL: checks its own lock's connection, then finds the workers of running jobs whose
   * session lock is free (their process or connection is gone), and ends their leases once their
   * lock has been free on two checks FREE_FOR_MS apart; then wakes every worker to take the jobs
   * over. A worker without its own lock judges nobody: after a database restart, the first worker
   * back would find every other lock free before their owners take them again.
   */
  private async takeOverDeadWorkers() {
    if (this.checking) return;
    const { log } = this.opts;
    const lock = this.lock;
    if (!lock) {
      // Sightings from before the lock was lost may predate a restart: start over once it is back.
      this.freeSince.clear();
      log.debug({ worker: this.id }, 'not looking for dead workers while this worker does not hold its own lock');
      return;
    }
    this.checking = true;
    try {
      await lock.check();
      const byWorker = new Map<string, string[]>();
      for (const token of await this.repo.leaseTokens(nowIso())) {
        const worker = workerOf(token);
        if (worker !== this.id) byWorker.set(worker, [...(byWorker.get(worker) ?? []), token]);
      }
      // Owners whose jobs are over are forgotten.
      for (const w of this.freeSince.keys()) if (!byWorker.has(w)) this.freeSince.delete(w);
      if (!byWorker.size) return;
      const names = new Map([...byWorker.keys()].map((w) => [workerLockName(w), w]));
      const free = new Set((await freeSessionLocks(this.opts.store.db, [...names.keys()])).map((n) => names.get(n)!));
      if (this.lock !== lock) {
        // Lost its own lock meanwhile: what it saw may be the database restarting.
        this.freeSince.clear();
        return;
      }
      const now = Date.now();
      const seen: string[] = [];
      const back: string[] = [];
      const dead: string[] = [];
      for (const w of byWorker.keys()) {
        const since = this.freeSince.get(w);
        if (!free.has(w)) {
          if (since === undefined) continue;
          this.freeSince.delete(w);
          back.push(w);
        } else if (since === undefined) {
          this.freeSince.set(w, now);
          seen.push(w);
        } else if (now - since >= FREE_FOR_MS) {
          this.freeSince.delete(w);
          dead.push(w);
        }
      }
      if (back.length) log.info({ workers: back }, 'workers whose lock was free hold it again (their connection broke and came back); they keep their jobs');
      if (seen.length) {
        log.debug({ workers: seen }, 'workers with running jobs whose lock is free; their jobs are taken over if it is still free in 1.5 s');
        // Timers may fire a millisecond early (see run()): look just after FREE_FOR_MS.
        this.after(FREE_FOR_MS + 2, () => void this.takeOverDeadWorkers());
      }
      if (!dead.length) return;
      const jobs = await this.repo.endLeases(dead.flatMap((w) => byWorker.get(w)!));
      if (!jobs) return;
      log.warn({ workers: dead, jobs }, 'workers gone (their database sessions ended); their jobs are taken over');
      void notifyEnqueued(this.opts.store);
    } catch (err) {
      this.freeSince.clear();
      // A failed check of its own lock has already been reported by the lock's onLost.
      if (!this.stopping && this.lock === lock) this.logError('take-over', err, 'looking for dead workers failed; retrying');
    } finally {
      this.checking = false;
    }
  }

  /** Logs a failure that repeats while the database is down once every 30 s, not at every try. */
  private logError(what: string, err: unknown, message: string) {
    if (Date.now() - (this.lastErrorAt.get(what) ?? 0) < ERROR_LOG_EVERY_MS) return;
    this.lastErrorAt.set(what, Date.now());
    this.opts.log.error({ err, worker: this.id }, message);
  }

  private async run(job: QueueJobRow, token: string, abort: AbortController, prefetched?: unknown): Promise<void> {
    const log = this.opts.log.child({ job: job.id, job_type: job.job_type, action: job.action });
    const definition = this.opts.jobs.get(job.job_type, job.action);
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

    const ctx: JobContext = {
      job,
      payload,
      progress,
      saveProgress: async (value, db) => {
        const repo = db ? new QueueRepository(db) : this.repo;
        if (!(await repo.saveProgress(job.id, token, JSON.stringify(value ?? null)))) throw new LeaseLostError(job.id);
        ctx.progress = value;
      },
      store: this.opts.store,
      drivers: this.opts.drivers,
      log,
      signal: abort.signal,
      prefetched,
    };

    let result: JobResult | undefined;
    let error: unknown;
    const started = Date.now();
    try {
      result = await definition.run(ctx);
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
    if (!kept) log.warn('job was taken by another worker (lease expired or ended); its outcome is theirs');
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

  /** Enqueues each scheduled job whose turn has come (one job per turn, whichever worker takes it). */
  private async enqueueScheduled() {
    for (const { name, definition: d } of this.opts.jobs.scheduled()) {
      try {
        await withJobs(this.opts.store, async (trx, enqueue) => {
          if (!(await new QueueRepository(trx).takeScheduledTurn(name, d.every))) return;
          const job = await enqueue({ customerId: null, jobType: d.type, action: d.action, objectId: null, payload: {} });
          this.opts.log.info({ job: job.id, schedule: name }, 'enqueued scheduled job');
        });
      } catch (err) {
        this.logError('schedule', err, 'enqueueing a scheduled job failed; retrying at the next check');
      }
    }
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
      const schema = (await currentSchema(store.db)) ?? '';
      const stop = await store.listen(
        JOBS_CHANNEL,
        (payload) => {
          if (wakesUs(payload, schema)) this.wake();
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
