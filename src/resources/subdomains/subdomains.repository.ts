// All SQL of subdomains (API guide "Subdomains"): scoped reads for the API (a subdomain is
// visible when its customer is in the caller's scope, src/db/scope.ts), the writes of the service,
// its base DNS records, and what the web jobs read to build a web server's whole configuration.
import type { Kysely, Selectable } from 'kysely';
import type { Actor } from '../../auth/actor.js';
import type { Database, SubdomainsTable } from '../../db/schema.js';
import { visibleTo } from '../../db/scope.js';
import { withinTokenDomains } from '../../auth/token-scope.js';
import { fetchPage, type Page } from '../../db/paging.js';
import { nowIso } from '../../db/time.js';
import type { SubdomainState } from './subdomains.rules.js';

export type SubdomainRow = Selectable<SubdomainsTable>;

export interface SubdomainFilters {
  packageIds?: number[];
  domains?: string[];
}

/** The package a subdomain lives in, with what its rules need. */
export interface SubdomainPackage {
  id: number;
  customer_id: number;
  linux_user: string;
  web_server_name: string | null;
  max_subdomains: number;
  php_versions: string;
  plan_id: number;
  dns_template: string | null;
}

/** A subdomain as its web server serves it: the row, the package's Linux user and its plan's PHP versions (JSON). */
export type SiteRow = SubdomainRow & { linux_user: string; php_versions: string };

export class SubdomainsRepository {
  /** Pass a transaction for writes that belong together (subdomain + records + job). */
  constructor(private readonly db: Kysely<Database>) {}

  private base(actor: Actor) {
    return this.db
      .selectFrom('subdomains')
      .selectAll('subdomains')
      .where(visibleTo(actor, 'subdomains.customer_id'))
      .$call(withinTokenDomains(actor, 'subdomains.domain'));
  }

  findVisible(actor: Actor, id: number) {
    return this.base(actor).where('subdomains.id', '=', id).executeTakeFirst();
  }

  list(actor: Actor, f: SubdomainFilters, page: Page | null) {
    let q = this.base(actor);
    if (f.packageIds) q = q.where('subdomains.package_id', 'in', f.packageIds);
    if (f.domains) q = q.where('subdomains.domain', 'in', f.domains);
    return fetchPage(q.orderBy('subdomains.id'), page);
  }

  byId(id: number) {
    return this.db.selectFrom('subdomains').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The package of a domain's presence, with its plan's limits and offer. */
  packageOf(packageId: number): Promise<SubdomainPackage | undefined> {
    return this.db
      .selectFrom('packages')
      .innerJoin('plans', 'plans.id', 'packages.plan_id')
      .select([
        'packages.id', 'packages.customer_id', 'packages.linux_user', 'packages.web_server_name',
        'plans.max_subdomains', 'plans.php_versions', 'plans.id as plan_id', 'plans.dns_template',
      ])
      .where('packages.id', '=', packageId)
      .executeTakeFirst();
  }

  /** The package id behind a presence domain. */
  async packageIdOf(domain: string): Promise<number | null> {
    const r = await this.db.selectFrom('domains').select('package_id').where('name', '=', domain).executeTakeFirst();
    return r?.package_id ?? null;
  }

  /**
   * Places a package on a web server (its first subdomain; docs/decisions/0008-web-servers.md "Web
   * servers are operator data").
   */
  async placePackage(packageId: number, webServer: string): Promise<void> {
    await this.db.updateTable('packages').set({ web_server_name: webServer }).where('id', '=', packageId).where('web_server_name', 'is', null).execute();
  }

  async countInPackage(packageId: number): Promise<number> {
    const r = await this.db
      .selectFrom('subdomains')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('package_id', '=', packageId)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  exists(domain: string, name: string) {
    return this.db.selectFrom('subdomains').select('id').where('domain', '=', domain).where('name', '=', name).executeTakeFirst();
  }

  insert(v: { customer_id: number; package_id: number; domain: string; name: string; description: string } & SubdomainState): Promise<SubdomainRow> {
    const now = nowIso();
    return this.db
      .insertInto('subdomains')
      .values({ ...v, state: 'pending', created_at: now, updated_at: now })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  /** Writes the new state (and description) of a subdomain; answers the row. */
  update(id: number, v: Partial<SubdomainState> & { description?: string; state?: SubdomainRow['state'] }): Promise<SubdomainRow> {
    return this.db.updateTable('subdomains').set({ ...v, updated_at: nowIso() }).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
  }

  /** The webspace directory its job checked; the web server serves this one. */
  async setServedRoot(id: number, root: string | null): Promise<void> {
    await this.db.updateTable('subdomains').set({ webspace_root: root }).where('id', '=', id).execute();
  }

  /** Moves a subdomain from one state to another; false when it was not in `from`. */
  async transition(id: number, from: SubdomainRow['state'], to: SubdomainRow['state']): Promise<boolean> {
    const r = await this.db.updateTable('subdomains').set({ state: to }).where('id', '=', id).where('state', '=', from).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async delete(id: number): Promise<void> {
    await this.db.deleteFrom('subdomains').where('id', '=', id).execute();
  }

  // ---- what a web server serves -----------------------------------------------------------------

  /** Every subdomain of the packages placed on `webServer` that it should serve (all but those being deleted). */
  sitesOn(webServer: string): Promise<SiteRow[]> {
    return this.db
      .selectFrom('subdomains')
      .innerJoin('packages', 'packages.id', 'subdomains.package_id')
      .innerJoin('plans', 'plans.id', 'packages.plan_id')
      .selectAll('subdomains')
      .select(['packages.linux_user', 'plans.php_versions'])
      .where('packages.web_server_name', '=', webServer)
      .where('subdomains.state', '!=', 'deleting')
      .orderBy('subdomains.id')
      .execute();
  }

  /** One subdomain with its package's Linux user and web server, for its job. */
  siteOf(id: number) {
    return this.db
      .selectFrom('subdomains')
      .innerJoin('packages', 'packages.id', 'subdomains.package_id')
      .innerJoin('plans', 'plans.id', 'packages.plan_id')
      .selectAll('subdomains')
      .select(['packages.linux_user', 'packages.web_server_name', 'plans.php_versions'])
      .where('subdomains.id', '=', id)
      .executeTakeFirst();
  }

  /**
   * Whether one of `splits` (a host cut into subdomain `name` and `domain`, ACE) is a subdomain
   * with a site (the on-demand TLS question), in one query.
   */
  async hasSite(splits: { domain: string; name: string }[]): Promise<boolean> {
    if (!splits.length) return false;
    const row = await this.db
      .selectFrom('subdomains')
      .select('id')
      .where((eb) => eb.or(splits.map((s) => eb.and([eb('domain', '=', s.domain), eb('name', '=', s.name)]))))
      .where('state', '!=', 'deleting')
      .where((eb) => eb.or([eb('kind', '=', 'webspace'), eb.and([eb('kind', '=', 'redirect'), eb('redirect_target', 'is not', null)])]))
      .executeTakeFirst();
    return row !== undefined;
  }
}
