// The scoped reads of GET /queue-jobs (API guide "Queue jobs"). The queue itself (insert, claim,
// outcomes) is src/queue; this is only its read-only HTTP view.
import type { Kysely } from 'kysely';
import type { Actor } from '../../auth/actor.js';
import type { Database } from '../../db/schema.js';
import { visibleTo } from '../../db/scope.js';
import { ownJobsOfNarrowToken } from '../../auth/token-scope.js';
import { fetchPage, type Page } from '../../db/paging.js';

export class QueueJobsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** API-visible jobs of the caller's scope: menu jobs never show (API guide "Queue jobs"). */
  private base(actor: Actor) {
    return this.db
      .selectFrom('queue_jobs')
      .selectAll('queue_jobs')
      .where('queue_jobs.from_menu', '=', 0)
      .where(visibleTo(actor, 'queue_jobs.customer_id'))
      .$call(ownJobsOfNarrowToken(actor, 'queue_jobs.token_id'));
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
}
