// Registers every resource explicitly (DESIGN: app.ts registers each resource).
import type { Config } from '../config.js';
import type { Store } from '../db/index.js';
import type { LinkBuilder } from '../jsonapi/document.js';
import type { TypedApp } from '../jsonapi/typed-app.js';
import { CustomersService } from './customers/customers.service.js';
import { customersRoutes } from './customers/customers.routes.js';
import { DomainsService } from './domains/domains.service.js';
import { domainsRoutes } from './domains/domains.routes.js';
import { PackagesRepository } from './packages/packages.repository.js';
import { PackagesService } from './packages/packages.service.js';
import { packagesRoutes } from './packages/packages.routes.js';
import { PlansRepository } from './plans/plans.repository.js';
import { PlansService } from './plans/plans.service.js';
import { plansRoutes } from './plans/plans.routes.js';
import { QueueJobsRepository } from './queue-jobs/queue-jobs.repository.js';
import { QueueJobsService } from './queue-jobs/queue-jobs.service.js';
import { queueJobsRoutes } from './queue-jobs/queue-jobs.routes.js';
import { DomainAvailabilityRepository } from './domain-availability/domain-availability.repository.js';
import { DomainAvailabilityService } from './domain-availability/domain-availability.service.js';
import { domainAvailabilityRoutes } from './domain-availability/domain-availability.routes.js';
import { RdapClient } from './domain-availability/domain-availability.rdap.js';
import { DnsRecordsService } from './dns-records/dns-records.service.js';
import { dnsRecordsRoutes } from './dns-records/dns-records.routes.js';
import { DatabasesService } from './databases/databases.service.js';
import { databasesRoutes } from './databases/databases.routes.js';
import { SubdomainsService } from './subdomains/subdomains.service.js';
import { subdomainsRoutes } from './subdomains/subdomains.routes.js';
import { EmailAddressesService } from './email-addresses/email-addresses.service.js';
import { emailAddressesRoutes } from './email-addresses/email-addresses.routes.js';
import { mailAuthReportRoute } from './email-addresses/email-addresses.auth-report.js';
import { rspamdSettingsRoute } from './email-addresses/email-addresses.rspamd-settings.js';

export interface ResourceDeps {
  config: Config;
  store: Store;
  links: LinkBuilder;
  now?: () => Date;
}

export function registerResources(app: TypedApp, { config, store, links, now }: ResourceDeps) {
  customersRoutes(app, new CustomersService(store.db), links);
  domainsRoutes(app, new DomainsService(store.db), links);
  packagesRoutes(app, new PackagesService(new PackagesRepository(store.db)), links);
  plansRoutes(app, new PlansService(new PlansRepository(store.db)), links);
  queueJobsRoutes(app, new QueueJobsService(new QueueJobsRepository(store.db)), links);
  domainAvailabilityRoutes(
    app,
    new DomainAvailabilityService(new DomainAvailabilityRepository(store.db), new RdapClient(config.rdap)),
    links,
  );
  const dnsRecords = new DnsRecordsService(store, config);
  dnsRecordsRoutes(app, dnsRecords, links);
  databasesRoutes(app, new DatabasesService(store), links);
  subdomainsRoutes(app, new SubdomainsService(store, dnsRecords, config), links);
  const email = new EmailAddressesService(store, { brandWords: config.brandWords, now });
  emailAddressesRoutes(app, email, links);
  mailAuthReportRoute(app, email);
  rspamdSettingsRoute(app, store);
}
