// All SQL of queue jobs (spec §3.1, API-NOTES §5): the insert every asynchronous write (and the
// worker of the next issue) uses, and the scoped reads of GET /queue-jobs.
import type { Kysely, Selectable } from 'kysely';
import type { Actor } from '../../auth/actor.js';
import type { Database, QueueJobsTable } from '../../db/schema.js';
import { visibleTo } from '../../db/scope.js';
import { fetchPage, type Page } from '../../db/paging.js';
import { nowIso } from '../../db/time.js';
import type { JobAction, JobStatus, JobType } from './queue-jobs.schema.js';

export type QueueJobRow = Selectable<QueueJobsTable>;

export interface NewQueueJob {
  /** The owning customer (relationships.owner); null only for jobs nobody may see. */
  customerId: number | null;
  jobType: JobType;
  action: JobAction;
  /** Id of the object created or changed (links.object), e.g. the new record's id. */
  objectId: string | null;
  /** What the handler needs; stored as JSON, never shown. */
  payload?: unknown;
  /** Started from the customer menu / operator CLI: never listed (spec §3.1). */
  fromMenu?: boolean;
  /** Defaults: a pending job created now, runnable at once. Tests set finished states directly. */
  status?: JobStatus;
  error?: string | null;
  createdAt?: string;
  finishedAt?: string | null;
  runAfter?: string;
}

export class QueueJobsRepository {
  /** Pass the transaction of the write the job belongs to, so both commit together (DESIGN "Jobs are rows"). */
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Stores a job and returns its id:
   * `await new QueueJobsRepository(trx).insert({ customerId, jobType: 'dns-record', action: 'create', objectId: '42' })`.
   */
  async insert(job: NewQueueJob): Promise<number> {
    const createdAt = job.createdAt ?? nowIso();
    const { id } = await this.db
      .insertInto('queue_jobs')
      .values({
        customer_id: job.customerId,
        job_type: job.jobType,
        action: job.action,
        object_id: job.objectId,
        status: job.status ?? 'pending',
        error: job.error ?? null,
        payload: job.payload === undefined ? null : JSON.stringify(job.payload),
        attempts: 0,
        run_after: job.runAfter ?? createdAt,
        lease_owner: null,
        lease_until: null,
        from_menu: job.fromMenu ? 1 : 0,
        created_at: createdAt,
        finished_at: job.finishedAt ?? null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return id;
  }

  /** API-visible jobs of the caller's scope: menu jobs never show (spec §3.1). */
  private base(actor: Actor) {
    return this.db
      .selectFrom('queue_jobs')
      .selectAll('queue_jobs')
      .where('queue_jobs.from_menu', '=', 0)
      .where(visibleTo(actor, 'queue_jobs.customer_id'));
  }

  listPending(actor: Actor, page: Page | null) {
    return fetchPage(this.base(actor).where('queue_jobs.status', '=', 'pending').orderBy('queue_jobs.id'), page);
  }

  /** One job unless it is a done job finished before `doneCutoff` (already due for purging). */
  findVisible(actor: Actor, id: number, doneCutoff: string) {
    return this.base(actor)
      .where('queue_jobs.id', '=', id)
      .where('queue_jobs.status', 'in', ['pending', 'done', 'failed'])
      .where((eb) =>
        eb.or([
          eb('queue_jobs.status', '!=', 'done'),
          eb('queue_jobs.finished_at', 'is', null),
          eb('queue_jobs.finished_at', '>=', doneCutoff),
        ]),
      )
      .executeTakeFirst();
  }

  /** The newest pending job of one kind for one object, e.g. a record's delete job (a repeated DELETE answers it). */
  pendingJobFor(jobType: JobType, action: JobAction, objectId: string) {
    return this.db
      .selectFrom('queue_jobs')
      .select('id')
      .where('job_type', '=', jobType)
      .where('action', '=', action)
      .where('object_id', '=', objectId)
      .where('status', '=', 'pending')
      .orderBy('id', 'desc')
      .executeTakeFirst();
  }
}
