// Where the change follower meets DNSSEC (docs/decisions/0032-dnssec.md): which zones are signed,
// signing a zone just built with its key from the store, applying a change owner by owner to a
// signed zone with the difference IXFR needs (signatures included), and which zones are due for
// new signatures.
import type { Config } from '../config.js';
import type { Store } from '../db/index.js';
import { DnssecRepository } from './dnssec.repository.js';
import type { OnSkip, Zone } from './zone.js';
import type { ZoneRows } from './zone.repository.js';
import type { DnssecPhase } from '../db/schema.js';
import type { StoredRecord } from './rdata.js';
import { ZoneSigner } from './zone-signer.js';

/** Records that went and came, in wire form (an IXFR step). */
export interface RecordDiff {
  removed: Buffer[];
  added: Buffer[];
}

/** The records in `after` and not in `before`, and the other way round. */
export function diffRecords(before: Buffer[], after: Buffer[]): RecordDiff {
  const key = (b: Buffer) => b.toString('latin1');
  const old = new Map(before.map((b) => [key(b), b]));
  const now = new Map(after.map((b) => [key(b), b]));
  return {
    removed: [...old].filter(([k]) => !now.has(k)).map(([, b]) => b),
    added: [...now].filter(([k]) => !old.has(k)).map(([, b]) => b),
  };
}

export class SignedZones {
  private readonly keys: DnssecRepository;

  constructor(
    store: Store,
    private readonly config: Pick<Config, 'dns' | 'webhooks'>,
  ) {
    this.keys = new DnssecRepository(store.db, config.webhooks.secretKeys);
  }

  /**
   * Whether a domain's zone is served signed: its own choice, else DNS_DNSSEC; and while DNSSEC is
   * being turned off (`disabling`), until the parent's DS is gone.
   */
  wants(rows: Pick<ZoneRows, 'dnssec' | 'dnssecPhase'>): boolean {
    return (rows.dnssec ?? this.config.dns.dnssec.default) || rows.dnssecPhase === 'disabling';
  }

  /**
   * Signs a zone just built with its keys (the first made when it has none): every key published
   * signs; CDS/CDNSKEY name the `active` one, or take the delete form while `disabling`. `prev`, the
   * version it replaces, lends the signatures of the RRsets that stayed the same.
   */
  async sign(zone: Zone, phase: DnssecPhase | null, prev?: Zone): Promise<void> {
    const { algorithm, validityS, refreshS } = this.config.dns.dnssec;
    const keys = await this.keys.zoneKeys(zone.name, algorithm);
    const cds = phase === 'disabling' ? 'delete' : keys.filter((k) => k.role === 'active').map((k) => k.key);
    const signer = new ZoneSigner({ sign: keys.map((k) => k.key), cds }, validityS, refreshS);
    const was = prev?.signer;
    if (prev && was instanceof ZoneSigner) signer.signAll(zone, (o) => was.held(prev, o));
    else signer.signAll(zone);
    zone.signer = signer;
  }

  /**
   * Zone.replaceOwners for a signed zone, signed again where the change reaches (the owners, their
   * NSEC predecessors, the SOA); the difference includes the signatures. A change that moved a
   * delegation signs the whole zone: null then, as the difference is not known (the caller starts
   * the zone's history again, so older serials get the whole zone).
   */
  replaceOwners(zone: Zone, serial: number, owners: string[], records: Iterable<StoredRecord>, onSkip: OnSkip): RecordDiff | null {
    const signer = zone.signer as ZoneSigner;
    const around = [...new Set([...owners, ...signer.neighbours(zone, owners)])];
    const recordsBefore = around.flatMap((o) => zone.recordsAt(o));
    const held = new Map(around.map((o) => [o, signer.held(zone, o)]));
    const before = (o: string) => held.get(o);
    zone.replaceOwners(serial, owners, records, onSkip);
    if (!signer.update(zone, owners, before)) {
      // The owners changed hold signatures over what they were: those are compared with `before`.
      signer.signAll(zone, before);
      return null;
    }
    return diffRecords(recordsBefore, around.flatMap((o) => zone.recordsAt(o)));
  }

  /** Signed zones whose signatures have less than DNS_DNSSEC_REFRESH_S left. */
  due(zones: Iterable<Zone>, now = Date.now()): string[] {
    const limit = now / 1000 + this.config.dns.dnssec.refreshS;
    const out: string[] = [];
    for (const z of zones) if (z.signer instanceof ZoneSigner && z.signer.expiration < limit) out.push(z.name);
    return out;
  }
}
