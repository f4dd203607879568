// The DNS backend as job runs see it (DESIGN "Drivers behind interfaces"; issue 6 item 4;
// docs/decisions/0003-dns-propagation.md). Today's implementation is hostplane's own DNS servers
// following the change log; secondaries fed by zone transfers (a later issue) fit behind the same
// two calls.
import type { Kysely } from 'kysely';
import type { Store } from '../../db/index.js';
import type { Database } from '../../db/schema.js';
import { isApplied, recordChange } from './propagation.js';

export interface DnsDriver {
  /**
   * Records, in the caller's transaction, that `domain`'s served records changed; returns the
   * change id to wait for: `const id = await dns.recordChange(trx, 'example.com')`.
   */
  recordChange(trx: Kysely<Database>, domain: string): Promise<number>;
  /** True when the change is answered by every live DNS server (and at least one is live). */
  isApplied(changeId: number): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * The change-log driver: DNS servers (`serve`, `hostplane dns`) tail dns_changes and report what
 * they applied; a server silent for `staleMs` (DNS_SERVER_STALE_MS) is not waited for.
 */
export function changeLogDnsDriver(store: Store, opts: { staleMs: number }): DnsDriver {
  return {
    recordChange: (trx, domain) => recordChange(trx, domain),
    isApplied: (changeId) => isApplied(store, changeId, opts),
    close: async () => {},
  };
}
