// Rules of plans (spec §2.5): read-only; a plan outside the caller's view is 404 like any object.
import type { Actor } from '../../auth/actor.js';
import { notFound } from '../../errors.js';
import type { Page } from '../../db/paging.js';
import { parseNumericId } from '../../db/ids.js';
import type { PlansRepository } from './plans.repository.js';

export class PlansService {
  constructor(private readonly repo: PlansRepository) {}

  list(actor: Actor, page: Page | null) {
    return this.repo.list(actor, page);
  }

  async get(actor: Actor, id: string) {
    const n = parseNumericId(id);
    const row = n === null ? undefined : await this.repo.findVisible(actor, n);
    if (!row) throw notFound('plan');
    return row;
  }
}
