// All SQL of the availability check (API guide "Domain availability"): which names the service's
// own domain registry holds.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

export interface KnownDomain {
  name: string;
  is_registered: 0 | 1;
}

export class DomainAvailabilityRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * The rows among `aceNames` in the domains table of any customer. Deliberately not scoped with
   * visibleTo: a name held by another customer is just as unavailable, and only the name and
   * whether we registered it leave this query — never the owner.
   */
  known(aceNames: string[]): Promise<KnownDomain[]> {
    if (aceNames.length === 0) return Promise.resolve([]);
    return this.db
      .selectFrom('domains')
      .select(['name', 'is_registered'])
      .where('name', 'in', aceNames)
      .execute();
  }
}
