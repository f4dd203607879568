// Writes that the answer does not wait for, gathered into batches (docs/decisions/0029-audit-trail.md,
// 0026-safe-retries.md): an item waits at most FLUSH_MS for others (none while a batch is being
// written: it goes with the next one at once), so under load one statement and one commit carry many
// answers' writes instead of one each. A batch the store could not take right now (busy,
// restarting: src/db/unavailable.ts) is tried again, backing off, for RETRY_FOR_MS, the batches
// after it waiting their turn; what a batch refused for good means is the caller's `fail`.
import { storeUnavailable } from './unavailable.js';

/** How long an item waits for others to be written with (when no batch is being written). */
export const FLUSH_MS = 50;
/** Items per batch, at most. */
const MAX_BATCH = 500;
/** Items waiting, at most: past that (the store is down) an item fails at once. */
const MAX_WAITING = 10_000;
/** How long a batch the store could not take is tried again; the first wait, doubled up to the longest. */
export const RETRY_FOR_MS = 20_000;
const FIRST_RETRY_MS = 100;
const LONGEST_RETRY_MS = 5_000;

export class WriteBatches<T> {
  private waiting: T[] = [];
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> | null = null;

  constructor(
    private readonly write: (batch: T[]) => Promise<void>,
    private readonly fail: (batch: T[], err: unknown) => void,
    private readonly retryForMs = RETRY_FOR_MS,
  ) {}

  add(item: T): void {
    if (this.waiting.length >= MAX_WAITING) return this.fail([item], new Error(`${MAX_WAITING} writes are waiting for the store already`));
    this.waiting.push(item);
    if (this.waiting.length >= MAX_BATCH) this.start();
    else this.timer ??= setTimeout(() => ((this.timer = null), this.start()), FLUSH_MS);
  }

  /** Resolves once every item added so far is written (or failed). */
  async settled(): Promise<void> {
    while (this.waiting.length || this.writing) {
      this.start();
      await this.writing;
    }
  }

  private start(): void {
    if (this.writing || !this.waiting.length) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.writing = this.drain().finally(() => {
      this.writing = null;
      // Added while the last statement ran, after the loop looked: written now.
      this.start();
    });
  }

  private async drain(): Promise<void> {
    while (this.waiting.length) await this.writeTrying(this.waiting.splice(0, MAX_BATCH));
  }

  private async writeTrying(batch: T[]): Promise<void> {
    const until = Date.now() + this.retryForMs;
    for (let wait = FIRST_RETRY_MS; ; wait = Math.min(2 * wait, LONGEST_RETRY_MS)) {
      try {
        return await this.write(batch);
      } catch (err) {
        if (!storeUnavailable(err) || Date.now() + wait > until) return this.fail(batch, err);
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }
}
