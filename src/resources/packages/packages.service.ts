// Rules of packages (spec §2.4, §4.1): read-only, scoped; filters owner_id, plan_id, linux_user.
import type { Actor } from '../../auth/actor.js';
import { notFound } from '../../errors.js';
import type { Page, PageResult } from '../../db/paging.js';
import { idValues, parseNumericId } from '../../db/ids.js';
import type { PackageRow, PackagesRepository } from './packages.repository.js';

export class PackagesService {
  constructor(private readonly repo: PackagesRepository) {}

  list(actor: Actor, filters: Record<string, string[]>, page: Page | null): Promise<PageResult<PackageRow>> {
    const ownerIds = idValues(filters.owner_id);
    const planIds = idValues(filters.plan_id);
    // An id filter none of whose values can be an id matches nothing.
    if (ownerIds?.length === 0 || planIds?.length === 0) return Promise.resolve({ rows: [], total: 0 });
    return this.repo.list(actor, { ownerIds, planIds, linuxUsers: filters.linux_user }, page);
  }

  async get(actor: Actor, id: string) {
    const n = parseNumericId(id);
    const row = n === null ? undefined : await this.repo.findVisible(actor, n);
    if (!row) throw notFound('package');
    return row;
  }
}
