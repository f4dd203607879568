// Rules of domains (spec §2.3, §4.2; API-NOTES §1.10, §6): names are looked up by their ACE form,
// only presence domains take the two presence flags.
import type { Static } from 'typebox';
import type { Actor } from '../../auth/actor.js';
import { AppError, notFound } from '../../errors.js';
import type { Page, PageResult } from '../../db/paging.js';
import { idValues } from '../../db/ids.js';
import { toAce } from './domain-name.js';
import type { DomainRow, DomainsRepository } from './domains.repository.js';
import type { DomainUpdateBody } from './domains.schema.js';

export type PresenceUpdate = NonNullable<Static<typeof DomainUpdateBody>['data']['attributes']['presence']>;

/** The ACE form of a name in any case, or null when no domain can have it. */
export const aceOf = (name: string) => toAce(name.toLowerCase());

/** Whether two spellings (Unicode/ACE, any case) name the same domain: the PATCH id check. */
export const sameDomainName = (a: string, b: string) => {
  const x = aceOf(a);
  return x !== null && x === aceOf(b);
};


const EMPTY: PageResult<never> = { rows: [], total: 0 };

export class DomainsService {
  constructor(private readonly repo: DomainsRepository) {}

  /**
   * The ACE name of the URL segment, or 422 for names that are not IDNA-encodable (e.g.
   * `_acme-challenge.www.example.com`; API-NOTES §1.10 fixes the detail text). The error has no
   * `source`: the fault is in the path, which is neither a query parameter nor part of the body;
   * `links.self` of the error document shows it.
   */
  requireAce(name: string): string {
    const ace = aceOf(name);
    if (ace === null) throw new AppError('invalid_api_data', 'Not ACE-encodable.');
    return ace;
  }

  list(actor: Actor, filters: Record<string, string[]>, page: Page | null): Promise<PageResult<DomainRow>> {
    const ownerIds = idValues(filters.owner_id);
    const packageIds = idValues(filters.package_id);
    if (ownerIds?.length === 0 || packageIds?.length === 0) return Promise.resolve(EMPTY);
    return this.repo.list(actor, { ownerIds, packageIds }, page);
  }

  async get(actor: Actor, name: string) {
    const row = await this.repo.findVisible(actor, this.requireAce(name));
    if (!row) throw notFound('domain');
    return row;
  }

  async updatePresence(actor: Actor, name: string, presence: PresenceUpdate | undefined) {
    const domain = await this.get(actor, name);
    if (!domain.has_presence) {
      throw new AppError('invalid_state', 'This domain is not assigned to a presence; it has no presence flags to change.', {
        pointer: '/data/attributes/presence',
      });
    }
    const values: { dns_update_lock?: 0 | 1; dns_migration_mode?: 0 | 1 } = {};
    if (presence?.dns_update_lock !== undefined) values.dns_update_lock = presence.dns_update_lock ? 1 : 0;
    if (presence?.dns_migration_mode?.enabled !== undefined) values.dns_migration_mode = presence.dns_migration_mode.enabled ? 1 : 0;
    await this.repo.updatePresence(actor, domain.name, values);
    return this.get(actor, domain.name);
  }
}
