// The usage of databases (issue 8 item 5; API-NOTES §9): `usage.bytes` is data + index bytes as
// the server's information_schema reports them, stored with the time of the measurement. Measured
// by the daily scheduled job (databases.jobs.ts refreshUsageJob) and by `hostplane admin database
// refresh-usage`; null until the first measurement.
import type { Store } from '../../db/index.js';
import { nowIso } from '../../db/time.js';
import type { DatabaseDriver } from '../../provisioning/databases/driver.js';
import { DatabaseServersRepository, serverConn } from '../../provisioning/databases/servers.repository.js';
import { shortError } from '../../queue/worker.js';
import { DatabasesRepository } from './databases.repository.js';

/** What one refresh did: databases measured per server, and the servers that did not answer. */
export interface UsageRefresh {
  measured: Array<{ server: string; databases: number }>;
  failed: Array<{ server: string; error: string }>;
}

/** Names per information_schema query: keeps the IN list of a big server reasonable. */
const CHUNK = 500;

/**
 * Measures every live database on every registered server and stores the sizes. A server that
 * does not answer keeps its databases' last figures and is listed in `failed`; the others are
 * stored all the same: `const r = await refreshDatabaseUsage(store, drivers.databases)`.
 */
export async function refreshDatabaseUsage(store: Store, driver: DatabaseDriver): Promise<UsageRefresh> {
  const result: UsageRefresh = { measured: [], failed: [] };
  const repo = new DatabasesRepository(store.db);
  for (const server of await new DatabaseServersRepository(store.db).list()) {
    const names = await repo.liveNamesOn(server.name);
    if (names.length === 0) continue;
    try {
      let databases = 0;
      for (let i = 0; i < names.length; i += CHUNK) {
        const at = nowIso();
        const usage = await driver.usage(serverConn(server), names.slice(i, i + CHUNK));
        await store.db.transaction().execute((trx) => new DatabasesRepository(trx).setUsage(server.name, usage, at));
        databases += usage.size;
      }
      result.measured.push({ server: server.name, databases });
    } catch (err) {
      result.failed.push({ server: server.name, error: shortError(err) });
    }
  }
  return result;
}

/** One line naming the servers that could not be measured, or null when all were. */
export function usageFailures(r: UsageRefresh): string | null {
  if (r.failed.length === 0) return null;
  return `usage not measured on ${r.failed.map((f) => `${f.server} (${f.error})`).join(', ')}`;
}
