// Operator actions on domains (`hostplane admin domain|subdomain …`): a presence domain gets its
// base records and DKIM key from the dns-records service, a menu subdomain goes through the
// subdomains service as its owner's would.
import { AppError } from '../errors.js';
import { found, invalid } from './operator-errors.js';
import { nowIso } from '../db/time.js';
import { isUniqueViolation } from '../db/dialect.js';
import { aceOf, notADomainName, toUnicode } from '../domain-name.js';
import type { DnsRecordsService, PreparedBaseRecords } from '../resources/dns-records/dns-records.service.js';
import type { SubdomainsService } from '../resources/subdomains/subdomains.service.js';
import { AdminRepository } from './admin.repository.js';
import type { PackagesAdminService } from './packages.service.js';

export interface NewDomain {
  name: string;
  customerId: number;
  /** Presence: the package the domain is used with. */
  packageId?: number | null;
  /** Registered with the service: expiry defaults to one year after creation. */
  registered?: boolean;
  expiresAt?: string;
}

export class DomainsAdminService {
  constructor(
    private readonly repo: AdminRepository,
    private readonly packages: PackagesAdminService,
    private readonly dnsRecords: DnsRecordsService,
    private readonly subdomains: SubdomainsService,
  ) {}

  async domain(name: string) {
    return found(await this.repo.domain(name), `domain ${name}`);
  }

  listDomains() {
    return this.repo.domains();
  }

  async createDomain(d: NewDomain) {
    const ace = aceOf(d.name);
    if (!ace) throw invalid(notADomainName(d.name));
    if (!d.registered && d.packageId == null) throw invalid('A domain is registered, assigned to a package (presence), or both.');
    // A presence domain is served by our DNS servers from the start (API guide "DNS records").
    let base: PreparedBaseRecords | null = null;
    if (d.packageId != null) {
      const pkg = await this.repo.package(d.packageId);
      if (!pkg) throw new AppError('resource_not_found', `No package ${d.packageId}.`);
      if (pkg.customer_id !== d.customerId) throw invalid(`Package ${d.packageId} belongs to another customer.`);
      base = await this.dnsRecords.prepareBaseRecords(await this.packages.plan(pkg.plan_id));
    } else if (!(await this.repo.customer(d.customerId))) {
      throw new AppError('resource_not_found', `No customer ${d.customerId}.`);
    }
    const created = nowIso();
    try {
      await this.repo.db.transaction().execute(async (trx) => {
        await new AdminRepository(trx).insertDomain({
          name: ace,
          name_unicode: toUnicode(ace),
          customer_id: d.customerId,
          package_id: d.packageId ?? null,
          is_registered: d.registered ? 1 : 0,
          registration_created_at: d.registered ? created : null,
          registration_expires_at: d.registered ? (d.expiresAt ?? new Date(Date.now() + 365 * 86400_000).toISOString()) : null,
          registration_status: d.registered ? 'active' : null,
          has_presence: d.packageId != null ? 1 : 0,
          dns_update_lock: 0,
          dns_migration_mode: 0,
          created_at: created,
        });
        if (base) await this.dnsRecords.addBaseRecords(trx, ace, base);
      });
    } catch (e) {
      if (isUniqueViolation(e)) throw new AppError('conflict', `Domain ${ace} exists.`);
      throw e;
    }
    return { domain: ace };
  }

  /**
   * A subdomain made in the customer menu (API guide "Subdomains"): as the domain's owner would through
   * the API, except that a redirect may come without a target (uninitialized). Answers the row and its
   * job.
   */
  async createSubdomain(v: { domain: string; subdomain: string; type: string; target?: string; dynamic?: boolean; path?: string; php?: string; description?: string }) {
    const ace = aceOf(v.domain);
    const domain = ace === null ? undefined : await this.repo.domain(ace);
    if (!domain) throw new AppError('resource_not_found', `No domain ${v.domain}.`);
    const owner = { customerId: domain.customer_id, isReseller: false, contactId: null, tokenId: null };
    return this.subdomains.create(
      owner,
      {
        subdomain_type: v.type,
        domain: domain.name,
        subdomain: v.subdomain,
        description: v.description,
        webspace: v.path !== undefined || v.php !== undefined ? { path: v.path, php_version: v.php } : undefined,
        redirect: v.target !== undefined || v.dynamic !== undefined ? { target: v.target, dynamic: v.dynamic } : undefined,
      },
      { fromMenu: true },
    );
  }
}
