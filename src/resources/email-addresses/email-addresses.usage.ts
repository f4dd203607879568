// The usage of mailboxes (API guide "E-mail addresses"): `quota.used_bytes` as the mail server's
// doveadm quota reports it, stored with the time of the measurement. Measured by the daily
// scheduled job (email-addresses.jobs.ts) and by `hostplane admin email refresh-usage`; null until
// the first measurement.
import type { Store } from '../../db/index.js';
import type { MailDriver } from '../../provisioning/mail/driver.js';
import { MailServersRepository, mailServerConn } from '../../provisioning/mail/servers.repository.js';
import { refreshServerUsage, type UsageRefresh } from '../../queue/usage-refresh.js';
import { EmailAddressesRepository } from './email-addresses.repository.js';

/** Measures every live mailbox on every registered mail server: `const r = await refreshEmailUsage(store, drivers.mail)`. */
export async function refreshEmailUsage(store: Store, driver: MailDriver): Promise<UsageRefresh> {
  const repo = new EmailAddressesRepository(store.db);
  return refreshServerUsage(await new MailServersRepository(store.db).list(), {
    live: (server) => repo.liveMailboxesOn(server.name),
    measure: (server, addresses) => driver.quotaUsed(mailServerConn(server), addresses),
    save: (server, usage, at) => store.db.transaction().execute((trx) => new EmailAddressesRepository(trx).setUsage(server.name, usage, at)),
  });
}
