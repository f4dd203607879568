// Done jobs are kept for a while (clients read their outcome), then deleted: every `everyMs` a
// worker deletes the done jobs finished more than `retentionMs` ago. Failed jobs stay.
import { nowIso } from '../db/time.js';
import type { WorkerContext } from './worker-context.js';

export class Purge {
  constructor(
    private readonly ctx: WorkerContext,
    private readonly everyMs: number,
    private readonly retentionMs: number,
  ) {}

  /** Purges now and every `everyMs`. */
  start(): void {
    this.ctx.every(this.everyMs, () => void this.purge());
    void this.purge();
  }

  private async purge(): Promise<void> {
    const { ctx } = this;
    try {
      const n = await ctx.repo.purgeDone(nowIso(-this.retentionMs));
      if (n) ctx.log.info({ purged: n }, 'purged done jobs past retention');
    } catch (err) {
      if (!ctx.stopping) ctx.log.warn({ err }, 'purging done jobs failed');
    }
  }
}
