// DNSSEC of a presence domain, the one rule path of the API's PATCH and the operator's
// `hostplane admin domain dnssec enable|disable` (API guide "DNSSEC (extension)";
// docs/decisions/0032-dnssec.md): the choice, the key and a change of the whole zone are written in
// one transaction; the DNS servers sign the zone (or serve it unsigned) when they apply the change.
import type { Kysely } from 'kysely';
import type { Config } from '../../config.js';
import type { Database, DnssecPhase } from '../../db/schema.js';
import { nowIso } from '../../db/time.js';
import { DnssecRepository } from '../../dns/dnssec.repository.js';
import { dnskeyText, dsText, publicKey } from '../../dns/dnssec-keys.js';
import type { DnsDriver } from '../../provisioning/dns/driver.js';
import type { DnssecState, DnssecView } from './domains.repository.js';

const UNSIGNED = { enabled: false, state: 'unsigned', ds_records: [], dnskeys: [] } as const satisfies DnssecView;

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
   * changes how the zone is served, a change of the whole zone: returns its id, or null when the
   * zone stays as it is served (`always` records the change even then: the operator's command
   * re-announces). On: the key is made when there is none; a zone still `disabling` is simply
   * signed on, its CDS naming its key again. Off: a signed zone is not served unsigned at once but
   * goes `disabling`: signed, with the delete form of CDS/CDNSKEY, until the parent has dropped its
   * DS and that DS's TTL has passed (docs/decisions/0032-dnssec.md "Key lifecycle").
   */
  async set(trx: Kysely<Database>, name: string, on: boolean, o: { always?: boolean } = {}): Promise<number | null> {
    const row = await trx.selectFrom('domains').select(['dnssec', 'dnssec_phase']).where('name', '=', name).executeTakeFirstOrThrow();
    const disabling = row.dnssec_phase === 'disabling';
    let changed: boolean;
    if (on) {
      changed = !this.signed(row.dnssec) || disabling;
      await trx.updateTable('domains').set({ dnssec: 1, ...(disabling ? { dnssec_phase: null, dnssec_phase_at: null, dnssec_parent_at: null } : {}) }).where('name', '=', name).execute();
      if (changed || o.always) await new DnssecRepository(trx, this.config.webhooks.secretKeys).signingKey(name, this.config.dns.dnssec.algorithm);
    } else {
      changed = this.signed(row.dnssec) && !disabling;
      // A rollover under way ends here: its keys stay published until the zone goes unsigned.
      const phase = changed ? { dnssec_phase: 'disabling' as const, dnssec_phase_at: nowIso(), dnssec_parent_at: null } : {};
      await trx.updateTable('domains').set({ dnssec: 0, ...phase }).where('name', '=', name).execute();
    }
    return changed || o.always ? this.dns.recordChange(trx, name, null) : null;
  }

  /** presence.dnssec.state: what the DNS servers serve (API guide "DNSSEC (extension)"). */
  state(r: { dnssec: number | null; dnssec_phase: DnssecPhase | null }): DnssecState {
    if (r.dnssec_phase === 'disabling') return 'disabling';
    if (!this.signed(r.dnssec)) return 'unsigned';
    return r.dnssec_phase === 'rolling' ? 'rolling' : 'signed';
  }

  /**
   * presence.dnssec of presence domains, read in `db` (the write's transaction, when there is one):
   * the keys are read only for signed domains (most are not: no extra read).
   */
  async views(db: Kysely<Database>, rows: { name: string; has_presence: number; dnssec: number | null; dnssec_phase: DnssecPhase | null }[]): Promise<Map<string, DnssecView>> {
    const signed = rows.filter((r) => r.has_presence && this.state(r) !== 'unsigned');
    const keys = signed.length ? await new DnssecRepository(db, []).publicKeysOf(signed.map((r) => r.name)) : [];
    const out = new Map<string, DnssecView>();
    for (const r of rows) out.set(r.name, UNSIGNED);
    for (const r of signed) {
      const state = this.state(r);
      const mine = keys.filter((k) => k.domain === r.name);
      const pub = (ks: typeof mine) => ks.map((k) => publicKey(k.flags, k.algorithm, k.public_key));
      // The DS the parent should hold is the CDS: the active key's; none while disabling.
      const ds = state === 'disabling' ? [] : pub(mine.filter((k) => k.role === 'active')).map((k) => dsText(r.name, k));
      out.set(r.name, { enabled: this.signed(r.dnssec), state, ds_records: ds, dnskeys: pub(mine).map(dnskeyText) });
    }
    return out;
  }
}
