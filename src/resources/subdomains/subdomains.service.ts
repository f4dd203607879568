// Rules of subdomains (API guide "Subdomains"; docs/decisions/0008-web-servers.md).
//
// Life of a subdomain: POST stores it `pending` with its base DNS records (A/AAAA of its web
// server unless it is e-mail only, the plan's MX) and enqueues a create job on its web server's
// queue, in one transaction; the job makes the site live on Caddy (and PHP-FPM) and is done when
// the web server answers the host as configured and DNS answers the records. PATCH changes kind
// and settings the same way; DELETE (our extension) removes the records at once and the
// site through its job, then the row. Customer files are never deleted.
//
// A package is placed on a web server at its first subdomain (the default, unless it names one).
import type { Kysely } from 'kysely';
import type { Actor } from '../../auth/actor.js';
import type { Store } from '../../db/index.js';
import type { Database } from '../../db/schema.js';
import { isUniqueViolation } from '../../db/dialect.js';
import { AppError, invalidField, limitReached, notFound } from '../../errors.js';
import { EMPTY_PAGE, type Page, type PageResult } from '../../db/paging.js';
import { findOr404, idValues } from '../../db/ids.js';
import { aceOf, fqdnOf } from '../../domain-name.js';
import { withJobs, type Enqueue } from '../../queue/enqueue.js';
import type { JobAction, QueueJobRow } from '../../queue/jobs.js';
import type { DnsDriver } from '../../provisioning/dns/driver.js';
import type { ServiceDeps } from '../service-deps.js';
import { WebServersRepository, webQueue, type WebServerRow } from '../../provisioning/web/servers.repository.js';
import { DnsRecordsRepository } from '../dns-records/dns-records.repository.js';
import { conflictInZone } from '../dns-records/dns-records.rules.js';
import { isSpf } from '../dns-records/dns-records.mail-records.js';
import { DnsRecordsService } from '../dns-records/dns-records.service.js';
import { SubdomainsRepository, type SubdomainPackage, type SubdomainRow } from './subdomains.repository.js';
import type { Precondition } from '../../db/locks.js';
import {
  createState, hasAddressRecords, parseSubdomain, patchState, phpChoices, SUBDOMAIN_TYPES,
  type RedirectInput, type RuleContext, type SubdomainState, type SubdomainType, type WebspaceInput,
} from './subdomains.rules.js';
import type { SubdomainJobPayload } from './subdomains.jobs.js';

export interface SubdomainCreateInput {
  subdomain_type: string;
  description?: string | null;
  domain: string;
  subdomain: string;
  webspace?: WebspaceInput | null;
  redirect?: RedirectInput | null;
}

export interface SubdomainUpdateInput {
  description?: string | null;
  webspace?: WebspaceInput | null;
  redirect?: RedirectInput | null;
  subdomain_type?: unknown;
  domain?: unknown;
  subdomain?: unknown;
}

/** A write and its job: the row as the write left it. */
export interface SubdomainWrite {
  row: SubdomainRow;
  job: QueueJobRow;
}

const stateOf = (r: SubdomainRow): SubdomainState => ({
  kind: r.kind,
  webspace_path: r.webspace_path,
  php_version: r.php_version,
  webspace_https: r.webspace_https,
  redirect_target: r.redirect_target,
  redirect_dynamic: r.redirect_dynamic,
  redirect_https: r.redirect_https,
});

export class SubdomainsService {
  private readonly store: Store;
  private readonly settings: { dnsDefaultTtl: number };
  private readonly dnsRecords: DnsRecordsService;
  private readonly dns: DnsDriver;
  constructor(deps: ServiceDeps) {
    ({ store: this.store, config: this.settings, dns: this.dns } = deps);
    this.dnsRecords = new DnsRecordsService(deps);
  }

  private get repo() {
    return new SubdomainsRepository(this.store.db);
  }

  /** Filters: `domain` names the parent domain (Unicode or ACE, any case). */
  list(actor: Actor, filters: Record<string, string[]>, page: Page | null): Promise<PageResult<SubdomainRow>> {
    const domains = filters.domain?.map(aceOf).filter((d): d is string => d !== null);
    const packageIds = idValues(filters.package_id);
    if (domains?.length === 0 || packageIds?.length === 0) return Promise.resolve(EMPTY_PAGE);
    return this.repo.list(actor, { domains, packageIds }, page);
  }

  get(actor: Actor, id: string) {
    return findOr404('subdomain', id, (n) => this.repo.findVisible(actor, n));
  }

