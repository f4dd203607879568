// A worker's concurrency: the jobs it runs, the slots it has promised to enqueueing transactions
// of its Store (reservations.ts), and the jobs the claim on its way may bring back (claims.ts).
// Each run holds a lease token `${workerId}#${seq}`; heartbeats.ts extends the leases of the runs.
import type { QueueJobRow } from './jobs.js';
import type { WorkerContext } from './worker-context.js';

/** A job this worker runs under lease `token`; `abort` ends the run early, `done` settles when it ends. */
export interface Running {
  job: QueueJobRow;
  token: string;
  abort: AbortController;
  done: Promise<void>;
}

/** Runs a job under its lease (job-run.ts); never rejects for the job's own failure. */
export type RunJob = (job: QueueJobRow, token: string, abort: AbortController, prefetched?: unknown) => Promise<void>;

export class Slots {
  readonly running = new Map<number, Running>();
  /** Slots promised to enqueueing transactions of this Store and not yet handed a job. */
  reserved = 0;
  /** Jobs the claim on its way may bring back; a reservation counts them as taken. */
  claiming = 0;
  private seq = 0;

  constructor(
    private readonly ctx: WorkerContext,
    private readonly concurrency: number,
    private readonly runJob: RunJob,
  ) {}

  /** A new lease token of this worker. */
  token(): string {
    return `${this.ctx.id}#${++this.seq}`;
  }

  /** How many jobs a claim may take now: the reserved slots are not free. */
  get forClaim(): number {
    return this.concurrency - this.running.size - this.reserved;
  }

  /** Whether a reservation finds a free slot: the claim on its way counts as taken too. */
  get forReservation(): boolean {
    return this.running.size + this.reserved + this.claiming < this.concurrency;
  }

  /** Runs `job` under lease `token`; when the run ends its slot is free and the worker looks for more. */
  launch(job: QueueJobRow, token: string, prefetched?: unknown): void {
    const abort = new AbortController();
    const entry: Running = { job, token, abort, done: Promise.resolve() };
    this.running.set(job.id, entry);
    entry.done = this.runJob(job, token, abort, prefetched)
      .catch((err) => this.ctx.log.error({ err, job: job.id }, 'job bookkeeping failed; the lease will expire and the job run again'))
      .finally(() => {
        if (this.running.get(job.id) === entry) this.running.delete(job.id);
        this.ctx.wake();
      });
  }
}
