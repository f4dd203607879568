// Scheduled jobs (JobDefinition.every): every `everyMs` a worker of the general queue enqueues
// each scheduled job whose turn has come. The turn is taken in the database, so one job is
// enqueued per turn whichever worker takes it, and a restart does not enqueue it again.
import { withJobs } from './enqueue.js';
import { QueueRepository } from './queue.repository.js';
import type { JobRegistry } from './types.js';
import type { WorkerContext } from './worker-context.js';

export class Scheduler {
  constructor(
    private readonly ctx: WorkerContext,
    private readonly jobs: JobRegistry,
    private readonly everyMs: number,
  ) {}

  /** Looks now and every `everyMs`, if there are scheduled jobs at all. */
  start(): void {
    if (!this.jobs.scheduled().length) return;
    this.ctx.every(this.everyMs, () => void this.enqueueDue());
    void this.enqueueDue();
  }

  /** Enqueues each scheduled job whose turn has come (one job per turn, whichever worker takes it). */
  private async enqueueDue(): Promise<void> {
    const { ctx } = this;
    for (const { name, definition: d } of this.jobs.scheduled()) {
      try {
        await withJobs(ctx.store, async (trx, enqueue) => {
          if (!(await new QueueRepository(trx).takeScheduledTurn(name, d.every))) return;
          const job = await enqueue({ customerId: null, jobType: d.type, action: d.action, objectId: null, payload: {} });
          ctx.log.info({ job: job.id, schedule: name }, 'enqueued scheduled job');
        });
      } catch (err) {
        ctx.logError('schedule', err, 'enqueueing a scheduled job failed; retrying at the next check');
      }
    }
  }
}
