// The in-memory zones one DNS process serves, pure: built from rows, changed owner by owner.
// Each RRset is kept in wire form with its owner as the pointer C0 0C, so an answer is mostly a copy
// (decision 0014); replaceOwners swaps a change's owners and the SOA in one synchronous step, so a
// query never sees half a change, and keeps the history IXFR needs.
import dnsPacket, { type Answer } from 'dns-packet';
import { rdataOf, recordWire, toWireRecord, type StoredRecord, type WireRecord, RdataError, TYPE_CODES } from './rdata.js';
import { encodeSet, listOf, pickSet, setAnswers, setRecords, setType, type Sets, type WireSet } from './rrsets.js';

/** SOA and apex NS of every zone, from settings (DNS_NAMESERVERS, DNS_HOSTMASTER, DNS_DEFAULT_TTL). */
export interface ZoneSettings {
  /** Absolute names without the trailing dot; the first one is the SOA MNAME. */
  nameservers: string[];
  /** SOA RNAME in name form (`hostmaster.hostplane.test`). */
  hostmaster: string;
  /** TTL of the SOA and apex NS records. */
  ttl: number;
  refresh: number;
  retry: number;
  expire: number;
  /** SOA MINIMUM: the negative-caching TTL (RFC 2308 §4). */
  minimum: number;
}

/** Sensible timers for a zone nobody transfers; MINIMUM bounds how long a "no such record" is cached. */
export const SOA_TIMERS = { refresh: 3600, retry: 600, expire: 1209600, minimum: 300 } as const;

export const T = { A: 1, NS: 2, CNAME: 5, SOA: 6, AAAA: 28, DS: 43, RRSIG: 46, NSEC: 47, DNSKEY: 48, ANY: 255 } as const;

/** Told of each stored record that is not served, and why (the DNS server logs it). */
export type OnSkip = (rec: StoredRecord, reason: string) => void;

/** A record of ours (SOA, apex NS from settings) as the zones hold it. */
const settingsRecord = (a: Answer): WireRecord => ({ owner: a.name, type: TYPE_CODES[a.type], ttl: a.ttl ?? 0, rdata: rdataOf(a), order: -1 });

/** One version step of a zone (RFC 1995 §4: old SOA, deleted RRs, new SOA, added RRs). */
export interface Delta {
  from: number;
  to: number;
  fromSoa: Buffer;
  toSoa: Buffer;
  removed: Buffer[];
  added: Buffer[];
}

/**
 * What answers need of a signed zone's signer (zone-signer.ts), which keeps an owner's DNSSEC records
 * in a form of its own (signed-form.ts): the NSEC that covers a name, and those records written out.
 */
export interface ZoneSigning {
  /** Moves whenever the signer changes an owner or the chain (what answers keep of it is stale then). */
  readonly version: number;
  covering(name: string): string;
  /** The owner's NSEC set in wire form, when it is in the chain. */
  nsec(owner: string, sets: Sets): WireSet | undefined;
  /** The RRSIG records over the owner's set of `type` (TTL `ttl`, 4 bytes) in wire form, and how many. */
  sigsOver(sets: Sets, type: number, ttl: string): { wire: string; count: number };
  /** The owner's sets as served: data, NSEC, RRSIGs, each in wire form. */
  served(owner: string, sets: Sets): WireSet[];
}

export class Zone {
  /** Set when the zone is signed (docs/decisions/0032-dnssec.md): it writes out the RRSIGs and NSEC of each owner. */
  signer: ZoneSigning | null = null;
  /** Owners of records (the apex always: SOA and NS), with their RRsets. */
  readonly nodes = new Map<string, Sets>();
  /**
   * Names below which records exist, with how many owners are below them: with `nodes`, every
   * name that exists (owners and the empty non-terminals between them and the apex).
   */
  private readonly above = new Map<string, number>();
  /** Delegation points: names below the apex that own NS records. */
  readonly cuts = new Set<string>();
  /** The steps that led here, oldest first (IXFR; transfer-messages.ts keeps it short). */
  history: Delta[] = [];
  serial: number;
  soa!: Answer;
  /** The SOA of a negative answer, owner written out, TTL = min(SOA TTL, MINIMUM) (RFC 2308 §3). */
  negativeSoaWire!: WireSet;

  private constructor(readonly name: string, serial: number, private readonly settings: ZoneSettings) {
    this.serial = serial;
    this.setSerial(serial);
  }

  /**
   * Builds the zone of `name` (lower-case ACE) from its served records; records that do not parse
   * are left out and reported through `onSkip`, never served half-right. Records in the order the
   * store reads them (by name, type and id) are put owner by owner as they come (`stream`).
   * `Zone.build('example.com', 7, rows, settings)`.
   */
  static build(name: string, serial: number, records: readonly StoredRecord[], settings: ZoneSettings, onSkip: OnSkip = () => {}): Zone {
    const skipped: [StoredRecord, string][] = [];
    const zone = new Zone(name, serial, settings);
    if (!zone.stream(records, (rec, reason) => skipped.push([rec, reason]))) {
      // An owner came back after others (its records under names written differently: '@' and '',
      // capitals).
      return Zone.buildGrouped(name, serial, records, settings, onSkip);
    }
    for (const [rec, reason] of skipped) onSkip(rec, reason);
    return zone;
  }

