// Every backend driver, built in one place from the settings (and, as the provisioning issues add
// them, the registered servers), handed to job runs through their context and closed at shutdown
// (docs/decisions/0004-provisioning-seams.md). Tests build them the same way, pointed at daemons
// the test started.
import type { Config } from '../config.js';
import type { Store } from '../db/index.js';
import { changeLogDnsDriver, type DnsDriver } from './dns/driver.js';
import { mysqlDatabaseDriver, type DatabaseDriver } from './databases/driver.js';
import { caddyWebDriver, type WebDriver } from './web/driver.js';
import { NODE_ACME_WEBROOT } from './web/caddy-config.js';
import { dovecotMailDriver, type MailDriver } from './mail/driver.js';

/** Where a web server's Caddy asks whether a host may get a certificate (src/resources/tls-allowed.ts). */
export const tlsAskUrl = (publicBaseUrl: string) => `${publicBaseUrl}/internal/tls-allowed`;

export interface Drivers {
  dns: DnsDriver;
  /** Admin connections to the registered database servers, opened on first use. */
  databases: DatabaseDriver;
  /** Caddy and PHP-FPM of the web servers whose jobs this process runs. */
  web: WebDriver;
  /** doveadm and SMTP of the registered mail servers (lookups, mail removal, quota usage). */
  mail: MailDriver;
}

/** The DNS driver alone: what the API's services record DNS changes through. */
export const buildDnsDriver = ({ config, store }: { config: Pick<Config, 'dns'>; store: Store }): DnsDriver =>
  changeLogDnsDriver(store, { staleMs: config.dns.serverStaleMs, secondaryTimeoutMs: config.dns.secondaryTimeoutMs });

/** `const drivers = buildDrivers({ config, store })` … `await closeDrivers(drivers)`. */
export function buildDrivers({ config, store }: { config: Pick<Config, 'dns' | 'publicBaseUrl' | 'webTlsIssuer' | 'acmeDirectory' | 'webApiUpstream' | 'webCreateUsers'>; store: Store }): Drivers {
  const apiFront = config.webApiUpstream ? { host: new URL(config.publicBaseUrl).hostname, upstream: config.webApiUpstream, acmeWebroot: NODE_ACME_WEBROOT } : null;
  return {
    dns: buildDnsDriver({ config, store }),
    databases: mysqlDatabaseDriver(),
    web: caddyWebDriver({ askUrl: tlsAskUrl(config.publicBaseUrl), tls: config.webTlsIssuer, acmeDirectory: config.acmeDirectory, apiFront, createUsers: config.webCreateUsers }),
    mail: dovecotMailDriver(),
  };
}

/** Closes every driver (connections to backends); never throws. */
export async function closeDrivers(drivers: Drivers): Promise<void> {
  await Promise.allSettled(Object.values(drivers).map((d) => d.close()));
}