  /**
   * Creates a subdomain (API or, with `fromMenu`, the customer menu's `hostplane admin subdomain
   * create`, which alone may leave a redirect without target). Answers the pending row and its job.
   */
  async create(actor: Actor, input: SubdomainCreateInput, o: { fromMenu?: boolean } = {}): Promise<SubdomainWrite> {
    if (!(SUBDOMAIN_TYPES as readonly string[]).includes(input.subdomain_type)) {
      throw invalidField('subdomain_type', `subdomain_type must be one of ${SUBDOMAIN_TYPES.join(', ')}.`);
    }
    const type = input.subdomain_type as SubdomainType;
    const label = parseSubdomain(input.subdomain);
    const zone = await this.dnsRecords.presenceZone(actor, input.domain, label.ace, 'subdomain');
    if (fqdnOf(label.ace, zone.name).length > 253) throw invalidField('subdomain', 'subdomain and domain together exceed 253 characters.');
    const packageId = await this.repo.packageIdOf(zone.name);
    if (packageId === null) throw invalidField('domain', `${zone.name} is not used in a package.`);
    try {
      return await withJobs(this.store, async (trx, enqueue) => {
        const repo = new SubdomainsRepository(trx);
        // One writer per zone at a time: the name check, the records and the limit count hold.
        await new DnsRecordsRepository(trx).lockDomain(zone.name);
        const pkg = (await repo.packageOf(packageId))!;
        const server = await this.place(trx, pkg);
        const ctx = this.ruleContext(pkg, server);
        const uninitialized = o.fromMenu && type === 'redirect' && (input.redirect === undefined || input.redirect === null);
        const state: SubdomainState = uninitialized
          ? { kind: 'redirect', webspace_path: null, php_version: null, webspace_https: 0, redirect_target: null, redirect_dynamic: 0, redirect_https: 0 }
          : createState(type, input.webspace, input.redirect, ctx);
        if (await repo.exists(zone.name, label.ace)) throw this.taken(label.ace, zone.name);
        if ((await repo.countInPackage(pkg.id)) >= pkg.max_subdomains) {
          throw limitReached(`This package has reached its limit of ${pkg.max_subdomains} subdomain${pkg.max_subdomains === 1 ? '' : 's'} (max_subdomains of its plan).`);
        }
        const row = await repo.insert({
          customer_id: pkg.customer_id, package_id: pkg.id, domain: zone.name, name: label.ace, description: input.description ?? '', ...state,
        });
        const dnsChange = await this.syncRecords(trx, row, server, pkg);
        return { row, job: await this.enqueue(enqueue, row, server, 'create', dnsChange, o.fromMenu) };
      }, actor);
    } catch (e) {
      if (isUniqueViolation(e)) throw this.taken(label.ace, zone.name);
      throw e;
    }
  }

  /**
   * PATCH: kind changes and the settings of the kind (API guide "Subdomains"); 202 with the row and
   * its job. A `precondition` (API guide "Safe retries") is checked on the subdomain as it is under
   * the zone's lock, once the change proved valid.
   */
  async update(actor: Actor, id: string, input: SubdomainUpdateInput, precondition?: Precondition<SubdomainRow>): Promise<SubdomainWrite> {
    const found = await this.get(actor, id);
    if (input.subdomain_type !== undefined) {
      throw invalidField('subdomain_type', 'subdomain_type cannot be set: webspace.path makes a subdomain a webspace, redirect.target a redirect.');
    }
    for (const key of ['domain', 'subdomain'] as const) {
      if (input[key] !== undefined) throw invalidField(key, `${key} cannot be changed; create a new subdomain instead.`);
    }
    return withJobs(this.store, async (trx, enqueue) => {
      const repo = new SubdomainsRepository(trx);
      await new DnsRecordsRepository(trx).lockDomain(found.domain);
      const current = await repo.byId(found.id);
      if (!current) throw notFound('subdomain');
      if (current.state === 'deleting') throw new AppError('invalid_state', 'This subdomain is being deleted.');
      const pkg = (await repo.packageOf(current.package_id))!;
      const server = await this.place(trx, pkg);
      const next = patchState(stateOf(current), input.webspace, input.redirect, this.ruleContext(pkg, server));
      precondition?.(current);
      const row = await repo.update(current.id, { ...next, ...(input.description !== undefined ? { description: input.description ?? '' } : {}) });
      const dnsChange = await this.syncRecords(trx, row, server, pkg);
      return { row, job: await this.enqueue(enqueue, row, server, 'update', dnsChange) };
    }, actor);
  }

  /**
   * DELETE (our extension, API guide "Subdomains"): the records go at once, the site through the
   * job, then the row; the files stay. A repeated DELETE answers the pending delete job. A
   * `precondition` is checked as for update.
   */
  async delete(actor: Actor, id: string, precondition?: Precondition<SubdomainRow>): Promise<QueueJobRow> {
    const found = await this.get(actor, id);
    return withJobs(this.store, async (trx, enqueue) => {
      const repo = new SubdomainsRepository(trx);
      await new DnsRecordsRepository(trx).lockDomain(found.domain);
      const row = await repo.byId(found.id);
      if (!row) throw notFound('subdomain');
      precondition?.(row);
      return enqueue.unlessStanding(row.state === 'deleting', { jobType: 'subdomain', action: 'delete', objectId: String(row.id) }, async () => {
        const pkg = (await repo.packageOf(row.package_id))!;
        const server = await this.place(trx, pkg);
        const deleting = await repo.update(row.id, { state: 'deleting' });
        const dnsChange = await this.syncRecords(trx, deleting, server, pkg);
        return this.enqueue(enqueue, deleting, server, 'delete', dnsChange);
      });
    }, actor);
  }

