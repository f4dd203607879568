// The DNS change log and whether a change is answered by every live DNS server (decision 0003).
// Only the DNS driver (driver.ts) imports it: recordChange in the transaction that changes the zone,
// isApplied before a job is done. Change ids commit in order (an advisory lock on PostgreSQL),
// so a server tailing the log by id misses none.
import type { Kysely } from 'kysely';
import type { Store } from '../../db/index.js';
import { isPostgres, notifySchema, serializeTransactions } from '../../db/dialect.js';
import type { Database } from '../../db/schema.js';
import type { Signals } from '../../db/signals.js';
import { nowIso } from '../../db/time.js';
import { ChangeLogRepository } from './change-log.repository.js';

/** The PostgreSQL channel DNS servers LISTEN on; the payload is the schema (deployments sharing a database ignore each other). */
export const DNS_CHANNEL = 'hostplane_dns';

/** Default DNS_SERVER_STALE_MS: a server silent for longer is no longer counted (nor waited for). */
export const DEFAULT_SERVER_STALE_MS = 5000;

/**
 * The in-process signal (store.signals) of a recorded change, the change id its payload: a DNS
 * server sharing the Store of the process that records a change (serve) hears of it without a round
 * trip through the database.
 */
export const DNS_CHANGE_SIGNAL = 'dns-change';

/**
 * Records that `domain`'s served records (or the zone itself: presence added or removed) changed,
 * inside the caller's transaction, and returns the change id to wait for with isApplied:
 * `const changeId = await recordChange(trx, store.signals, 'example.com', ['www'])`. `owners` are
 * the relative names ('' the apex) whose records changed, so DNS servers reload only those;
 * without it they reload the whole zone. `signals` are the Store's (the DNS driver passes them).
 *
 * Call it last in the transaction: from here until commit, other DNS changes wait (the order
 * lock). A transaction that changes several domains should lock their rows before the first call.
 */
export async function recordChange(trx: Kysely<Database>, signals: Signals, domain: string, owners: string[] | null = null): Promise<number> {
  await serializeTransactions(trx, DNS_CHANNEL);
  const id = await new ChangeLogRepository(trx).appendChange(domain, owners);
  if (isPostgres(trx)) {
    // Delivered when (and only if) the transaction commits, to every listening DNS process.
    await notifySchema(trx, DNS_CHANNEL);
  } else {
    // SQLite: a server sharing this connection reads only after the commit (one connection, one
    // transaction at a time); one on another connection retries briefly until the id appears.
    signals.emit(DNS_CHANGE_SIGNAL, id);
  }
  return id;
}

/**
 * True when the change is answered by every live DNS server, and at least one is live:
 * `if (await isApplied(store, changeId)) return { status: 'done' }`.
 * Live = heartbeat within `staleMs` (DNS_SERVER_STALE_MS; the job handlers pass the setting).
 */
export async function isApplied(store: Store, changeId: number, opts: { staleMs?: number } = {}): Promise<boolean> {
  const since = nowIso(-(opts.staleMs ?? DEFAULT_SERVER_STALE_MS));
  const { live, lowestApplied } = await new ChangeLogRepository(store.db).liveServers(since);
  return live > 0 && lowestApplied >= changeId;
}
