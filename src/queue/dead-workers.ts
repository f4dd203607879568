// PostgreSQL: finding dead workers within seconds and ending their leases (docs/decisions/0005-dead-workers.md).
// Every worker holds a session lock on a connection of its own (session-lock.ts), which the
// server frees when the process dies. Every second each worker that holds its own lock checks
// that lock's connection and the owners of running jobs; whose lock is free on two checks 1.5 s
// apart is gone, and its leases end. Leases are long there (30 s): a worker that is alive but slow
// (GC pause, slow database) keeps its jobs; one that hangs loses them then. On SQLite there is
// nothing like a session lock: leases are short (3 s) and a dead worker's run out by themselves.
import { freeSessionLocks } from '../db/dialect.js';
import { nowIso } from '../db/time.js';
import { RELOCK_MS, workerLockName, type SessionLock } from './session-lock.js';
import { notifyEnqueued } from './wakeups.js';
import type { WorkerContext } from './worker-context.js';

/**
 * A worker whose lock was found free is taken over only if it is still free this long after: a
 * live worker whose connection broke (a database restart) takes its lock again within RELOCK_MS
 * and the time to connect, and keeps its jobs.
 */
export const FREE_FOR_MS = RELOCK_MS + 500;

/** The worker id in a lease token `${workerId}#${seq}`. */
const workerOf = (token: string) => token.slice(0, token.lastIndexOf('#'));

export class DeadWorkers {
  private checking = false;
  /** Owners of running jobs whose lock this worker found free, and when it first did. */
  private readonly freeSince = new Map<string, number>();

  constructor(
    private readonly ctx: WorkerContext,
    private readonly lock: SessionLock,
    private readonly everyMs: number,
  ) {}

  /** Looks now (after a restart, the jobs of the process that died are taken over at once) and every `everyMs`. */
  start(): void {
    void this.check();
    this.ctx.every(this.everyMs, () => void this.check());
  }

  /**
   * Checks its own lock's connection, then finds the workers of running jobs whose session lock
   * is free (their process or connection is gone), and ends their leases once their lock has been
   * free on two checks FREE_FOR_MS apart; then wakes every worker to take the jobs over. A worker
   * without its own lock judges nobody: after a database restart, the first worker back would find
   * every other lock free before their owners take them again.
   */
  private async check(): Promise<void> {
    if (this.checking) return;
    const { ctx } = this;
    const lock = this.lock.held;
    if (!lock) {
      // Sightings from before the lock was lost may predate a restart: start over once it is back.
      this.freeSince.clear();
      ctx.log.debug({ worker: ctx.id }, 'not looking for dead workers while this worker does not hold its own lock');
      return;
    }
    this.checking = true;
    try {
      await lock.check();
      const byWorker = new Map<string, string[]>();
      for (const token of await ctx.repo.leaseTokens(nowIso())) {
        const worker = workerOf(token);
        if (worker !== ctx.id) byWorker.set(worker, [...(byWorker.get(worker) ?? []), token]);
      }
      // Owners whose jobs are over are forgotten.
      for (const w of this.freeSince.keys()) if (!byWorker.has(w)) this.freeSince.delete(w);
      if (!byWorker.size) return;
      const names = new Map([...byWorker.keys()].map((w) => [workerLockName(w), w]));
      const free = new Set((await freeSessionLocks(ctx.store.db, [...names.keys()])).map((n) => names.get(n)!));
      if (this.lock.held !== lock) {
        // Lost its own lock meanwhile: what it saw may be the database restarting.
        this.freeSince.clear();
        return;
      }
      const dead = this.judge([...byWorker.keys()], free);
      if (!dead.length) return;
      const jobs = await ctx.repo.endLeases(dead.flatMap((w) => byWorker.get(w)!));
      if (!jobs) return;
      ctx.log.warn({ workers: dead, jobs }, 'workers gone (their database sessions ended); their jobs are taken over');
      void notifyEnqueued(ctx.store);
    } catch (err) {
      this.freeSince.clear();
      // A failed check of its own lock has already been reported by the lock's onLost.
      if (!ctx.stopping && this.lock.held === lock) ctx.logError('take-over', err, 'looking for dead workers failed; retrying');
    } finally {
      this.checking = false;
    }
  }

  /** Updates the sightings of `owners` (those in `free` have a free lock) and returns the owners found gone. */
  private judge(owners: string[], free: Set<string>): string[] {
    const { log } = this.ctx;
    const now = Date.now();
    const seen: string[] = [];
    const back: string[] = [];
    const dead: string[] = [];
    for (const w of owners) {
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
      // Timers may fire a millisecond early (see job-run.ts): look just after FREE_FOR_MS.
      this.ctx.after(FREE_FOR_MS + 2, () => void this.check());
    }
    return dead;
  }
}
