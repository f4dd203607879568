// Signs a zone of zone.ts in place (docs/decisions/0032-dnssec.md): DNSKEY, CDS and CDNSKEY at the apex, an NSEC per
// authoritative owner in canonical order, an RRSIG per authoritative RRset. Each owner keeps its
// signatures in signed-form.ts's compact form; its NSEC is made from the chain when asked for. All of
// it when a zone is built, then owner by owner as changes come: never while a query waits.
import { TYPE_CDNSKEY, TYPE_CDS, TYPE_DNSKEY, TYPE_NSEC, TYPE_RRSIG, cdsRdata, rrsigRdata, type PublicKey, type SigningKey, type Validity } from './dnssec-keys.js';
import { findCut } from './lookup.js';
import { listOf, pickSet, setType, type Sets, type WireSet } from './rrsets.js';
import { SigTable, canonicalCompare, dataSets, nsecSet, ttlOf, type Sig } from './signed-form.js';
import { T, type Zone, type ZoneSigning } from './zone.js';

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

/** Signature times for signatures made now: from an hour before (clocks differ), rounded to the hour. */
export function validityNow(validityS: number, now = Date.now()): Validity {
  const inception = Math.floor(now / 3_600_000) * 3600 - 3600;
  return { inception, expiration: inception + validityS };
}

/**
 * What an owner held before a change: its sets, its NSEC (made from the chain of then; none when it
 * was not in it) and its signatures.
 */
export interface Held {
  sets: Sets;
  nsec: WireSet | undefined;
  sigs: Sig[];
}

/** What an owner held before a change, where the caller knows it (else it keeps what it holds). */
export type Before = (owner: string) => Held | undefined;

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
 * IXFR step is what changed and no more. What it stores at each owner is signed-form.ts's.
 */
export class ZoneSigner implements ZoneSigning {
  /** The owners in the NSEC chain, in canonical order (the zone's own strings: no copies). */
  private chain: string[] = [];
  private table: SigTable;
  /** The places in the chain `covering` found last and before. */
  private found = 0;
  private foundBefore = 0;
  /** The TTL of NSEC records (4 bytes): the SOA's MINIMUM or TTL, the smaller (RFC 4035 §2.3). */
  private nsecTtl = '\0\0\0\0';
  /** Moves with each signing (zone.ts's ZoneSigning). */
  version = 0;
  /** The earliest expiration of the zone's signatures (seconds). */
  expiration = Infinity;
  /** Signatures that expire before this (seconds) are made again. */
  private keepAfter = 0;

  constructor(
    readonly keys: ZoneKeys,
    private readonly validityS: number,
    private readonly refreshS: number,
  ) {
    this.table = new SigTable('');
  }

  /**
   * Signs every owner; `before` gives what an owner held in the version this one replaces, whose
   * signatures are kept where the set is the same (an owner it does not know keeps what it holds).
   */
  signAll(zone: Zone, before: Before = () => undefined): void {
    const v = this.begin(zone);
    const was = this.chain;
    const oldTable = this.table;
    this.table = new SigTable(zone.name);
    this.expiration = Infinity;
    this.chain = [];
    for (const owner of zone.nodes.keys()) if (this.inChain(zone, owner)) this.chain.push(owner);
    this.chain.sort(canonicalCompare);
    const held = (o: string) => before(o) ?? this.heldIn(zone, o, was, oldTable);
    for (const owner of zone.nodes.keys()) this.signOwner(zone, owner, v, held);
  }

  private begin(zone: Zone): Validity {
    this.version++;
    const now = Date.now();
    this.keepAfter = now / 1000 + this.refreshS;
    const minimum = Math.min(zone.soa.ttl ?? 0, (zone.soa.data as { minimum: number }).minimum);
    this.nsecTtl = String.fromCharCode(minimum >>> 24, (minimum >> 16) & 0xff, (minimum >> 8) & 0xff, minimum & 0xff);
    return validityNow(this.validityS, now);
  }

  /** What `owner` holds now (before a change: read it then). */
  held(zone: Zone, owner: string): Held | undefined {
    return this.heldIn(zone, owner, this.chain, this.table);
  }

