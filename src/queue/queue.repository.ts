// All SQL of the worker (DESIGN "Jobs are rows"; spec §3.1): claim with a lease, heartbeat, the
// outcomes of a run, progress, purge. Enqueueing is QueueJobsRepository.insert.
//
// Fencing: a claim writes a lease token into `lease_owner` that is new for every claim. Every
// later write of that run is conditional on `lease_owner = token and status = 'pending'`, so a
// worker whose lease expired (and whose job another worker took) changes nothing: it learns it
// lost the job from the count of updated rows.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Engine } from '../db/dialect.js';
import type { QueueJobRow } from '../resources/queue-jobs/queue-jobs.repository.js';

const updated = (r: { numUpdatedRows: bigint } | undefined) => Number(r?.numUpdatedRows ?? 0) > 0;

export class QueueRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly engine: Engine,
  ) {}

  /**
   * Claims up to `limit` runnable jobs (pending, due, lease free or expired) for `token` until
   * `leaseUntil`, oldest due first, in ONE statement:
   * - PostgreSQL: `update … where id in (select … for update skip locked) returning *` — concurrent
   *   claimers skip each other's rows instead of waiting or taking the same ones;
   * - SQLite: the same conditional update; SQLite runs one writer at a time, so the statement
   *   sees and takes rows atomically and two processes never claim the same job.
   * A job taken back from an expired lease counts an attempt: a job that kills its worker every
   * time must not be retried forever.
   */
  async claim(token: string, limit: number, now: string, leaseUntil: string): Promise<QueueJobRow[]> {
    return this.db
      .updateTable('queue_jobs')
      .set((eb) => ({
        lease_owner: token,
        lease_until: leaseUntil,
        attempts: eb
          .case()
          .when('lease_owner', 'is not', null)
          .then(eb('attempts', '+', 1))
          .else(eb.ref('attempts'))
          .end(),
      }))
      .where('id', 'in', (eb) => {
        const due = eb
          .selectFrom('queue_jobs as q')
          .select('q.id')
          .where('q.status', '=', 'pending')
          .where('q.run_after', '<=', now)
          .where((w) => w.or([w('q.lease_until', 'is', null), w('q.lease_until', '<', now)]))
          .orderBy('q.run_after')
          .orderBy('q.id')
          .limit(limit);
        return this.engine === 'postgres' ? due.forUpdate().skipLocked() : due;
      })
      .returningAll()
      .execute();
  }

  private fenced(id: number, token: string) {
    return this.db
      .updateTable('queue_jobs')
      .where('id', '=', id)
      .where('lease_owner', '=', token)
      .where('status', '=', 'pending');
  }

  /** Extends the lease of a running job; false when the lease was lost. */
  async heartbeat(id: number, token: string, leaseUntil: string): Promise<boolean> {
    return updated(await this.fenced(id, token).set({ lease_until: leaseUntil }).executeTakeFirst());
  }

  /** The handler answered `done`. */
  async complete(id: number, token: string, now: string): Promise<boolean> {
    const r = await this.fenced(id, token)
      .set({ status: 'done', finished_at: now, error: null, lease_owner: null, lease_until: null })
      .executeTakeFirst();
    return updated(r);
  }

  /** Gives the job back, runnable again at `runAfter`: `wait` (attempts unchanged) or a retry (attempts given). */
  async release(id: number, token: string, runAfter: string, attempts?: number): Promise<boolean> {
    const r = await this.fenced(id, token)
      .set({ run_after: runAfter, lease_owner: null, lease_until: null, ...(attempts === undefined ? {} : { attempts }) })
      .executeTakeFirst();
    return updated(r);
  }

  /** The job will not be retried: status failed with a short message. */
  async fail(id: number, token: string, attempts: number, error: string, now: string): Promise<boolean> {
    const r = await this.fenced(id, token)
      .set({ status: 'failed', attempts, error, finished_at: now, lease_owner: null, lease_until: null })
      .executeTakeFirst();
    return updated(r);
  }

  /** Stores handler progress (JSON text); false when the lease was lost (the caller's transaction must roll back). */
  async saveProgress(id: number, token: string, progress: string): Promise<boolean> {
    return updated(await this.fenced(id, token).set({ progress }).executeTakeFirst());
  }

  /** Deletes done jobs finished before `cutoff` (spec §3.1: removed 24 h after completion); returns how many. */
  async purgeDone(cutoff: string): Promise<number> {
    const r = await this.db
      .deleteFrom('queue_jobs')
      .where('status', '=', 'done')
      .where('finished_at', '<', cutoff)
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
