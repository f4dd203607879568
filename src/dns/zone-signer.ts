// Signs a zone of zone.ts in place (docs/decisions/0032-dnssec.md): DNSKEY at the apex, an NSEC per
// authoritative owner in canonical order, an RRSIG per authoritative RRset, kept as RRsets of their
// own at each owner in the wire form answers copy. All of it when a zone is built, then owner by owner
// as changes come: never while a query waits.
import { TYPE_CDNSKEY, TYPE_CDS, TYPE_DNSKEY, TYPE_NSEC, TYPE_RRSIG, canonicalKey, cdsRdata, nsecRdata, rrsigRdata, type PublicKey, type SigningKey, type Validity } from './dnssec-keys.js';
import { findCut } from './lookup.js';
import { listOf, setType, type Sets, type WireSet } from './rrsets.js';
import { T, type Zone } from './zone.js';

/** A record in an RRset's wire form: type, TTL and RDATA. */
interface Rec {
  type: number;
  ttl: number;
  rdata: Buffer;
}

/** The records of an RRset (each `C0 0C` TYPE CLASS TTL RDLENGTH RDATA). */
function recordsOf(s: WireSet): Rec[] {
  const out: Rec[] = [];
  for (let p = 0; p < s.length; ) {
    const len = (s.charCodeAt(p + 10) << 8) | s.charCodeAt(p + 11);
    const ttl = ((s.charCodeAt(p + 6) << 24) | (s.charCodeAt(p + 7) << 16) | (s.charCodeAt(p + 8) << 8) | s.charCodeAt(p + 9)) >>> 0;
    out.push({ type: setType(s.slice(p)), ttl, rdata: Buffer.from(s.slice(p + 12, p + 12 + len), 'latin1') });
    p += 12 + len;
  }
  return out;
}

/** Records in an RRset's wire form, each with its own TTL (an RRSIG has the TTL of the set it covers). */
function wireSetOf(records: Rec[]): WireSet {
  const out = Buffer.allocUnsafe(records.reduce((n, r) => n + 12 + r.rdata.length, 0));
  let p = 0;
  for (const r of records) {
    out[p] = 0xc0;
    out[p + 1] = 0x0c;
    out.writeUInt16BE(r.type, p + 2);
    out.writeUInt16BE(1, p + 4);
    out.writeUInt32BE(r.ttl, p + 6);
    out.writeUInt16BE(r.rdata.length, p + 10);
    p += 12 + r.rdata.copy(out, p + 12);
  }
  return out.toString('latin1');
}

const hasType = (sets: Sets | undefined, type: number) => sets !== undefined && listOf(sets).some((s) => setType(s) === type);

const setsOf = (list: WireSet[]): Sets => (list.length === 1 ? list[0] : list.slice());

/** The type an RRSIG record covers (the first field of its RDATA). */
export const coveredType = (rrsig: Rec) => rrsig.rdata.readUInt16BE(0);

/** Signature times for signatures made now: from an hour before (clocks differ), rounded to the hour. */
export function validityNow(validityS: number, now = Date.now()): Validity {
  const inception = Math.floor(now / 3_600_000) * 3600 - 3600;
  return { inception, expiration: inception + validityS };
}

/** The sets an owner had before a change: their signatures are kept where the set is the same. */
export type Before = (owner: string) => Sets | undefined;

/**
 * What a zone is signed with: `sign`, every key published and signing (two during a rollover:
 * double signatures, RFC 7583 §3.3.2); `cds`, the keys the parent's DS should name (RFC 7344
 * CDS/CDNSKEY), or `delete` for RFC 8078's delete form while DNSSEC is being turned off.
 */
export interface ZoneKeys {
  sign: SigningKey[];
  cds: PublicKey[] | 'delete';
}

/** The types the signer writes at the apex itself: what the store holds of them is not served. */
const MADE_HERE = new Set([TYPE_RRSIG, TYPE_NSEC, TYPE_DNSKEY, TYPE_CDS, TYPE_CDNSKEY]);

