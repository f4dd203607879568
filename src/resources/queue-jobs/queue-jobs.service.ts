// Rules of queue jobs (spec §3.1, §8; API-NOTES §1.6, §5): the list shows pending jobs only; one
// job stays readable until a done job is 24 h past completion.
import type { Actor } from '../../auth/actor.js';
import { notFound } from '../../errors.js';
import type { Page } from '../../db/paging.js';
import { nowIso } from '../../db/time.js';
import { parseNumericId } from '../../db/ids.js';
import type { QueueJobsRepository } from './queue-jobs.repository.js';

/** Finished jobs retention (spec §8): a done job is gone 24 h after `finished_at`. */
export const DONE_JOB_RETENTION_MS = 24 * 60 * 60 * 1000;

export class QueueJobsService {
  constructor(private readonly repo: QueueJobsRepository) {}

  listPending(actor: Actor, page: Page | null) {
    return this.repo.listPending(actor, page);
  }

  /** A done job past retention answers 404 even before the worker's purge has deleted it. */
  async get(actor: Actor, id: string) {
    const n = parseNumericId(id);
    const row = n === null ? undefined : await this.repo.findVisible(actor, n, nowIso(-DONE_JOB_RETENTION_MS));
    if (!row) throw notFound('queue-job');
    return row;
  }
}
