// All SQL of the queue (API guide "Queue jobs"): the insert, the claim under a lease, heartbeats,
// outcomes, progress, purge. Every write of a run is fenced by its claim's token (`lease_owner`), so
// a worker that lost its job changes nothing and learns so from the count of updated rows.
import { sql, type Insertable, type InsertQueryBuilder, type Kysely, type QueryCreator } from 'kysely';
import type { Database, QueueJobsTable } from '../db/schema.js';
import { isPostgres } from '../db/dialect.js';
import { nowIso } from '../db/time.js';
import type { JobAction, JobType, NewQueueJob, QueueJobRow, QueueSelection } from './jobs.js';

const updated = (r: { numUpdatedRows: bigint } | undefined) => Number(r?.numUpdatedRows ?? 0) > 0;

/** The row `insert` stores for `job`. */
function jobValues(job: NewQueueJob): Insertable<QueueJobsTable> {
  const createdAt = job.createdAt ?? nowIso();
  return {
    customer_id: job.customerId,
    job_type: job.jobType,
    action: job.action,
    object_id: job.objectId,
    status: job.status ?? 'pending',
    error: job.error ?? null,
    payload: job.payload === undefined ? null : JSON.stringify(job.payload),
    attempts: 0,
    run_after: job.runAfter ?? createdAt,
    lease_owner: job.lease?.owner ?? null,
    lease_until: job.lease?.until ?? null,
    from_menu: job.fromMenu ? 1 : 0,
    created_at: createdAt,
    finished_at: job.finishedAt ?? null,
    queue: job.queue ?? null,
    token_id: job.tokenId ?? null,
  };
}

/** The kind of job on one object: what a repeated request looks for (standingJobFor). */
export interface JobKey {
  jobType: JobType;
  action: JobAction;
  objectId: string;
}

/** An object's INSERT … RETURNING, built by its repository for insertWithObject (one row or none). */
export type ObjectInsert<R> = InsertQueryBuilder<Database, any, R>;

/**
 * PostgreSQL: the insert of `job` as one part of a bigger statement, one job per row of the CTE
 * `source`, whose `id` becomes the job's object_id; every other value is what `insert` stores.
 */
function insertJobPer(qc: QueryCreator<any>, job: NewQueueJob, source: string) {
  const { object_id: _objectId, ...values } = jobValues(job);
  const columns = Object.keys(values) as (keyof typeof values)[];
  // Parameters of an INSERT … SELECT get the types of their target columns.
  return (qc as QueryCreator<Database>)
    .insertInto('queue_jobs')
    .columns([...columns, 'object_id'])
    .expression((eb) =>
      (eb as unknown as QueryCreator<Record<string, Record<string, unknown>>>)
        .selectFrom(source)
        .select([...columns.map((c) => sql.val(values[c]).as(c)), sql<string>`cast(${sql.ref(`${source}.id`)} as text)`.as('object_id')]),
    )
    .returningAll();
}

export class QueueRepository {
  /** The dialect, learnt once: the worker keeps one repository, and claim runs at every poll. */
  private readonly postgres: boolean;

  /** Pass the transaction of the write a job belongs to, so both commit together. */
  constructor(private readonly db: Kysely<Database>) {
    this.postgres = isPostgres(db);
  }

  /**
   * Stores a job and returns its row:
   * `await new QueueRepository(trx).insert({ customerId, jobType: 'dns-record', action: 'create', objectId: '42' })`.
   * Producers call it through withJobs (src/queue/enqueue.ts), which also wakes the workers.
   */
  async insert(job: NewQueueJob): Promise<QueueJobRow> {
    return this.db.insertInto('queue_jobs').values(jobValues(job)).returningAll().executeTakeFirstOrThrow();
  }

  /**
   * Stores an object (`insert`, its repository's INSERT … RETURNING of one row or none) and `job`
   * on it (object_id: the new row's id); undefined when the insert stored nothing. One statement
   * on PostgreSQL (data-modifying CTEs: one round trip for both), two on SQLite.
   */
  async insertWithObject<R extends { id: number }>(job: NewQueueJob, insert: ObjectInsert<R>): Promise<{ row: R; job: QueueJobRow } | undefined> {
    if (!this.postgres) {
      const row = (await insert.executeTakeFirst()) as R | undefined;
      return row && { row, job: await this.insert({ ...job, objectId: String(row.id) }) };
    }
    const r = await this.db
      .with('o', () => insert)
      .with('j', (qc) => insertJobPer(qc, job, 'o'))
      .selectFrom('o')
      .leftJoin('j', (j) => j.onTrue())
      .select([sql<R>`to_json(o)`.as('row'), sql<QueueJobRow>`to_json(j)`.as('job')])
      .executeTakeFirst();
    return r && { row: r.row as R, job: r.job };
  }

  /**
   * The newest job of one kind for one object unless it failed, e.g. a record's delete job (a repeated
   * DELETE answers it). A done one counts too: on PostgreSQL a DELETE may read the row just before
   * the job removes it and the job just after it was marked done (read committed), and must still
   * answer that job, not enqueue another. The newest only, so an id used again (SQLite) never finds
   * the job of the row it had before.
   */
  async standingJobFor(jobType: JobType, action: JobAction, objectId: string): Promise<QueueJobRow | undefined> {
    const newest = await this.db
      .selectFrom('queue_jobs')
      .selectAll()
      .where('job_type', '=', jobType)
      .where('action', '=', action)
      .where('object_id', '=', objectId)
      .orderBy('id', 'desc')
      .executeTakeFirst();
    return newest?.status === 'failed' ? undefined : newest;
  }

