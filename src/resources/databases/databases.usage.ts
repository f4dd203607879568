// The usage of databases (API guide "Databases"): `usage.bytes` is data + index bytes as
// the server's information_schema reports them, stored with the time of the measurement. Measured
// by the daily scheduled job (databases.jobs.ts refreshUsageJob) and by `hostplane admin database
// refresh-usage`; null until the first measurement.
import type { Store } from '../../db/index.js';
import type { DatabaseDriver } from '../../provisioning/databases/driver.js';
import { DatabaseServersRepository, serverConn } from '../../provisioning/databases/servers.repository.js';
import { refreshServerUsage, type UsageRefresh } from '../../queue/usage-refresh.js';
import { DatabasesRepository } from './databases.repository.js';

/**
 * Measures every live database on every registered server and stores the sizes. A server that
 * does not answer keeps its databases' last figures and is listed in `failed`; the others are
 * stored all the same: `const r = await refreshDatabaseUsage(store, drivers.databases)`.
 */
export async function refreshDatabaseUsage(store: Store, driver: DatabaseDriver): Promise<UsageRefresh> {
  const repo = new DatabasesRepository(store.db);
  return refreshServerUsage(await new DatabaseServersRepository(store.db).list(), {
    live: (server) => repo.liveNamesOn(server.name),
    measure: (server, names) => driver.usage(serverConn(server), names),
    save: (server, usage, at) => store.db.transaction().execute((trx) => new DatabasesRepository(trx).setUsage(server.name, usage, at)),
  });
}