  /**
   * `build` for records in any order: all of them grouped by owner first, then put. What `build`
   * falls back to, and what its owner-by-owner way is tested against.
   */
  static buildGrouped(name: string, serial: number, records: Iterable<StoredRecord>, settings: ZoneSettings, onSkip: OnSkip = () => {}): Zone {
    const zone = new Zone(name, serial, settings);
    for (const [owner, lists] of zone.group(records, onSkip, true)) zone.put(owner, lists);
    return zone;
  }

  /**
   * Replaces everything at `owners` (absolute, lower-case) by `records` (the served records of
   * those owners, relative names as stored) and moves the SOA to `serial`; returns the records
   * that went and came (SOA excluded) for the zone's history.
   */
  replaceOwners(
    serial: number,
    owners: Iterable<string>,
    records: Iterable<StoredRecord>,
    onSkip: OnSkip = () => {},
  ): { removed: Buffer[]; added: Buffer[] } {
    const touched = new Set(owners);
    const grouped = this.group(records, onSkip, touched.has(this.name));
    const before = new Map<string, Buffer>();
    const after = new Map<string, Buffer>();
    for (const owner of touched) {
      for (const rr of this.recordsAt(owner)) before.set(rr.toString('latin1'), rr);
      this.take(owner);
    }
    for (const [owner, lists] of grouped) {
      if (!touched.has(owner)) continue;
      this.put(owner, lists);
      for (const rr of this.recordsAt(owner)) after.set(rr.toString('latin1'), rr);
    }
    if (serial !== this.serial) this.setSerial(serial);
    return {
      removed: [...before].filter(([k]) => !after.has(k)).map(([, b]) => b),
      added: [...after].filter(([k]) => !before.has(k)).map(([, b]) => b),
    };
  }

  /** True when `name` exists in the zone: the apex, an owner, or an empty non-terminal. */
  exists(name: string): boolean {
    return name === this.name || this.nodes.has(name) || this.above.has(name);
  }

  /** The records at `owner` in full wire form, SOA excluded (AXFR, IXFR). */
  recordsAt(owner: string): Buffer[] {
    const sets = this.nodes.get(owner);
    if (sets === undefined) return [];
    const wire = dnsPacket.name.encode(owner);
    const out: Buffer[] = [];
    for (const s of this.servedAt(owner, sets)) if (setType(s) !== T.SOA) out.push(...setRecords(s, wire));
    return out;
  }

  /** The RRsets at `owner` as answers owned by `as` (the general path: chains, referrals, ANY). */
  answersAt(owner: string, type: number | 'all', as: string = owner): Answer[] {
    const sets = this.nodes.get(owner);
    if (sets === undefined) return [];
    const served = this.servedAt(owner, sets);
    if (type !== 'all') {
      const s = pickSet(served, type);
      return s ? setAnswers(s, as) : [];
    }
    return served.flatMap((s) => setAnswers(s, as));
  }

  /** The RRsets at an owner in wire form, a signed zone's RRSIG and NSEC sets written out. */
  private servedAt(owner: string, sets: Sets): WireSet[] {
    return this.signer === null ? listOf(sets) : this.signer.served(owner, sets);
  }

  /** The SOA for the authority section of a negative answer (RFC 2308 §3). */
  negativeSoa(): Answer {
    const ttl = Math.min(this.soa.ttl ?? 0, (this.soa.data as { minimum: number }).minimum);
    return { ...this.soa, ttl };
  }

  // ---- building blocks -------------------------------------------------------------------------

  private setSerial(serial: number) {
    const s = this.settings;
    this.serial = serial;
    this.soa = {
      type: 'SOA',
      class: 'IN',
      name: this.name,
      ttl: s.ttl,
      data: { mname: s.nameservers[0], rname: s.hostmaster, serial: serial >>> 0, refresh: s.refresh, retry: s.retry, expire: s.expire, minimum: s.minimum },
    };
    this.negativeSoaWire = recordWire(this.negativeSoa()).toString('latin1');
    const apex = this.nodes.get(this.name);
    const soaSet = encodeSet([settingsRecord(this.soa)]);
    if (apex === undefined) this.nodes.set(this.name, soaSet);
    else if (typeof apex === 'string') this.nodes.set(this.name, setType(apex) === T.SOA ? soaSet : [soaSet, apex]);
    else this.nodes.set(this.name, apex.map((x) => (setType(x) === T.SOA ? soaSet : x)));
  }

  /**
   * Records by owner, one list per type, in the order given (answers list records in the order
   * they were created); with `apex`, the apex's SOA and NS from settings come first.
   */
  private group(records: Iterable<StoredRecord>, onSkip: OnSkip, apex: boolean) {
    const out = new Map<string, WireRecord[][]>();
    this.eachRecord(records, onSkip, apex, (r) => {
      const lists = out.get(r.owner);
      if (lists) addTo(lists, r);
      else out.set(r.owner, [[r]]);
      return true;
    });
    return out;
  }