  /** Whether `host` is a subdomain with a site here (the on-demand TLS question). */
  async servesHost(host: string): Promise<boolean> {
    if (host.length > 253) return false;
    const labels = host.toLowerCase().replace(/\.$/, '').split('.');
    const splits = labels.slice(1, -1).map((_, i) => ({ domain: labels.slice(i + 1).join('.'), name: labels.slice(0, i + 1).join('.') }));
    return this.repo.hasSite(splits);
  }

  // ---- shared steps -----------------------------------------------------------------------------

  private taken(name: string, domain: string) {
    return invalidField('subdomain', `${fqdnOf(name, domain)} exists already.`, 'conflict');
  }

  /** The package's web server; a package without one is placed on the default now. */
  private async place(trx: Kysely<Database>, pkg: SubdomainPackage): Promise<WebServerRow> {
    const servers = new WebServersRepository(trx);
    if (pkg.web_server_name) return (await servers.byName(pkg.web_server_name))!;
    const server = await servers.defaultServer();
    if (!server) throw new AppError('service_unavailable', 'No web server is available for subdomains yet. Please try again later or contact support.');
    await new SubdomainsRepository(trx).placePackage(pkg.id, server.name);
    pkg.web_server_name = server.name;
    return server;
  }

  private ruleContext(pkg: SubdomainPackage, server: WebServerRow): RuleContext {
    return {
      homeRoot: server.home_root,
      phpChoices: phpChoices(JSON.parse(pkg.php_versions) as string[], Object.keys(JSON.parse(server.php) as Record<string, string>)),
      https: server.https_listen !== null,
    };
  }

  /**
   * Makes the subdomain's base records what its state needs (none while it is being deleted):
   * A/AAAA of the web server unless it is e-mail only, the plan's MX and, with it, the domain's
   * SPF (the apex's DMARC policy covers the subdomain's mail too) unless a customer's own SPF is
   * there. A custom CNAME at the name or a delegation (NS) at or above it → 409; an identical
   * custom record is left as it is. Returns the DNS change to wait for, or null when nothing changed.
   */
  private async syncRecords(trx: Kysely<Database>, row: SubdomainRow, server: WebServerRow, pkg: SubdomainPackage): Promise<number | null> {
    const records = new DnsRecordsRepository(trx);
    const owned = await records.ofSubdomain(row.id);
    const wanted: { record_type: string; data: string }[] = [];
    if (row.state !== 'deleting') {
      if (hasAddressRecords(row)) {
        for (const ip of JSON.parse(server.addresses) as string[]) wanted.push({ record_type: ip.includes(':') ? 'AAAA' : 'A', data: ip });
      }
      const mx = this.dnsRecords.planMailExchangers({ id: pkg.plan_id, dns_template: pkg.dns_template });
      for (const r of mx) wanted.push({ record_type: 'MX', data: r.data });
      const ownSpf = (await records.recordsAt(row.domain, row.name)).some((r) => r.record_type === 'TXT' && isSpf(r.data) && !owned.some((o) => o.id === r.id));
      if (mx.length && !ownSpf) wanted.push({ record_type: 'TXT', data: await this.dnsRecords.spf(trx) });
    }
    const key = (r: { record_type: string; data: string }) => `${r.record_type} ${r.data}`;
    const stale = owned.filter((r) => !wanted.some((w) => key(w) === key(r)));
    const missing = wanted.filter((w) => !owned.some((r) => key(r) === key(w)));
    if (!stale.length && !missing.length) return null;
    await records.deleteIds(stale.map((r) => r.id));
    const around = (await records.recordsAround(row.domain, row.name, missing.some((w) => w.record_type === 'NS'))).filter((r) => !stale.some((s) => s.id === r.id));
    for (const w of missing) {
      if (around.some((r) => r.name === row.name && key(r) === key(w))) continue;
      const clash = conflictInZone(around, { name: row.name, ...w });
      if (clash) throw invalidField('subdomain', `${fqdnOf(row.name, row.domain)} cannot be used: ${clash.detail}`, 'conflict');
      await records.insertSubdomainBase({ domain: row.domain, name: row.name, ...w, ttl: this.settings.dnsDefaultTtl, subdomain_id: row.id });
    }
    return this.dns.recordChange(trx, row.domain, [row.name, ...stale.map((r) => r.name)]);
  }

  private enqueue(enqueue: Enqueue, row: SubdomainRow, server: WebServerRow, action: JobAction, dnsChange: number | null, fromMenu = false) {
    const payload: SubdomainJobPayload = { dnsChange };
    return enqueue({ customerId: row.customer_id, jobType: 'subdomain', action, objectId: String(row.id), payload, queue: webQueue(server.name), fromMenu });
  }
}
