// Rules of domains (API guide "Domains", "Compatibility with existing clients"): names are looked
// up by their ACE form, only presence domains take the two presence flags.
import type { Static } from 'typebox';
import type { Actor } from '../../auth/actor.js';
import { AppError, invalidField, notFound } from '../../errors.js';
import { EMPTY_PAGE, type Page, type PageResult } from '../../db/paging.js';
import { idValues } from '../../db/ids.js';
import { aceLabel, aceOf } from '../../domain-name.js';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { DomainsRepository, type DomainRow } from './domains.repository.js';
import { seesDomain } from '../../auth/token-scope.js';
import type { DomainUpdateBody } from './domains.schema.js';
import type { ServiceDeps } from '../service-deps.js';
import { lockForCheck, type Precondition } from '../../db/locks.js';
import type { Store } from '../../db/index.js';
import { withJobs } from '../../queue/enqueue.js';
import type { QueueJobRow } from '../../queue/jobs.js';
import { DomainDnssec } from './domains.dnssec.js';
import { DnsRecordsRepository } from '../dns-records/dns-records.repository.js';

export type PresenceUpdate = NonNullable<Static<typeof DomainUpdateBody>['data']['attributes']['presence']>;

export class DomainsService {
  // One repository for the service's life: its hot reads are compiled once (src/db/precompiled.ts).
  private readonly repo: DomainsRepository;

  private readonly db: Kysely<Database>;
  private readonly store: Store;
  private readonly dnssec: DomainDnssec;
  constructor(deps: ServiceDeps) {
    this.store = deps.store;
    this.db = deps.store.db;
    this.repo = new DomainsRepository(this.db);
    this.dnssec = new DomainDnssec(deps.config, deps.dns);
  }

  /** Fills in presence.dnssec (API guide "DNSSEC (extension)"), read in `db` (the write's transaction, if any). */
  private async withDnssec<R extends DomainRow>(rows: R[], db = this.db): Promise<R[]> {
    const views = await this.dnssec.views(db, rows);
    // New objects: rows of the compiled reads are not extensible.
    return rows.map((r) => ({ ...r, dnssec_view: views.get(r.name) }));
  }

  /**
   * The ACE name of the URL segment, or 422 for names that are not IDNA-encodable (e.g.
   * `_acme-challenge.www.example.com`; API guide "Compatibility with existing clients" fixes the
   * detail text). The error has no `source`: the fault is in the path, which is neither a query
   * parameter nor part of the body; `links.self` of the error document shows it. A single label
   * (`net`) is a well-formed name that is nobody's domain here: 404, as the original answers
   * (acme.sh walks down to the TLD).
   */
  requireAce(name: string): string {
    const ace = aceOf(name);
    if (ace !== null) return ace;
    if (aceLabel(name.replace(/\.$/, ''), false) !== null) throw notFound('domain');
    throw new AppError('invalid_api_data', 'Not ACE-encodable.');
  }

  list(actor: Actor, filters: Record<string, string[]>, page: Page | null): Promise<PageResult<DomainRow>> {
    const ownerIds = idValues(filters.owner_id);
    const packageIds = idValues(filters.package_id);
    if (ownerIds?.length === 0 || packageIds?.length === 0) return Promise.resolve(EMPTY_PAGE);
    return this.repo.list(actor, { ownerIds, packageIds }, page).then(async (p) => ({ ...p, rows: await this.withDnssec(p.rows) }));
  }

  /** `withToken(ace)`: what the route's read with the token found for this name, if it ran for it. */
  async get(actor: Actor, name: string, withToken?: (ace: string) => DomainRow[] | undefined) {
    const ace = this.requireAce(name);
    // A token limited to other domains does not see this one (API guide "Scoped tokens").
    if (!seesDomain(actor, ace)) throw notFound('domain');
    const found = withToken?.(ace);
    const row = found ? found[0] : await this.repo.findVisible(actor, ace);
    if (!row) throw notFound('domain');
    return (await this.withDnssec([row]))[0];
  }

  /** GET /domains/{name}: the token's owner and the domain (by ACE name) in one statement (src/auth/plugin.ts TokenRead). */
  oneWithToken(hash: string, ace: string) {
    return this.repo.findVisibleWithToken(hash, ace);
  }

  /**
   * Writes and re-reads in one transaction: the answer shows the flags this write produced. A
   * `precondition` (API guide "Safe retries") is checked there on the domain as it is, locked.
   * `presence.dnssec.enabled` that changes whether the zone is signed also records a change of the
   * whole zone and enqueues the job that is done once every DNS server serves it so (API guide
   * "DNSSEC (extension)"); `job` is null when nothing is to be served differently.
   */
  async updatePresence(actor: Actor, name: string, presence: PresenceUpdate | undefined, precondition?: Precondition<DomainRow>): Promise<{ row: DomainRow; job: QueueJobRow | null }> {
    const domain = await this.get(actor, name);
    if (!domain.has_presence) {
      throw invalidField('presence', 'This domain is not assigned to a presence; it has no presence flags to change.', 'invalid_state');
    }
    const values: { dns_update_lock?: 0 | 1; dns_migration_mode?: 0 | 1 } = {};
    if (presence?.dns_update_lock !== undefined) values.dns_update_lock = presence.dns_update_lock ? 1 : 0;
    if (presence?.dns_migration_mode?.enabled !== undefined) values.dns_migration_mode = presence.dns_migration_mode.enabled ? 1 : 0;
    const dnssec = presence?.dnssec?.enabled;
    return withJobs(this.store, async (trx, enqueue) => {
      const repo = new DomainsRepository(trx);
      const visible = async () => (await repo.findVisible(actor, domain.name)) ?? Promise.reject(notFound('domain'));
      await lockForCheck(trx, precondition, 'domains', 'name', domain.name);
      // Locked as every zone write is: whether the zone is signed is read and changed in one step.
      if (dnssec !== undefined) await new DnsRecordsRepository(trx).lockDomain(domain.name);
      if (precondition) precondition(await visible());
      await repo.updatePresence(actor, domain.name, values);
      const changeId = dnssec === undefined ? null : await this.dnssec.set(trx, domain.name, dnssec);
      const job = changeId === null
        ? null
        : await enqueue({ customerId: domain.customer_id, jobType: 'domain', action: 'update', objectId: domain.name, payload: { domain: domain.name, changeId } });
      return { row: (await this.withDnssec([await visible()], trx))[0], job };
    }, actor);
  }
}
