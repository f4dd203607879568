// Registers every resource explicitly.
import type { LinkBuilder } from '../jsonapi/document.js';
import type { TypedApp } from '../jsonapi/typed-app.js';
import type { ServiceDeps } from './service-deps.js';
import { CustomersService } from './customers/customers.service.js';
import { customersRoutes } from './customers/customers.routes.js';
import { DomainsService } from './domains/domains.service.js';
import { domainsRoutes } from './domains/domains.routes.js';
import { PackagesService } from './packages/packages.service.js';
import { packagesRoutes } from './packages/packages.routes.js';
import { PlansService } from './plans/plans.service.js';
import { plansRoutes } from './plans/plans.routes.js';
import { QueueJobsService } from './queue-jobs/queue-jobs.service.js';
import { queueJobsRoutes } from './queue-jobs/queue-jobs.routes.js';
import { DomainAvailabilityService } from './domain-availability/domain-availability.service.js';
import { domainAvailabilityRoutes } from './domain-availability/domain-availability.routes.js';
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
import { rspamdDkimRoutes } from './email-addresses/email-addresses.rspamd-dkim.js';
import { VersionedMaps } from '../provisioning/mail/versioned-map.js';
import { autoconfigRoute } from './email-addresses/email-addresses.autoconfig.js';
import { tlsAllowedRoute } from './tls-allowed.js';
import { SshKeysService } from './ssh-keys/ssh-keys.service.js';
import { sshKeysRoutes } from './ssh-keys/ssh-keys.routes.js';
import { AuditEventsService } from './audit-events/audit-events.service.js';
import { auditEventsRoutes } from './audit-events/audit-events.routes.js';

/** `registerResources(app, { store, config, dns }, links)`: every service gets the same deps. */
export function registerResources(app: TypedApp, deps: ServiceDeps, links: LinkBuilder) {
  customersRoutes(app, new CustomersService(deps), links);
  domainsRoutes(app, new DomainsService(deps), links);
  packagesRoutes(app, new PackagesService(deps), links);
  plansRoutes(app, new PlansService(deps), links);
  queueJobsRoutes(app, new QueueJobsService(deps), links);
  domainAvailabilityRoutes(app, new DomainAvailabilityService(deps), links);
  dnsRecordsRoutes(app, new DnsRecordsService(deps), links);
  databasesRoutes(app, new DatabasesService(deps), links);
  const subdomains = new SubdomainsService(deps);
  subdomainsRoutes(app, subdomains, links);
  const email = new EmailAddressesService(deps);
  emailAddressesRoutes(app, email, links);
  mailAuthReportRoute(app, email);
  const maps = new VersionedMaps(deps.store);
  rspamdSettingsRoute(app, deps.store, maps);
  rspamdDkimRoutes(app, deps.store, maps);
  autoconfigRoute(app, email);
  sshKeysRoutes(app, new SshKeysService(deps), links);
  tlsAllowedRoute(app, [(host) => subdomains.servesHost(host), (host) => email.servesAutoconfig(host)]);
  auditEventsRoutes(app, new AuditEventsService(deps), links);
}
