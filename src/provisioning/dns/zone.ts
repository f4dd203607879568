// The in-memory zones one DNS process serves (issue 3 item 3; docs/decisions/0003-dns-propagation.md)
// and the authoritative lookup over them (RFC 1034 §4.3.2, RFC 2308 negative answers, RFC 4592
// wildcards, RFC 6604 CNAME chains). Pure: zones are built from rows, queries answered from memory.
//
// A zone is immutable once built; a change replaces the whole Zone object in the ZoneSet, so a
// query never sees half a change.
import type { Answer } from 'dns-packet';
import { toAnswer, type StoredRecord, RdataError } from './rdata.js';

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

export interface RRset {
  type: string;
  /** Owner names are the absolute lower-case names; answers copy them with the name as asked. */
  records: Answer[];
}

export type Node = Map<string, RRset>;

export class Zone {
  /** Every name that exists: owners of records and the empty non-terminals between them and the apex. */
  readonly names = new Set<string>();
  readonly nodes = new Map<string, Node>();
  /** Delegation points: names below the apex that own NS records. */
  readonly cuts = new Set<string>();
  readonly soa: Answer;

  private constructor(readonly name: string, readonly serial: number, settings: ZoneSettings) {
    this.soa = {
      type: 'SOA',
      class: 'IN',
      name,
      ttl: settings.ttl,
      data: {
        mname: settings.nameservers[0],
        rname: settings.hostmaster,
        serial: serial >>> 0,
        refresh: settings.refresh,
        retry: settings.retry,
        expire: settings.expire,
        minimum: settings.minimum,
      },
    };
    this.names.add(name);
  }

  /**
   * Builds the zone of `name` (lower-case ACE) from its served records; records that do not parse
   * are left out and reported through `onSkip`, never served half-right.
   * `Zone.build('example.com', 7, rows, settings)`.
   */
  static build(
    name: string,
    serial: number,
    records: Iterable<StoredRecord>,
    settings: ZoneSettings,
    onSkip: (rec: StoredRecord, reason: string) => void = () => {},
  ): Zone {
    const zone = new Zone(name, serial, settings);
    zone.add(zone.soa);
    for (const ns of settings.nameservers) zone.add({ type: 'NS', class: 'IN', name, ttl: settings.ttl, data: ns });
    for (const rec of records) {
      let answer: Answer;
      try {
        answer = toAnswer(rec, name);
      } catch (err) {
        onSkip(rec, err instanceof RdataError ? err.message : String(err));
        continue;
      }
      // The apex SOA and NS are the service's (settings); the API does not create them either.
      if (answer.name === name && (answer.type === 'NS' || answer.type === 'SOA')) {
        onSkip(rec, 'apex NS/SOA come from settings');
        continue;
      }
      zone.add(answer);
    }
    // RFC 2181 §5.2: one TTL per RRset; clients treat differing TTLs as the smallest.
    for (const node of zone.nodes.values()) {
      for (const set of node.values()) {
        const ttl = Math.min(...set.records.map((r) => r.ttl ?? 0));
        for (const r of set.records) r.ttl = ttl;
      }
    }
    return zone;
  }

  private add(answer: Answer) {
    const owner = answer.name;
    let node = this.nodes.get(owner);
    if (!node) this.nodes.set(owner, (node = new Map()));
    let set = node.get(answer.type);
    if (!set) node.set(answer.type, (set = { type: answer.type, records: [] }));
    set.records.push(answer);
    if (answer.type === 'NS' && owner !== this.name) this.cuts.add(owner);
    // The owner and every name between it and the apex exist (empty non-terminals answer NODATA).
    for (let n = owner; n !== this.name && !this.names.has(n); n = n.slice(n.indexOf('.') + 1)) this.names.add(n);
  }

  /** The SOA for the authority section of a negative answer: TTL = min(SOA TTL, MINIMUM) (RFC 2308 §3). */
  negativeSoa(): Answer {
    const ttl = Math.min(this.soa.ttl ?? 0, (this.soa.data as { minimum: number }).minimum);
    return { ...this.soa, ttl };
  }
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

export const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 } as const;

export interface Resolution {
  rcode: number;
  /** Authoritative answer (the AA bit): false for referrals and refusals. */
  aa: boolean;
  answers: Answer[];
  authorities: Answer[];
  additionals: Answer[];
}

/** Longest CNAME chain we follow inside our own zones (loops end here too). */
const MAX_CHAIN = 8;

const withName = (records: Answer[], name: string): Answer[] => records.map((r) => ({ ...r, name }));

