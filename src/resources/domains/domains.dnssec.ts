// DNSSEC of a presence domain, the one rule path of the API's PATCH and the operator's
// `hostplane admin domain dnssec enable|disable` (API guide "DNSSEC (extension)";
// docs/decisions/0032-dnssec.md): the choice, the key and a change of the whole zone are written in
// one transaction; the DNS servers sign the zone (or serve it unsigned) when they apply the change.
import type { Kysely } from 'kysely';
import type { Config } from '../../config.js';
import type { Database } from '../../db/schema.js';
import { DnssecRepository } from '../../dns/dnssec.repository.js';
import { dnskeyText, dsText, publicKey } from '../../dns/dnssec-keys.js';
import type { DnsDriver } from '../../provisioning/dns/driver.js';
import type { DnssecView } from './domains.repository.js';

const OFF = { enabled: false, ds_records: [], dnskeys: [] } as const satisfies DnssecView;

export class DomainDnssec {
  constructor(
    private readonly config: Pick<Config, 'dns' | 'webhooks'>,
    private readonly dns: Pick<DnsDriver, 'recordChange'>,
  ) {}

  /** Whether a zone is signed: the domain's choice (`domains.dnssec`), else DNS_DNSSEC. */
  signed(choice: number | null): boolean {
    return choice === null ? this.config.dns.dnssec.default : choice === 1;
  }

  /**
   * Stores the choice `on` for `name` in `trx` (the caller holds the domain's row) and, when that
   * changes whether the zone is signed, the key (made for `on` when there is none) and a change of
   * the whole zone: returns its id, or null when the zone stays as it is served. `always` records
   * the change even then (the operator's command re-announces).
   */
  async set(trx: Kysely<Database>, name: string, on: boolean, o: { always?: boolean } = {}): Promise<number | null> {
    const row = await trx.selectFrom('domains').select('dnssec').where('name', '=', name).executeTakeFirstOrThrow();
    const was = this.signed(row.dnssec);
    await trx.updateTable('domains').set({ dnssec: on ? 1 : 0 }).where('name', '=', name).execute();
    if (was === on && !o.always) return null;
    if (on) await new DnssecRepository(trx, this.config.webhooks.secretKeys).signingKey(name, this.config.dns.dnssec.algorithm);
    return this.dns.recordChange(trx, name, null);
  }

  /**
   * presence.dnssec of presence domains, read in `db` (the write's transaction, when there is one):
   * the keys are read only for signed domains (most are not: no extra read).
   */
  async views(db: Kysely<Database>, rows: { name: string; has_presence: number; dnssec: number | null }[]): Promise<Map<string, DnssecView>> {
    const signed = rows.filter((r) => r.has_presence && this.signed(r.dnssec)).map((r) => r.name);
    const keys = signed.length ? await new DnssecRepository(db, []).publicKeysOf(signed) : [];
    const out = new Map<string, DnssecView>();
    for (const r of rows) out.set(r.name, OFF);
    for (const name of signed) {
      const pub = keys.filter((k) => k.domain === name).map((k) => publicKey(k.flags, k.algorithm, k.public_key));
      out.set(name, { enabled: true, ds_records: pub.map((k) => dsText(name, k)), dnskeys: pub.map(dnskeyText) });
    }
    return out;
  }
}