  /**
   * Puts records that come owner by owner, as the store reads them (by name, type and id), each
   * owner as soon as the next begins: nothing is held for the whole zone
   * (docs/decisions/0014-dns-zones-in-wire-form.md; held by the thousand, records would outlive V8's
   * young generation and be allocated where only a full collection frees them). False, with the zone
   * half built, when an owner comes back after another.
   */
  private stream(records: Iterable<StoredRecord>, onSkip: OnSkip): boolean {
    let owner: string | undefined;
    let lists: WireRecord[][] = [];
    const ok = this.eachRecord(records, onSkip, true, (r) => {
      if (r.owner === owner) {
        addTo(lists, r);
        return true;
      }
      // The apex comes first (its SOA and NS from settings); after it, an owner already put (the
      // apex too: it holds its SOA from the start) is one that came back.
      if (owner !== undefined) {
        this.put(owner, lists);
        if (this.nodes.has(r.owner)) return false;
      }
      owner = r.owner;
      lists = [[r]];
      return true;
    });
    if (ok && owner !== undefined) this.put(owner, lists);
    return ok;
  }

  /**
   * Each record in wire form, the apex's SOA and NS from settings first with `apex`, to `take`
   * until it answers false (then false); records that do not parse go to `onSkip`.
   */
  private eachRecord(records: Iterable<StoredRecord>, onSkip: OnSkip, apex: boolean, take: (r: WireRecord) => boolean): boolean {
    if (apex) {
      take(settingsRecord(this.soa));
      for (const ns of this.settings.nameservers) take(settingsRecord({ type: 'NS', class: 'IN', name: this.name, ttl: this.settings.ttl, data: ns }));
    }
    for (const rec of records) {
      let r: WireRecord;
      try {
        r = toWireRecord(rec, this.name);
      } catch (err) {
        onSkip(rec, err instanceof RdataError ? err.message : String(err));
        continue;
      }
      // The apex SOA and NS are the service's (settings); the API does not create them either.
      if (r.owner === this.name && (r.type === T.NS || r.type === T.SOA)) {
        onSkip(rec, 'apex NS/SOA come from settings');
        continue;
      }
      if (!take(r)) return false;
    }
    return true;
  }

  /** Sets the RRsets of an owner that has none now, from its records, one list per type. */
  private put(owner: string, lists: WireRecord[][]) {
    if (!lists.length) return;
    // RRsets in the order their first records were created (rows come by name and type).
    if (lists.length > 1) lists.sort((a, b) => a[0].order - b[0].order);
    this.nodes.set(owner, lists.length === 1 ? encodeSet(lists[0]) : lists.map(encodeSet));
    if (owner !== this.name) {
      if (lists.some((l) => l[0].type === T.NS)) this.cuts.add(owner);
      // The owner and every name between it and the apex exist (empty non-terminals answer NODATA).
      for (let n = parent(owner); n !== this.name; n = parent(n)) this.above.set(n, (this.above.get(n) ?? 0) + 1);
    }
  }

  /** Removes every RRset of an owner (the apex keeps nothing either: the caller puts it back). */
  private take(owner: string) {
    if (!this.nodes.delete(owner) || owner === this.name) return;
    this.cuts.delete(owner);
    for (let n = parent(owner); n !== this.name; n = parent(n)) {
      const left = (this.above.get(n) ?? 1) - 1;
      if (left > 0) this.above.set(n, left);
      else this.above.delete(n);
    }
  }
}

/** The name one label up: `parent('www.example.com')` → `'example.com'`. */
export const parent = (name: string) => name.slice(name.indexOf('.') + 1);

/** Adds a record to an owner's lists (one per type; records of one type mostly come together). */
function addTo(lists: WireRecord[][], r: WireRecord) {
  const last = lists[lists.length - 1];
  const list = last[0].type === r.type ? last : lists.find((l) => l[0].type === r.type);
  if (list) list.push(r);
  else lists.push([r]);
}

/** The zones of one DNS process, by apex name. */
export class ZoneSet {
  private readonly zones = new Map<string, Zone>();

  get size() {
    return this.zones.size;
  }
  set(zone: Zone) {
    this.zones.set(zone.name, zone);
  }
  delete(name: string) {
    this.zones.delete(name);
  }
  get(name: string) {
    return this.zones.get(name);
  }
  values() {
    return this.zones.values();
  }

  /**
   * The most specific zone containing `qname` (lower-case, no trailing dot). A DS query for a zone's
   * apex belongs to the parent side (RFC 4035 §3.1.4.1): if we serve a parent zone too, use it.
   */
  find(qname: string, forDs = false): Zone | undefined {
    let n = qname;
    let skipApex = forDs && this.zones.has(qname);
    for (;;) {
      const z = this.zones.get(n);
      if (z && !skipApex) return z;
      skipApex = false;
      const dot = n.indexOf('.');
      if (dot < 0) {
        // Nothing above: a DS query at one of our apexes is answered from that zone (NODATA).
        return forDs ? this.zones.get(qname) : undefined;
      }
      n = n.slice(dot + 1);
    }
  }
}
