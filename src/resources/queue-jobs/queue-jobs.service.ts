// Rules of queue jobs (API guide "Queue jobs", "Compatibility with existing clients"): the list
// shows pending jobs only; one job stays readable until a done job is 24 h past completion.
import type { Actor } from '../../auth/actor.js';
import type { Page } from '../../db/paging.js';
import { findOr404 } from '../../db/ids.js';
import { nowIso } from '../../db/time.js';
import { DONE_JOB_RETENTION_MS } from '../../queue/jobs.js';
import { QueueJobsRepository } from './queue-jobs.repository.js';
import type { ServiceDeps } from '../service-deps.js';

export class QueueJobsService {
  private readonly repo: QueueJobsRepository;
  constructor(deps: ServiceDeps) {
    this.repo = new QueueJobsRepository(deps.store.db);
  }

  listPending(actor: Actor, page: Page | null) {
    return this.repo.listPending(actor, page);
  }

  /** A done job past retention answers 404 even before the worker's purge has deleted it. */
  get(actor: Actor, id: string) {
    return findOr404('queue-job', id, (n) => this.repo.findVisible(actor, n, nowIso(-DONE_JOB_RETENTION_MS)));
  }
}