/**
 * `new ZoneSigner(key, validityS, refreshS).signAll(zone, prev)`; `signer.update(zone, owners, before)`
 * after a change. A signature is made again only for an RRset that changed, or when the one it has
 * runs out within `refreshS`: a zone built whole again keeps the signatures of what stayed, so its
 * IXFR step is what changed and no more.
 */
export class ZoneSigner {
  /** Canonical keys (dnssec-keys.ts) of the owners in the NSEC chain, sorted. */
  private chain: string[] = [];
  private names = new Map<string, string>();
  /** The earliest expiration of the zone's signatures (seconds). */
  expiration = Infinity;
  /** Signatures that expire before this (seconds) are made again. */
  private keepAfter = 0;

  constructor(
    readonly keys: ZoneKeys,
    private readonly validityS: number,
    private readonly refreshS: number,
  ) {}

  /**
   * Signs every owner; `before` gives the sets an owner had in the version this one replaces, whose
   * signatures are kept where the set is the same (an owner it does not know keeps what it holds).
   */
  signAll(zone: Zone, before: Before = () => undefined): void {
    const v = this.begin();
    this.expiration = Infinity;
    this.chain = [];
    this.names.clear();
    for (const owner of zone.nodes.keys()) if (this.inChain(zone, owner)) this.add(owner);
    this.chain.sort();
    for (const owner of zone.nodes.keys()) this.signOwner(zone, owner, v, before);
  }

  private begin(): Validity {
    const now = Date.now();
    this.keepAfter = now / 1000 + this.refreshS;
    return validityNow(this.validityS, now);
  }

  /**
   * The owners whose records a change of `owners` may alter besides them: their predecessors in
   * the NSEC chain as it is now, and the apex (SOA). Read before the change, to diff it (IXFR).
   */
  neighbours(zone: Zone, owners: Iterable<string>): Set<string> {
    const out = new Set<string>([zone.name]);
    for (const o of owners) {
      const i = this.position(canonicalKey(o));
      out.add(this.names.get(this.chain[(i - 1 + this.chain.length) % this.chain.length]) ?? zone.name);
    }
    return out;
  }

  /**
   * Signs again after `owners` (absolute) were replaced and the serial moved: those owners, the NSEC
   * of their predecessors, the apex's SOA. Returns false when the change moved a delegation (names
   * below it change sides): the caller signs the whole zone then.
   */
  update(zone: Zone, owners: Iterable<string>, before: Before): boolean {
    const v = this.begin();
    const touched = [...owners];
    // A delegation that came or went hides or shows the names below it: the whole zone again.
    for (const o of touched) if (o !== zone.name && zone.cuts.has(o) !== hasType(before(o), T.NS)) return false;
    for (const o of touched) {
      const k = canonicalKey(o);
      const i = this.position(k);
      const was = this.chain[i] === k;
      const now = this.inChain(zone, o);
      if (was && !now) {
        this.chain.splice(i, 1);
        this.names.delete(k);
      } else if (!was && now) {
        this.chain.splice(i, 0, k);
        this.names.set(k, o);
      }
    }
    const done = new Set<string>();
    const sign = (o: string) => {
      if (!done.has(o)) this.signOwner(zone, o, v, before);
      done.add(o);
    };
    for (const o of touched) {
      sign(o);
      const pred = this.predecessor(canonicalKey(o));
      if (pred !== undefined) sign(pred);
    }
    sign(zone.name);
    return true;
  }

  /** The owner of the NSEC record that covers `name` (the last in the chain not after it). */
  covering(name: string): string {
    const k = canonicalKey(name);
    const i = this.position(k);
    const at = this.chain[i] === k ? i : i - 1;
    return this.names.get(this.chain[(at + this.chain.length) % this.chain.length])!;
  }

  private predecessor(k: string): string | undefined {
    if (this.chain.length < 2) return undefined;
    const i = this.position(k);
    return this.names.get(this.chain[(i - 1 + this.chain.length) % this.chain.length]);
  }

  /** The index of `k` in the chain, or where it would go. */
  private position(k: string): number {
    let lo = 0;
    let hi = this.chain.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.chain[mid] < k) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private add(owner: string) {
    const k = canonicalKey(owner);
    this.chain.push(k);
    this.names.set(k, owner);
  }