  /**
   * Claims up to `limit` runnable jobs (pending, due, lease free or expired) for `token` until
   * `leaseUntil`, oldest due first, in one statement (PostgreSQL: `for update skip locked`; SQLite's
   * single writer makes the update atomic). A job taken back from a lost lease counts an attempt; a
   * job waits while an older job of its type on its object is pending. On PostgreSQL the claim
   * commits without waiting for its WAL flush (`synchronous_commit` off, one disk flush less per
   * job): a claim lost in a crash only leaves its job unleased, and the next run is fenced anyway.
   */
  async claim(token: string, limit: number, now: string, leaseUntil: string, queues: QueueSelection = { general: true, named: [] }): Promise<QueueJobRow[]> {
    const claimed = this.db
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
          .where((w) => {
            const of = [...(queues.general ? [w('q.queue', 'is', null)] : []), ...(queues.named.length ? [w('q.queue', 'in', queues.named)] : [])];
            return of.length ? w.or(of) : sql<boolean>`1 = 0`;
          })
          .where((w) => w.or([w('q.lease_until', 'is', null), w('q.lease_until', '<', now)]))
          .where(({ not, exists, selectFrom }) =>
            not(
              exists(
                selectFrom('queue_jobs as e')
                  .select('e.id')
                  .whereRef('e.job_type', '=', 'q.job_type')
                  .whereRef('e.object_id', '=', 'q.object_id')
                  .where('e.status', '=', 'pending')
                  .whereRef('e.id', '<', 'q.id'),
              ),
            ),
          )
          .orderBy('q.run_after')
          .orderBy('q.id')
          .limit(limit);
        return this.postgres ? due.forUpdate().skipLocked() : due;
      });
    // set_config(…, true) lasts until the statement's own transaction ends, after its commit.
    return (this.postgres ? claimed.where(sql<boolean>`set_config('synchronous_commit', 'off', true) is not null`) : claimed).returningAll().execute();
  }

  private fenced(id: number, token: string) {
    return this.db
      .updateTable('queue_jobs')
      .where('id', '=', id)
      .where('lease_owner', '=', token)
      .where('status', '=', 'pending');
  }

  /**
   * Extends the leases of a worker's running jobs, in one statement however many they are;
   * returns the ids whose lease it still held (the others were taken over).
   */
  async heartbeat(leases: { id: number; token: string }[], leaseUntil: string): Promise<Set<number>> {
    if (!leases.length) return new Set();
    const rows = await this.db
      .updateTable('queue_jobs')
      .set({ lease_until: leaseUntil })
      .where('id', 'in', leases.map((l) => l.id))
      .where('lease_owner', 'in', [...new Set(leases.map((l) => l.token))])
      .where('status', '=', 'pending')
      .returning(['id', 'lease_owner'])
      .execute();
    const held = new Set(rows.map((r) => `${r.id} ${r.lease_owner}`));
    return new Set(leases.filter((l) => held.has(`${l.id} ${l.token}`)).map((l) => l.id));
  }

  /** The lease tokens of running jobs (pending, leased, lease not run out): whose workers to check. */
  async leaseTokens(now: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('queue_jobs')
      .select('lease_owner')
      .distinct()
      .where('status', '=', 'pending')
      .where('lease_until', '>=', now)
      .execute();
    return rows.map((r) => r.lease_owner!).filter(Boolean);
  }

  /**
   * Ends the leases of the given tokens now, for a worker known to be dead: the next claim takes
   * the jobs over (counting an attempt, as after an expired lease). `lease_owner` stays until
   * then, so the ordinary lease rules and fencing apply unchanged. Returns how many jobs.
   */
  async endLeases(tokens: string[]): Promise<number> {
    if (!tokens.length) return 0;
    const r = await this.db
      .updateTable('queue_jobs')
      .set({ lease_until: null })
      .where('lease_owner', 'in', tokens)
      .where('status', '=', 'pending')
      .where('lease_until', 'is not', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
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

  /**
   * Takes the turn of the scheduled job `name` if it is due: moves its next run `everyMs` ahead
   * and answers true, or answers false when it is not due or another worker took the turn. A
   * schedule seen for the first time is due at once. Call it in the transaction that enqueues the
   * job (withJobs), so the turn and the job commit together:
   * `if (await new QueueRepository(trx).takeScheduledTurn('database:refresh', DAY_MS)) await enqueue(…)`.
   * On PostgreSQL a second worker's update waits for the first and then finds the row no longer
   * due; SQLite runs one writer at a time.
   */
  async takeScheduledTurn(name: string, everyMs: number): Promise<boolean> {
    const now = nowIso();
    await this.db
      .insertInto('queue_schedules')
      .values({ name, next_run_at: now })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
    const r = await this.db
      .updateTable('queue_schedules')
      .set({ next_run_at: nowIso(everyMs) })
      .where('name', '=', name)
      .where('next_run_at', '<=', now)
      .executeTakeFirst();
    return updated(r);
  }

  /**
   * Deletes done jobs finished before `cutoff` (API guide "Queue jobs": removed 24 h after
   * completion); returns how many.
   */
  async purgeDone(cutoff: string): Promise<number> {
    const r = await this.db
      .deleteFrom('queue_jobs')
      .where('status', '=', 'done')
      .where('finished_at', '<', cutoff)
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
