// What every resource service is built with — one shape, whether registerResources, the
// operator's services or a test builds it: `new DatabasesService(deps)`.
import type { Config } from '../config.js';
import type { Store } from '../db/index.js';
import type { DnsDriver } from '../provisioning/dns/driver.js';
import { buildDnsDriver } from '../provisioning/drivers.js';

export interface ServiceDeps {
  store: Store;
  config: Config;
  /** Every change of served DNS records is recorded through it, never by a service itself. */
  dns: DnsDriver;
  /** The clock of rules that depend on the date (tests set it). */
  now?: () => Date;
}

/** The deps of a process's services: `new DatabasesService(serviceDeps(store, config))`. */
export const serviceDeps = (store: Store, config: Config, now?: () => Date): ServiceDeps => ({ store, config, dns: buildDnsDriver({ config, store }), now });