  /** Authoritative owners and delegation points are in the chain; glue and names below a cut are not. */
  private inChain(zone: Zone, owner: string): boolean {
    if (!zone.nodes.has(owner)) return false;
    const cut = findCut(zone, owner);
    return cut === undefined || cut === owner;
  }

  /** A signature made by `key` that stays valid past the refresh time. */
  private fits(sig: Rec, key: SigningKey): boolean {
    const d = sig.rdata;
    return d[2] === key.algorithm && d.readUInt16BE(16) === key.keyTag && d.readUInt32BE(8) > this.keepAfter;
  }

  /** The DNSKEY, CDS and CDNSKEY sets of the apex, each with the DNSKEY TTL (the SOA's). */
  private apexKeySets(zone: Zone): WireSet[] {
    const ttl = zone.soa.ttl ?? 0;
    const { sign, cds } = this.keys;
    const set = (type: number, rdatas: Buffer[]) => wireSetOf(rdatas.map((rdata) => ({ type, ttl, rdata })));
    const out = [set(TYPE_DNSKEY, sign.map((k) => k.dnskey))];
    if (cds === 'delete') {
      // RFC 8078 §4: CDS 0 0 0 00 and CDNSKEY 0 3 0 AA==.
      out.push(set(TYPE_CDS, [Buffer.from([0, 0, 0, 0, 0])]), set(TYPE_CDNSKEY, [Buffer.from([0, 0, 3, 0, 0])]));
    } else if (cds.length) {
      out.push(set(TYPE_CDS, cds.map((k) => cdsRdata(zone.name, k))), set(TYPE_CDNSKEY, cds.map((k) => k.dnskey)));
    }
    return out;
  }

  /**
   * Writes the owner's DNSSEC sets: DNSKEY at the apex, its NSEC, RRSIGs over what is authoritative
   * there (only DS and NSEC at a delegation; nothing below one). A set that is as it was `before`
   * keeps its signature while that has more than the refresh time left.
   */
  private signOwner(zone: Zone, owner: string, v: Validity, before: Before) {
    const sets = zone.nodes.get(owner);
    if (sets === undefined) return;
    const all = listOf(sets);
    const old = listOf(before(owner) ?? sets);
    const oldSigs = old.filter((s) => setType(s) === TYPE_RRSIG).flatMap(recordsOf);
    const data = all.filter((s) => !MADE_HERE.has(setType(s)));
    if (owner === zone.name) data.push(...this.apexKeySets(zone));
    const cut = findCut(zone, owner);
    if (cut !== undefined && cut !== owner) {
      zone.nodes.set(owner, setsOf(data));
      return;
    }
    const next = this.names.get(this.chain[(this.position(canonicalKey(owner)) + 1) % this.chain.length]) ?? zone.name;
    const types = new Set([...data.map(setType), TYPE_RRSIG, TYPE_NSEC]);
    const minimum = Math.min(zone.soa.ttl ?? 0, (zone.soa.data as { minimum: number }).minimum);
    data.push(wireSetOf([{ type: TYPE_NSEC, ttl: minimum, rdata: nsecRdata(next, [...types].sort((a, b) => a - b)) }]));
    const sigs: Rec[] = [];
    for (const s of data) {
      const type = setType(s);
      if (cut === owner && type !== T.DS && type !== TYPE_NSEC) continue;
      // One signature per key (two during a rollover); each kept while its set is the same.
      const same = old.includes(s);
      for (const key of this.keys.sign) {
        const kept = same ? oldSigs.find((r) => coveredType(r) === type && this.fits(r, key)) : undefined;
        if (kept) {
          sigs.push(kept);
          this.expiration = Math.min(this.expiration, kept.rdata.readUInt32BE(8));
          continue;
        }
        const recs = recordsOf(s);
        const rdata = rrsigRdata({ owner, type, ttl: recs[0].ttl, rdatas: recs.map((r) => r.rdata) }, zone.name, key, v);
        sigs.push({ type: TYPE_RRSIG, ttl: recs[0].ttl, rdata });
        this.expiration = Math.min(this.expiration, v.expiration);
      }
    }
    zone.nodes.set(owner, setsOf([...data, wireSetOf(sigs)]));
  }
}
