// PostgreSQL: wake-ups from other Stores and processes (wakeups.ts). The worker LISTENs on a
// connection of its own; when that connection breaks it polls until it listens again, and looks
// for due jobs once it does (notifications sent meanwhile are lost).
import { currentSchema } from '../db/dialect.js';
import { JOBS_CHANNEL, wakesUs } from './wakeups.js';
import type { WorkerContext } from './worker-context.js';

const RELISTEN_MS = 5_000;

export class Listener {
  private unlisten: (() => Promise<void>) | null = null;

  constructor(private readonly ctx: WorkerContext) {}

  /** Whether it listens now. */
  get listening(): boolean {
    return this.unlisten !== null;
  }

  /** Listens (where the store can), retrying every RELISTEN_MS until it works. */
  async start(): Promise<void> {
    const { ctx } = this;
    const { store, log } = ctx;
    if (!store.listen || ctx.stopping) return;
    try {
      // NOTIFY carries the sender's schema; deployments sharing the database ignore each other.
      const schema = (await currentSchema(store.db)) ?? '';
      const stop = await store.listen(
        JOBS_CHANNEL,
        (payload) => {
          if (wakesUs(payload, schema, store.signals.tag)) ctx.wake();
        },
        (err) => {
          this.unlisten = null;
          if (ctx.stopping) return;
          log.warn({ err }, 'LISTEN connection lost; polling until it is back');
          ctx.after(RELISTEN_MS, () => void this.start());
        },
      );
      if (ctx.stopping) await stop();
      else {
        this.unlisten = stop;
        // Notifications sent while we were not listening are lost: look now.
        ctx.wake();
      }
    } catch (err) {
      if (ctx.stopping) return;
      log.warn({ err }, 'LISTEN failed; polling until it works');
      ctx.after(RELISTEN_MS, () => void this.start());
    }
  }

  async stop(): Promise<void> {
    await this.unlisten?.().catch(() => {});
    this.unlisten = null;
  }
}
