// Rules of packages (API guide "Packages", "Filters and paging"): read-only, scoped; filters
// owner_id, plan_id, linux_user.
import type { Actor } from '../../auth/actor.js';
import { EMPTY_PAGE, type Page, type PageResult } from '../../db/paging.js';
import { findOr404, idValues } from '../../db/ids.js';
import { PackagesRepository, type PackageRow } from './packages.repository.js';
import type { ServiceDeps } from '../service-deps.js';

export class PackagesService {
  private readonly repo: PackagesRepository;
  constructor(deps: ServiceDeps) {
    this.repo = new PackagesRepository(deps.store.db);
  }

  list(actor: Actor, filters: Record<string, string[]>, page: Page | null): Promise<PageResult<PackageRow>> {
    const ownerIds = idValues(filters.owner_id);
    const planIds = idValues(filters.plan_id);
    // An id filter none of whose values can be an id matches nothing.
    if (ownerIds?.length === 0 || planIds?.length === 0) return Promise.resolve(EMPTY_PAGE);
    return this.repo.list(actor, { ownerIds, planIds, linuxUsers: filters.linux_user }, page);
  }

  /** `withToken(n)`: what the route's read with the token found for package n, if it ran for it. */
  get(actor: Actor, id: string, withToken?: (id: number) => PackageRow[] | undefined) {
    return findOr404('package', id, async (n) => {
      const found = withToken?.(n);
      return found ? found[0] : this.repo.findVisible(actor, n);
    });
  }

  /** GET /packages/{id}: the token's owner and the package in one statement (src/auth/plugin.ts TokenRead). */
  oneWithToken(hash: string, id: number) {
    return this.repo.findVisibleWithToken(hash, id);
  }
}