  private heldIn(zone: Zone, owner: string, chain: string[], table: SigTable): Held | undefined {
    const sets = zone.nodes.get(owner);
    if (sets === undefined) return undefined;
    const next = nextIn(chain, owner);
    return { sets, nsec: next === undefined ? undefined : nsecSet(sets, next, this.nsecTtl), sigs: table.decode(pickSet(sets, TYPE_RRSIG)) };
  }

  /**
   * The owners whose records a change of `owners` may alter besides them: their predecessors in
   * the NSEC chain as it is now, and the apex (SOA). Read before the change, to diff it (IXFR).
   */
  neighbours(zone: Zone, owners: Iterable<string>): Set<string> {
    const out = new Set<string>([zone.name]);
    for (const o of owners) {
      const i = position(this.chain, o);
      out.add(this.chain[(i - 1 + this.chain.length) % this.chain.length] ?? zone.name);
    }
    return out;
  }

  /**
   * Signs again after `owners` (absolute) were replaced and the serial moved: those owners, the NSEC
   * of their predecessors, the apex's SOA. Returns false when the change moved a delegation (names
   * below it change sides): the caller signs the whole zone then.
   */
  update(zone: Zone, owners: Iterable<string>, before: Before): boolean {
    const touched = [...owners];
    // A delegation that came or went hides or shows the names below it: the whole zone again.
    for (const o of touched) if (o !== zone.name && zone.cuts.has(o) !== hasType(before(o)?.sets, T.NS)) return false;
    const v = this.begin(zone);
    // The chain of before stays as it was for what other owners held (their NSEC); a copy is
    // what moving half the chain by splice costs anyway.
    const was = this.chain;
    this.chain = was.slice();
    for (const o of touched) {
      const i = position(this.chain, o);
      const inNow = this.chain[i] === o;
      const inNext = this.inChain(zone, o);
      if (inNow && !inNext) this.chain.splice(i, 1);
      else if (!inNow && inNext) this.chain.splice(i, 0, o);
    }
    const held = (o: string) => before(o) ?? this.heldIn(zone, o, was, this.table);
    const done = new Set<string>();
    const sign = (o: string) => {
      if (!done.has(o)) this.signOwner(zone, o, v, held);
      done.add(o);
    };
    for (const o of touched) {
      sign(o);
      const pred = this.predecessor(o);
      if (pred !== undefined) sign(pred);
    }
    sign(zone.name);
    return true;
  }

  /** The owner of the NSEC record that covers `name` (the last in the chain not after it). */
  covering(name: string): string {
    const i = position(this.chain, name);
    const at = (this.chain[i] === name ? i : i - 1 + this.chain.length) % this.chain.length;
    // A denial asks next for the NSEC records of the (up to two) owners just found: their places are
    // kept for that, checked before use.
    this.foundBefore = this.found;
    this.found = at;
    return this.chain[at];
  }

  /** The owner's NSEC set in wire form (made from the chain), or undefined when it has none. */
  nsec(owner: string, sets: Sets): WireSet | undefined {
    const { chain } = this;
    const i = chain[this.found] === owner ? this.found : chain[this.foundBefore] === owner ? this.foundBefore : -1;
    const next = i >= 0 ? chain[(i + 1) % chain.length] : nextIn(chain, owner);
    return next === undefined ? undefined : nsecSet(sets, next, this.nsecTtl);
  }

  /** The RRSIG records at an owner over its set of `type` whose TTL is `ttl` (4 bytes), in wire form. */
  sigsOver(sets: Sets, type: number, ttl: string): { wire: string; count: number } {
    const stored = pickSet(sets, TYPE_RRSIG);
    return stored === undefined ? { wire: '', count: 0 } : this.table.records(stored, type, () => ttl);
  }

