// The operator's services, built in one place from the deps every resource service gets, each
// handed the services it calls: `const admin = buildAdmin({ store, config, dns })`.
import type { ServiceDeps } from '../resources/service-deps.js';
import { DnsRecordsService } from '../resources/dns-records/dns-records.service.js';
import { SubdomainsService } from '../resources/subdomains/subdomains.service.js';
import { AdminRepository } from './admin.repository.js';
import { CustomersAdminService } from './customers.service.js';
import { PackagesAdminService } from './packages.service.js';
import { DomainsAdminService } from './domains.service.js';
import { DkimService } from '../resources/dns-records/dns-records.dkim.js';
import { DnssecAdminService } from './dnssec.service.js';

export interface Admin {
  customers: CustomersAdminService;
  packages: PackagesAdminService;
  domains: DomainsAdminService;
  /** DKIM keys: rotation, what sends unsigned (API guide "Sending mail"). */
  dkim: DkimService;
  /** DNSSEC of presence domains (docs/decisions/0032-dnssec.md). */
  dnssec: DnssecAdminService;
  /** Reads the operator's listings and tests use directly. */
  repo: AdminRepository;
}

export function buildAdmin(deps: ServiceDeps): Admin {
  const repo = new AdminRepository(deps.store.db);
  const dnsRecords = new DnsRecordsService(deps);
  const customers = new CustomersAdminService(repo);
  const packages = new PackagesAdminService(repo, customers, dnsRecords);
  const domains = new DomainsAdminService(repo, packages, dnsRecords, new SubdomainsService(deps));
  return { customers, packages, domains, dkim: new DkimService(deps), dnssec: new DnssecAdminService(deps), repo };
}
