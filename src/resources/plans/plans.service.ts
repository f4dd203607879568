// Rules of plans (API guide "Plans"): read-only; a plan outside the caller's view is 404 like any
// object.
import type { Actor } from '../../auth/actor.js';
import type { Page } from '../../db/paging.js';
import { findOr404 } from '../../db/ids.js';
import { PlansRepository } from './plans.repository.js';
import type { ServiceDeps } from '../service-deps.js';

export class PlansService {
  private readonly repo: PlansRepository;
  constructor(deps: ServiceDeps) {
    this.repo = new PlansRepository(deps.store.db);
  }

  list(actor: Actor, page: Page | null) {
    return this.repo.list(actor, page);
  }

  get(actor: Actor, id: string) {
    return findOr404('plan', id, (n) => this.repo.findVisible(actor, n));
  }
}
