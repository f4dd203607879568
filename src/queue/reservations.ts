// Fresh-job reservations (docs/decisions/0010-fresh-jobs.md): a job whose object an enqueueing
// transaction of this Store creates is stored already leased to a worker with a free slot, which
// runs it as soon as the transaction has committed: no claim, no wake-up.
import type { NewQueueJob, QueueSelection } from './jobs.js';
import type { SessionLock } from './session-lock.js';
import type { Slots } from './slots.js';
import { onFreshJob, type Reservation } from './wakeups.js';
import type { WorkerContext } from './worker-context.js';

export class Reservations {
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly ctx: WorkerContext,
    private readonly slots: Slots,
    private readonly lock: SessionLock,
    private readonly o: { leaseMs: number; queues: QueueSelection },
  ) {}

  /** Answers the Store's offers of fresh jobs until stop(). */
  start(): void {
    this.unsubscribe = onFreshJob(this.ctx.store, (job) => this.reserve(job));
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
  }

  /**
   * A slot for a fresh job that an enqueueing transaction is about to store (withJobs), or null:
   * while stopping, without its session lock, for another queue, or when all slots are taken. The
   * job is stored leased to a new token of this worker; `hand` runs it once the transaction has
   * committed, or gives it back if this worker began stopping meanwhile.
   */
  reserve(job: NewQueueJob): Reservation | null {
    const { ctx, slots } = this;
    if (!ctx.live || !this.lock.mayClaim) return null;
    const queue = job.queue ?? null;
    if (queue === null ? !this.o.queues.general : !this.o.queues.named.includes(queue)) return null;
    if (!slots.forReservation) return null;
    slots.reserved++;
    const token = slots.token();
    let handed = false;
    return {
      owner: token,
      until: new Date(Date.now() + this.o.leaseMs).toISOString(),
      hand: (row, prefetched) => {
        if (handed) return;
        handed = true;
        slots.reserved--;
        if (row && !ctx.stopping) return slots.launch(row, token, prefetched);
        // Given back at once, as a claim does with a job claimed while stopping.
        if (row) void ctx.repo.release(row.id, token, row.run_after, row.attempts).catch(() => {});
        ctx.wake();
      },
    };
  }
}
