// All SQL of domains (API guide "Domains"): every read and write is limited to the caller's scope.
import type { Kysely, Selectable } from 'kysely';
import type { Actor } from '../../auth/actor.js';
import { OWNER_COLUMNS, tokenOwner, type OwnerColumns } from '../../auth/auth.repository.js';
import type { Database, DomainsTable, Bool } from '../../db/schema.js';
import { scopedPrecompiled, visibleTo, visibleToOwner } from '../../db/scope.js';
import { fetchPage, type Page } from '../../db/paging.js';
import { precompiled } from '../../db/precompiled.js';
import { limitedToDomains, withinTokenDomains } from '../../auth/token-scope.js';

/**
 * What a domain's wire representation needs (domainResource), named: the hot reads are prepared
 * statements, whose result columns must not change under them (src/db/precompiled.ts), and the
 * DKIM private key stays in the store.
 */
const COLUMNS = [
  'name',
  'name_unicode',
  'customer_id',
  'package_id',
  'is_registered',
  'registration_created_at',
  'registration_expires_at',
  'registration_status',
  'has_presence',
  'dns_update_lock',
  'dns_migration_mode',
  'dnssec',
  'dnssec_phase',
] as const satisfies readonly (keyof DomainsTable)[];
const SELECTED = COLUMNS.map((c) => `domains.${c}` as const);

export type DomainRow = Pick<Selectable<DomainsTable>, (typeof COLUMNS)[number]> & {
  /** presence.dnssec as the service filled it in (API guide "DNSSEC (extension)"). */
  dnssec_view?: DnssecView;
};

/** presence.dnssec.state (API guide "DNSSEC (extension)"). */
export type DnssecState = 'unsigned' | 'signed' | 'rolling' | 'disabling';

/** presence.dnssec: whether the zone is signed, and what the registry needs. */
export interface DnssecView {
  enabled: boolean;
  state: DnssecState;
  ds_records: string[];
  dnskeys: string[];
}

/** Filters after parsing: each given attribute holds at least one value (OR within, AND across). */
export interface DomainFilters {
  ownerIds?: number[];
  packageIds?: number[];
}

export class DomainsRepository {
  // The reads of GET /domains/{name} (also with the token check in the same statement) and of an
  // unfiltered, unpaged GET /domains, compiled once (docs/decisions/0012-request-path.md).
  private readonly byName;
  private readonly all;
  private readonly byNameWithToken;

  constructor(private readonly db: Kysely<Database>) {
    this.byName = scopedPrecompiled(db, (scope, name: string) => this.base(scope).where('domains.name', '=', name));
    this.all = scopedPrecompiled(db, (scope) => this.base(scope).orderBy('domains.name'));
    this.byNameWithToken = precompiled(db, (hash: string, name: string) => this.withToken(hash, name));
  }

  private base(actor: Actor | { customerId: number; isReseller: boolean }) {
    return this.db.selectFrom('domains').select(SELECTED).where(visibleTo(actor, 'domains.customer_id'));
  }

  /**
   * The owner of the token with this hash and the domain `name` if the owner sees it, in one
   * statement: no row when the token does not authenticate, one row with null domain columns when
   * the owner does not see it (src/auth/plugin.ts TokenRead). One object only: PostgreSQL plans a
   * list joined this way as a scan of the whole table (docs/decisions/0012-request-path.md).
   */
  private withToken(hash: string, name: string) {
    return this.db
      .selectFrom(tokenOwner(this.db, hash))
      .leftJoin('domains', (j) => j.on('domains.name', '=', name).on(visibleToOwner('owner', 'domains.customer_id')))
      .select([...OWNER_COLUMNS, ...SELECTED]);
  }

  /** `name` is the ACE form (the primary key). */
  findVisible(actor: Actor, name: string) {
    return this.byName.first(actor, name);
  }

  /** GET /domains/{name} with its token check: the token's owner and the domain, if the owner sees it. */
  findVisibleWithToken(hash: string, name: string) {
    return this.byNameWithToken.all(hash, name) as Promise<(OwnerColumns & Partial<DomainRow>)[]>;
  }

  async list(actor: Actor, f: DomainFilters, page: Page | null) {
    if (!f.ownerIds && !f.packageIds && !page && !limitedToDomains(actor)) {
      const rows = await this.all.all(actor);
      return { rows, total: rows.length };
    }
    let q = this.base(actor).$call(withinTokenDomains(actor, 'domains.name'));
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
