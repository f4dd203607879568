// Heartbeats: every third of the lease, one statement extends the leases of all the jobs a worker
// runs; a run whose job was taken over meanwhile is aborted (docs/decisions/0005-dead-workers.md).
import type { Slots } from './slots.js';
import { LeaseLostError } from './types.js';
import type { WorkerContext } from './worker-context.js';

export class Heartbeats {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly ctx: WorkerContext,
    private readonly slots: Slots,
    private readonly leaseMs: number,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.beat(), Math.max(1, Math.floor(this.leaseMs / 3)));
  }

  /** No more heartbeats: the leases of runs still going then run out (stop() after its grace period). */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Extends the leases of all running jobs in one statement; aborts the runs whose job was taken over. */
  private async beat(): Promise<void> {
    const live = [...this.slots.running.values()].filter((r) => !r.abort.signal.aborted);
    if (!live.length) return;
    try {
      const held = await this.ctx.repo.heartbeat(
        live.map((r) => ({ id: r.job.id, token: r.token })),
        new Date(Date.now() + this.leaseMs).toISOString(),
      );
      // A run that has just written its outcome is no longer leased either; aborting it changes nothing.
      for (const r of live) if (!held.has(r.job.id)) r.abort.abort(new LeaseLostError(r.job.id));
    } catch (err) {
      // The next heartbeat may get through before the leases run out.
      this.ctx.log.warn({ err, jobs: live.map((r) => r.job.id) }, 'heartbeat failed');
    }
  }
}