  /** The owner's sets as served: its data, its NSEC and its RRSIGs in wire form (transfers, the general path). */
  served(owner: string, sets: Sets): WireSet[] {
    const out = dataSets(sets);
    const nsec = this.nsec(owner, sets);
    if (nsec !== undefined) out.push(nsec);
    const stored = pickSet(sets, TYPE_RRSIG);
    if (stored !== undefined) {
      const ttl = (type: number) => {
        const s = type === TYPE_NSEC ? nsec : pickSet(sets, type);
        return s === undefined ? '\0\0\0\0' : ttlOf(s);
      };
      const { wire } = this.table.records(stored, -1, ttl);
      if (wire !== '') out.push(wire);
    }
    return out;
  }

  private predecessor(o: string): string | undefined {
    if (this.chain.length < 2) return undefined;
    const i = position(this.chain, o);
    return this.chain[(i - 1 + this.chain.length) % this.chain.length];
  }

  /** Authoritative owners and delegation points are in the chain; glue and names below a cut are not. */
  private inChain(zone: Zone, owner: string): boolean {
    if (!zone.nodes.has(owner)) return false;
    const cut = findCut(zone, owner);
    return cut === undefined || cut === owner;
  }

  /** A signature made by `key` that stays valid past the refresh time. */
  private fits(sig: Sig, key: SigningKey): boolean {
    return sig.algorithm === key.algorithm && sig.keyTag === key.keyTag && sig.expiration > this.keepAfter;
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
   * Writes the owner's DNSSEC sets: DNSKEY at the apex, its signatures over what is authoritative
   * there and over its NSEC (only DS and NSEC at a delegation; nothing below one). A set that is as
   * it was `before` keeps its signature while that has more than the refresh time left.
   */
  private signOwner(zone: Zone, owner: string, v: Validity, before: Before) {
    const sets = zone.nodes.get(owner);
    if (sets === undefined) return;
    const old = before(owner);
    const data = listOf(sets).filter((s) => !MADE_HERE.has(setType(s)));
    if (owner === zone.name) data.push(...this.apexKeySets(zone));
    const cut = findCut(zone, owner);
    if (cut !== undefined && cut !== owner) {
      zone.nodes.set(owner, setsOf(data));
      return;
    }
    const nsec = this.nsec(owner, data)!;
    const sigs: Sig[] = [];
    for (const s of [...data, nsec]) {
      const type = setType(s);
      if (cut === owner && type !== T.DS && type !== TYPE_NSEC) continue;
      // One signature per key (two during a rollover); each kept while its set is the same.
      const same = old !== undefined && (s === nsec ? old.nsec === s : listOf(old.sets).includes(s));
      for (const key of this.keys.sign) {
        const kept = same ? old.sigs.find((r) => r.type === type && this.fits(r, key)) : undefined;
        if (kept) {
          sigs.push(kept);
          this.expiration = Math.min(this.expiration, kept.expiration);
          continue;
        }
        const recs = recordsOf(s);
        const rdata = rrsigRdata({ owner, type, ttl: recs[0].ttl, rdatas: recs.map((r) => r.rdata) }, zone.name, key, v);
        const { algorithm, keyTag } = key;
        // The signature follows the fixed fields and the signer's name (RFC 4034 §3.1).
        const signature = rdata.toString('latin1', 18 + (zone.name === '' ? 1 : zone.name.length + 2));
        sigs.push({ type, algorithm, keyTag, inception: v.inception, expiration: v.expiration, signature });
        this.expiration = Math.min(this.expiration, v.expiration);
      }
    }
    zone.nodes.set(owner, setsOf([...data, this.table.encode(owner, sigs)]));
  }
}

/** The index of `owner` in a chain in canonical order, or where it would go. */
function position(chain: string[], owner: string): number {
  let lo = 0;
  let hi = chain.length;
  // Every name in a zone's chain ends with the zone's name, the first one (the apex).
  const shared = hi && owner.endsWith(chain[0]) ? chain[0].length : 0;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (canonicalCompare(chain[mid], owner, shared) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The owner after `owner` in the chain (the apex after the last), or undefined when it is not in it. */
function nextIn(chain: string[], owner: string): string | undefined {
  const i = position(chain, owner);
  return chain[i] === owner ? chain[(i + 1) % chain.length] : undefined;
}
