// All SQL of packages (spec §2.4): reads only, limited to the caller's scope.
import type { Kysely, Selectable } from 'kysely';
import type { Actor } from '../../auth/actor.js';
import type { Database, PackagesTable } from '../../db/schema.js';
import { visibleTo } from '../../db/scope.js';
import { fetchPage, type Page } from '../../db/paging.js';

export type PackageRow = Selectable<PackagesTable>;

/** Filters after parsing: each given attribute holds at least one value (OR within, AND across). */
export interface PackageFilters {
  ownerIds?: number[];
  planIds?: number[];
  linuxUsers?: string[];
}

export class PackagesRepository {
  constructor(private readonly db: Kysely<Database>) {}

  private base(actor: Actor) {
    return this.db.selectFrom('packages').selectAll('packages').where(visibleTo(actor, 'packages.customer_id'));
  }

  findVisible(actor: Actor, id: number) {
    return this.base(actor).where('packages.id', '=', id).executeTakeFirst();
  }

  list(actor: Actor, f: PackageFilters, page: Page | null) {
    let q = this.base(actor);
    if (f.ownerIds) q = q.where('packages.customer_id', 'in', f.ownerIds);
    if (f.planIds) q = q.where('packages.plan_id', 'in', f.planIds);
    if (f.linuxUsers) q = q.where('packages.linux_user', 'in', f.linuxUsers);
    return fetchPage(q.orderBy('packages.id'), page);
  }
}
