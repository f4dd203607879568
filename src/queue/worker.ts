// The job worker (API guide "Queue jobs"; decision 0004): at-least-once delivery under a lease,
// idempotent handlers, so effects happen once. It composes small rooms: claims, slots, job-run,
// reservations (decision 0010), heartbeats + session-lock + dead-workers (decision 0005),
// scheduler, purge, and the wake-ups (wakeups.ts in process, listen.ts from other Stores; a poll
// every JOB_POLL_MS finds the rest).
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.js';
import type { Store } from '../db/index.js';
import { Claims } from './claims.js';
import { DeadWorkers } from './dead-workers.js';
import { Heartbeats } from './heartbeats.js';
import { JobRunner } from './job-run.js';
import { DONE_JOB_RETENTION_MS, type QueueSelection } from './jobs.js';
import { webQueue } from '../provisioning/web/servers.repository.js';
import { Listener } from './listen.js';
import { Purge } from './purge.js';
import { Reservations } from './reservations.js';
import { Scheduler } from './scheduler.js';
import { SessionLock } from './session-lock.js';
import { Slots } from './slots.js';
import type { JobRegistry } from './types.js';
import { onEnqueued } from './wakeups.js';
import { WorkerContext } from './worker-context.js';

export interface WorkerOptions {
  store: Store;
  /** The job definitions it runs (src/resources/jobs.ts builds the application's). */
  jobs: JobRegistry;
  /** Handed to every run in its context, as the job definitions expect them (the resources': src/provisioning/drivers.ts). */
  drivers: unknown;
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

/** The worker settings of `config` (JOB_*): `new Worker({ store, jobs, drivers, log, ...workerSettings(config) })`. */
export function workerSettings(config: Config) {
  const j = config.jobs;
  // With WEB_SERVER the jobs of that web server too: it runs on this host (`hostplane worker`
  // with WEB_SERVER takes those only; docs/decisions/0008-web-servers.md).
  const queues: QueueSelection = { general: true, named: config.webServer ? [webQueue(config.webServer)] : [] };
  return { concurrency: j.concurrency, leaseMs: j.leaseMs ?? undefined, maxAttempts: j.maxAttempts, pollMs: j.pollMs, queues };
}

/**
 * Runs jobs of one store:
 * `const w = new Worker({ store, jobs: buildJobs(), drivers: buildDrivers({ config, store }), log, ...workerSettings(config) });
 *  await w.start(); … await w.stop();`
 */
export class Worker {
  /** Names this worker in `lease_owner` (host, pid, random): operators see who holds a job. */
  readonly id: string;
  private readonly o: Required<Omit<WorkerOptions, 'store' | 'jobs' | 'drivers' | 'log'>>;
  private readonly ctx: WorkerContext;
  private readonly runner: JobRunner;
  private readonly slots: Slots;
  private readonly lock: SessionLock;
  private readonly claims: Claims;
  private readonly reservations: Reservations;
  private readonly heartbeats: Heartbeats;
  private readonly deadWorkers: DeadWorkers;
  private readonly listener: Listener;
  private readonly scheduler: Scheduler;
  private readonly purge: Purge;
  private unwake: (() => void) | null = null;
  private stopped: Promise<void> | null = null;

  constructor(private readonly opts: WorkerOptions) {
    const o = (this.o = {
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
    });
    const ctx = (this.ctx = new WorkerContext(opts.store, opts.log, () => this.wake()));
    this.id = ctx.id;
    this.runner = new JobRunner(ctx, opts.jobs, opts.drivers, o);
    this.slots = new Slots(ctx, o.concurrency, (job, token, abort, prefetched) => this.runner.run(job, token, abort, prefetched));
    this.lock = new SessionLock(ctx);
    this.claims = new Claims(ctx, this.slots, this.lock, o);
    this.reservations = new Reservations(ctx, this.slots, this.lock, o);
    this.heartbeats = new Heartbeats(ctx, this.slots, o.leaseMs);
    this.deadWorkers = new DeadWorkers(ctx, this.lock, o.deadWorkerCheckMs);
    this.listener = new Listener(ctx);
    this.scheduler = new Scheduler(ctx, opts.jobs, o.scheduleEveryMs);
    this.purge = new Purge(ctx, o.purgeEveryMs, o.doneRetentionMs);
  }

  /** Jobs running now. */
  get active(): number {
    return this.slots.running.size;
  }

  /** Takes its session lock (PostgreSQL), subscribes to wake-ups, starts polling, heartbeats and purging, and claims what is due. */
  async start(): Promise<void> {
    const { ctx, o } = this;
    if (ctx.started) throw new Error('worker already started');
    ctx.started = true;
    if (this.opts.store.holdLock) {
      await this.lock.take();
      this.deadWorkers.start();
    }
    this.unwake = onEnqueued(this.opts.store, () => this.wake());
    this.reservations.start();
    if (o.listen) await this.listener.start();
    this.heartbeats.start();
    ctx.every(o.pollMs, () => this.wake());
    this.purge.start();
    if (o.queues.general) this.scheduler.start();
    this.wake();
    this.opts.log.info(
      { worker: this.id, concurrency: o.concurrency, leaseMs: o.leaseMs, lock: this.lock.held !== null, listen: this.listener.listening },
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
      const { ctx, slots } = this;
      ctx.stopping = true;
      ctx.clearTimers();
      this.unwake?.();
      this.reservations.stop();
      await this.listener.stop();
      await this.claims.settled();
      const all = Promise.allSettled([...slots.running.values()].map((r) => r.done));
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([all, new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
      clearTimeout(timer);
      this.heartbeats.stop();
      if (slots.running.size) {
        this.opts.log.warn({ worker: this.id, jobs: [...slots.running.keys()] }, 'worker stopped with jobs running; other workers will take them over');
        for (const r of slots.running.values()) r.abort.abort(new Error('worker stopping'));
      }
      await this.lock.release();
      this.opts.log.info({ worker: this.id }, 'worker stopped');
    })();
    return this.stopped;
  }

  /** Settles once no claim is on its way (a started worker has looked for due jobs by then). */
  claimed(): Promise<void> {
    return this.claims.settled();
  }

  /** Looks for due jobs now (notifyEnqueued calls this for the workers of the same Store). */
  wake(): void {
    this.claims.wake();
  }

  /** Delay before the run after the `attempts`-th failure: exponential, capped, with jitter so retries spread out. */
  backoff(attempts: number): number {
    return this.runner.backoff(attempts);
  }
}
