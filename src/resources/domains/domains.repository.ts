// All SQL of domains (spec §2.3): every read and write is limited to the caller's scope.
import type { Kysely, Selectable } from 'kysely';
import type { Actor } from '../../auth/actor.js';
import type { Database, DomainsTable, Bool } from '../../db/schema.js';
import { visibleTo } from '../../db/scope.js';
import { fetchPage, type Page } from '../../db/paging.js';

export type DomainRow = Selectable<DomainsTable>;

/** Filters after parsing: each given attribute holds at least one value (OR within, AND across). */
export interface DomainFilters {
  ownerIds?: number[];
  packageIds?: number[];
}

export class DomainsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  private base(actor: Actor) {
    return this.db.selectFrom('domains').selectAll('domains').where(visibleTo(actor, 'domains.customer_id'));
  }

  /** `name` is the ACE form (the primary key). */
  findVisible(actor: Actor, name: string) {
    return this.base(actor).where('domains.name', '=', name).executeTakeFirst();
  }

  list(actor: Actor, f: DomainFilters, page: Page | null) {
    let q = this.base(actor);
    if (f.ownerIds) q = q.where('domains.customer_id', 'in', f.ownerIds);
    if (f.packageIds) q = q.where('domains.package_id', 'in', f.packageIds);
    return fetchPage(q.orderBy('domains.name'), page);
  }

  /** Changes presence flags of a presence domain in scope; returns whether a row was changed. */
  async updatePresence(actor: Actor, name: string, values: { dns_update_lock?: Bool; dns_migration_mode?: Bool }) {
    if (Object.keys(values).length === 0) return true;
    const r = await this.db
      .updateTable('domains')
      .set(values)
      .where('domains.name', '=', name)
      .where('domains.has_presence', '=', 1)
      .where(visibleTo(actor, 'domains.customer_id'))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }
}
