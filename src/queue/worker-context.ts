// What the rooms of a worker share (worker.ts composes them): who the worker is, its store and
// log, whether it has started or is stopping, its timers, and how to wake its claims. Each room
// keeps its own state; this holds only what they all read.
import os from 'node:os';
import crypto from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Store } from '../db/index.js';
import { QueueRepository } from './queue.repository.js';

const ERROR_LOG_EVERY_MS = 30_000;

export class WorkerContext {
  /** Names this worker in `lease_owner` (host, pid, random): operators see who holds a job. */
  readonly id = `${os.hostname()}:${process.pid}:${crypto.randomBytes(3).toString('hex')}`;
  readonly repo: QueueRepository;
  started = false;
  /** Set when stop() begins: from then on the rooms start nothing new. */
  stopping = false;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly lastErrorAt = new Map<string, number>();

  /** `wake` looks for due jobs now (claims.ts). */
  constructor(
    readonly store: Store,
    readonly log: FastifyBaseLogger,
    readonly wake: () => void,
  ) {
    this.repo = new QueueRepository(store.db);
  }

  /** Whether the worker takes jobs: started, and not stopping. */
  get live(): boolean {
    return this.started && !this.stopping;
  }

  /** Calls `fn` in `ms` unless the worker is stopping by then (stop() clears the timers). */
  after(ms: number, fn: () => void): void {
    if (this.stopping) return;
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    this.timers.add(t);
  }

  /** Calls `fn` every `ms` until the worker stops. */
  every(ms: number, fn: () => void): void {
    const tick = () => {
      fn();
      this.after(ms, tick);
    };
    this.after(ms, tick);
  }

  clearTimers(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  /** Logs a failure that repeats while the database is down once every 30 s, not at every try. */
  logError(what: string, err: unknown, message: string): void {
    if (Date.now() - (this.lastErrorAt.get(what) ?? 0) < ERROR_LOG_EVERY_MS) return;
    this.lastErrorAt.set(what, Date.now());
    this.log.error({ err, worker: this.id }, message);
  }
}
