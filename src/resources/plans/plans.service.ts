// Rules of plans (spec §2.5): read-only; a plan outside the caller's view is 404 like any object.
import type { Actor } from '../../auth/actor.js';
import type { Page } from '../../db/paging.js';
import { findOr404 } from '../../db/ids.js';
import type { PlansRepository } from './plans.repository.js';

export class PlansService {
  constructor(private readonly repo: PlansRepository) {}

  list(actor: Actor, page: Page | null) {
    return this.repo.list(actor, page);
  }

  get(actor: Actor, id: string) {
    return findOr404('plan', id, (n) => this.repo.findVisible(actor, n));
  }
}
