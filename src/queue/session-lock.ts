// PostgreSQL: the session lock a worker holds while it lives, on a connection of its own; the
// server frees it when the process dies, which is how the other workers tell that it is gone
// (dead-workers.ts; docs/decisions/0005-dead-workers.md). Without it a worker claims nothing:
// the others would take those jobs over. SQLite has no session locks: there the lease is all.
import type { HeldLock } from '../db/index.js';
import type { WorkerContext } from './worker-context.js';

/** The session lock a worker holds while it lives (PostgreSQL): `workerLockName(worker.id)`. */
export const workerLockName = (workerId: string) => `hostplane worker ${workerId}`;

/** Without its session lock a worker claims nothing (the others would take those jobs over): get it back soon. */
export const RELOCK_MS = 1_000;

export class SessionLock {
  private lock: HeldLock | null = null;
  /** Set by release(): a lock taken after that is released at once. */
  private released = false;

  constructor(private readonly ctx: WorkerContext) {}

  /** The lock while it is held; null before, after it was lost, and where the store has none. */
  get held(): HeldLock | null {
    return this.lock;
  }

  /** Whether the worker may claim: it holds its lock, or the store has no session locks. */
  get mayClaim(): boolean {
    return !this.ctx.store.holdLock || this.lock !== null;
  }

  /** Takes the lock; until it has it, the worker claims nothing. Taken again after its connection breaks. */
  async take(): Promise<void> {
    const { ctx } = this;
    if (ctx.stopping) return;
    try {
      const lock = await ctx.store.holdLock!(workerLockName(ctx.id), (err) => {
        if (this.lock === lock) this.lock = null;
        if (ctx.stopping) return;
        ctx.log.warn({ err, worker: ctx.id }, 'lost the session that shows this worker alive; other workers take over its jobs, and it claims nothing until it is back');
        ctx.after(RELOCK_MS, () => void this.take());
      });
      if (this.released) return void (await lock.release());
      this.lock = lock;
      ctx.wake();
    } catch (err) {
      if (ctx.stopping) return;
      ctx.logError('lock', err, 'taking the session lock failed; claiming nothing until it works');
      ctx.after(RELOCK_MS, () => void this.take());
    }
  }

  /** Lets go of the lock for good (the last step of stop(): the others then take over at once). */
  async release(): Promise<void> {
    this.released = true;
    const lock = this.lock;
    this.lock = null;
    await lock?.release();
  }
}
