// Every backend driver, built in one place from the settings (and, as the provisioning issues add
// them, the registered servers), handed to job runs through their context and closed at shutdown
// (DESIGN "Drivers behind interfaces"; docs/decisions/0004-provisioning-seams.md). Tests build
// them the same way, pointed at daemons the test started.
import type { Config } from '../config.js';
import type { Store } from '../db/index.js';
import { changeLogDnsDriver, type DnsDriver } from './dns/driver.js';
import { mysqlDatabaseDriver, type DatabaseDriver } from './databases/driver.js';

export interface Drivers {
  dns: DnsDriver;
  /** Admin connections to the registered database servers, opened on first use. */
  databases: DatabaseDriver;
}

/** `const drivers = buildDrivers({ config, store })` … `await closeDrivers(drivers)`. */
export function buildDrivers({ config, store }: { config: Pick<Config, 'dns'>; store: Store }): Drivers {
  return {
    dns: changeLogDnsDriver(store, { staleMs: config.dns.serverStaleMs }),
    databases: mysqlDatabaseDriver(),
  };
}

/** Closes every driver (connections to backends); never throws. */
export async function closeDrivers(drivers: Drivers): Promise<void> {
  await Promise.allSettled(Object.values(drivers).map((d) => d.close()));
}
