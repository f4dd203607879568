// Claiming due jobs: one statement takes as many due jobs as the worker has free slots, each
// leased to a new token of the worker for leaseMs (docs/operator-guide.md "The worker"). A wake-up
// during a claim is not lost: the claim runs again once the one on its way has ended.
import type { QueueJobRow, QueueSelection } from './jobs.js';
import type { SessionLock } from './session-lock.js';
import type { Slots } from './slots.js';
import type { WorkerContext } from './worker-context.js';

export class Claims {
  private pumping: Promise<void> | null = null;
  private again = false;

  constructor(
    private readonly ctx: WorkerContext,
    private readonly slots: Slots,
    private readonly lock: SessionLock,
    private readonly o: { leaseMs: number; queues: QueueSelection },
  ) {}

  /** Claims due jobs now, or once more after the claim on its way. */
  wake(): void {
    if (!this.ctx.live) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = this.pump().finally(() => {
      this.pumping = null;
    });
  }

  /** Settles when no claim is on its way (stop() waits for it: jobs it brings back are handed back). */
  async settled(): Promise<void> {
    await this.pumping;
  }

  private async pump(): Promise<void> {
    const { ctx, slots } = this;
    do {
      this.again = false;
      // Without its session lock this worker looks dead to the others: claim nothing.
      if (!this.lock.mayClaim) return;
      while (!ctx.stopping && slots.forClaim > 0) {
        const want = slots.forClaim;
        const token = slots.token();
        let jobs: QueueJobRow[];
        slots.claiming = want;
        try {
          const now = Date.now();
          jobs = await ctx.repo.claim(token, want, new Date(now).toISOString(), new Date(now + this.o.leaseMs).toISOString(), this.o.queues);
        } catch (err) {
          if (ctx.stopping) return;
          ctx.logError('claim', err, 'claiming jobs failed; retrying at the next poll');
          return;
        } finally {
          slots.claiming = 0;
        }
        for (const job of jobs) {
          if (ctx.stopping) {
            // Claimed while stop() began: hand it back at once rather than make it wait for the lease.
            await ctx.repo.release(job.id, token, job.run_after, job.attempts).catch(() => {});
          } else {
            slots.launch(job, token);
          }
        }
        if (jobs.length < want) break;
      }
    } while (this.again && !ctx.stopping);
  }
}
