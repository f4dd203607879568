// Whether a DNS change is answered by every live DNS server (docs/decisions/0003-dns-propagation.md,
// migration 002). Job runs reach it through the DNS driver (driver.ts): a job is done only when
// isApplied is true.
//
//   recordChange(trx, signals, domain) → appends to dns_changes, bumps domains.dns_serial, returns
//     the change id; call it in the same transaction that changes a zone's served records.
//   isApplied(store, changeId, { staleMs }) → true when every DNS server with a heartbeat newer
//     than staleMs (the caller passes DNS_SERVER_STALE_MS) has applied_change_id >= changeId,
//     and at least one server is live.
//
// Why the change log can be tailed by id without missing a change: on PostgreSQL ids come from a
// sequence when the row is inserted, not when it commits, so a reader could see id 11 committed
// while id 10 is still open, move past 10 and never come back. recordChange therefore takes a
// transaction-scoped advisory lock before inserting: ids are handed out and committed strictly in
// order. SQLite has one writer at a time, which gives the same order by itself.
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