/**
 * Answers `qtype` for `qname` (lower-case) from `zones`. `asked` is the name as the client spelt it
 * (owner of answers at that name, as a compressing server would echo it); null when the asked
 * name cannot be written back (bytes dns-packet cannot encode), which only disables wildcard
 * synthesis for it. REFUSED when no zone of ours contains the name.
 */
export function resolve(zones: ZoneSet, qname: string, asked: string | null, qtype: string): Resolution {
  const res: Resolution = { rcode: RCODE.NOERROR, aa: true, answers: [], authorities: [], additionals: [] };
  const first = zones.find(qname, qtype === 'DS');
  if (!first) return { ...res, rcode: RCODE.REFUSED, aa: false };
  // DS at the apex of a zone of ours, answered by a parent zone of ours that has no delegation
  // records for it: the name exists all the same (it is a zone), so "no DS" is NODATA.
  const childApex = qtype === 'DS' && first.name !== qname && zones.get(qname) !== undefined;
  const seen = new Set<string>();
  let zone: Zone | undefined = first;
  let name = qname;
  let owner: string | null = asked;
  for (let step = 0; zone && step < MAX_CHAIN; step++) {
    seen.add(name);
    const next = lookupIn(zone, name, owner, qtype, res, step === 0, step === 0 && childApex);
    if (next === null || seen.has(next)) break;
    name = next;
    owner = next;
    zone = zones.find(name, qtype === 'DS');
  }
  return res;
}

/** One step: fills `res`; returns the CNAME target to continue with, or null when done. */
function lookupIn(zone: Zone, qname: string, asked: string | null, qtype: string, res: Resolution, first: boolean, exists: boolean): string | null {
  // A delegation at or above the name (below the apex) hands the question to the child's servers,
  // except DS at the cut itself, which lives on the parent side.
  const cut = findCut(zone, qname);
  if (cut && !(cut === qname && qtype === 'DS')) {
    const ns = zone.nodes.get(cut)!.get('NS')!.records;
    res.authorities.push(...ns);
    res.additionals.push(...glue(zone, ns));
    if (first) res.aa = false;
    return null;
  }

  let node = zone.nodes.get(qname);
  let owner = asked ?? qname;
  if (!node) {
    if (zone.names.has(qname) || exists) return negative(zone, res, RCODE.NOERROR); // empty non-terminal
    // RFC 4592 §3.3.1: the source of synthesis is "*." + the closest encloser.
    let encloser = qname.slice(qname.indexOf('.') + 1);
    while (!zone.names.has(encloser)) encloser = encloser.slice(encloser.indexOf('.') + 1);
    node = zone.nodes.get(`*.${encloser}`);
    if (!node || asked === null) return negative(zone, res, RCODE.NXDOMAIN);
    owner = asked;
  }

  if (qtype === 'ANY') {
    // RFC 8482 allows less; an authoritative server with small zones can give what exists.
    for (const set of node.values()) res.answers.push(...withName(set.records, owner));
    return null;
  }
  const set = node.get(qtype);
  if (set) {
    res.answers.push(...withName(set.records, owner));
    return null;
  }
  const cname = node.get('CNAME');
  if (cname) {
    res.answers.push(...withName(cname.records, owner));
    return cname.records[0].data as string;
  }
  return negative(zone, res, RCODE.NOERROR);
}

function negative(zone: Zone, res: Resolution, rcode: number): null {
  res.rcode = rcode;
  res.authorities.push(zone.negativeSoa());
  return null;
}

/** The highest delegation point at or above `qname`, below the apex. */
function findCut(zone: Zone, qname: string): string | undefined {
  if (!zone.cuts.size || qname === zone.name) return undefined;
  const rel = qname.slice(0, qname.length - zone.name.length - 1).split('.');
  let n = zone.name;
  for (let i = rel.length - 1; i >= 0; i--) {
    n = `${rel[i]}.${n}`;
    if (zone.cuts.has(n)) return n;
  }
  return undefined;
}

/** Addresses of in-zone name servers of a referral (glue), so the resolver can reach them. */
function glue(zone: Zone, ns: Answer[]): Answer[] {
  const out: Answer[] = [];
  for (const r of ns) {
    const target = r.data as string;
    if (target !== zone.name && !target.endsWith(`.${zone.name}`)) continue;
    const node = zone.nodes.get(target);
    for (const t of ['A', 'AAAA']) out.push(...(node?.get(t)?.records ?? []));
  }
  return out;
}
