// The authoritative lookup over the zones of zone.ts (RFC 1034 §4.3.2, RFC 2308 negative answers,
// RFC 4592 wildcards, RFC 6604 CNAME chains): the general path of answering a question, which
// query.ts takes when its quick path over the wire form does not apply. Pure: answered from memory.
import type { Answer } from 'dns-packet';
import { T, parent, type Zone, type ZoneSet } from './zone.js';

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

/**
 * The general path: answers `qtype` (a type code, 255 for ANY) for `qname` (lower-case) from
 * `zones`. `asked` is the name as the client spelt it (owner of answers at that name, as a
 * compressing server would echo it); null when the asked name cannot be written back (bytes
 * dns-packet cannot encode), which only disables wildcard synthesis for it. REFUSED when no zone
 * of ours contains the name.
 */
export function resolve(zones: ZoneSet, qname: string, asked: string | null, qtype: number, dnssecOk = false): Resolution {
  const res: Resolution = { rcode: RCODE.NOERROR, aa: true, answers: [], authorities: [], additionals: [] };
  const first = zones.find(qname, qtype === T.DS);
  if (!first) return { ...res, rcode: RCODE.REFUSED, aa: false };
  // DS at the apex of a zone of ours, answered by a parent zone of ours that has no delegation
  // records for it: the name exists all the same (it is a zone), so "no DS" is NODATA.
  const childApex = qtype === T.DS && first.name !== qname && zones.get(qname) !== undefined;
  const seen = new Set<string>();
  let zone: Zone | undefined = first;
  let name = qname;
  let owner: string | null = asked;
  for (let step = 0; zone && step < MAX_CHAIN; step++) {
    seen.add(name);
    const next = lookupIn(zone, name, owner, qtype, res, step === 0, step === 0 && childApex, dnssecOk && zone.signer !== null);
    if (next === null || seen.has(next)) break;
    name = next;
    owner = next;
    zone = zones.find(name, qtype === T.DS);
  }
  return res;
}

/** One step: fills `res`; returns the CNAME target to continue with, or null when done. */
function lookupIn(zone: Zone, qname: string, asked: string | null, qtype: number, res: Resolution, first: boolean, exists: boolean, signed: boolean): string | null {
  // A delegation at or above the name (below the apex) hands the question to the child's servers,
  // except DS at the cut itself, which lives on the parent side.
  const cut = findCut(zone, qname);
  if (cut && !(cut === qname && qtype === T.DS)) {
    const ns = zone.answersAt(cut, T.NS);
    res.authorities.push(...ns);
    // RFC 4035 §3.1.4: the DS of the delegation, or the NSEC that proves it has none.
    if (signed) res.authorities.push(...withSigs(zone, cut, zone.answersAt(cut, T.DS).length ? T.DS : T.NSEC));
    res.additionals.push(...glue(zone, ns));
    if (first) res.aa = false;
    return null;
  }

  let at = qname;
  let owner = asked ?? qname;
  if (!zone.nodes.has(qname)) {
    // An empty non-terminal: the NSEC before it proves it has no records (RFC 4035 §3.1.3.2).
    if (zone.exists(qname) || exists) return negative(zone, res, RCODE.NOERROR, signed ? [covering(zone, qname)] : []);
    // RFC 4592 §3.3.1: the source of synthesis is "*." + the closest encloser.
    let encloser = parent(qname);
    while (!zone.exists(encloser)) encloser = parent(encloser);
    at = `*.${encloser}`;
    // RFC 4035 §3.1.3.2: no such name, and no wildcard that could have made it.
    if (!zone.nodes.has(at) || asked === null) return negative(zone, res, RCODE.NXDOMAIN, signed ? [covering(zone, qname), covering(zone, at)] : []);
    owner = asked;
    // RFC 4035 §3.1.3.3: an answer made from a wildcard comes with the proof that the name itself does not exist.
    if (signed) res.authorities.push(...withSigs(zone, covering(zone, qname), T.NSEC));
  }

  if (qtype === T.ANY) {
    // RFC 8482 allows less; an authoritative server with small zones can give what exists.
    res.answers.push(...zone.answersAt(at, 'all', owner));
    return null;
  }
  const answers = zone.answersAt(at, qtype, owner);
  if (answers.length) {
    res.answers.push(...answers);
    if (signed) res.answers.push(...signatures(zone, at, answers[0].type, owner));
    return null;
  }
  const cname = zone.answersAt(at, T.CNAME, owner);
  if (cname.length) {
    res.answers.push(...cname);
    if (signed) res.answers.push(...signatures(zone, at, 'CNAME', owner));
    return cname[0].data as string;
  }
  // RFC 4035 §3.1.3.1: the NSEC of the name shows the types it has (of the wildcard, unexpanded).
  return negative(zone, res, RCODE.NOERROR, signed ? [at] : []);
}

/** A negative answer: the SOA, and with DNSSEC its signature and the NSEC records of `proofs`' owners. */
function negative(zone: Zone, res: Resolution, rcode: number, proofs: string[]): null {
  res.rcode = rcode;
  const soa = zone.negativeSoa();
  res.authorities.push(soa);
  if (proofs.length) {
    res.authorities.push(...signatures(zone, zone.name, 'SOA', zone.name).map((s) => ({ ...s, ttl: soa.ttl })));
    for (const owner of new Set(proofs)) res.authorities.push(...withSigs(zone, owner, T.NSEC));
  }
  return null;
}

/** The RRSIGs at `at` over its RRset of `typeName`, owned by `owner`. */
function signatures(zone: Zone, at: string, typeName: string, owner: string): Answer[] {
  return zone.answersAt(at, T.RRSIG, owner).filter((s) => (s.data as { typeCovered: string }).typeCovered === typeName);
}

/** The RRset of `type` at `owner` with its signatures. */
function withSigs(zone: Zone, owner: string, type: number): Answer[] {
  const set = zone.answersAt(owner, type);
  return set.length ? [...set, ...signatures(zone, owner, set[0].type, owner)] : [];
}

/** The owner of the NSEC that covers `name` in a signed zone. */
const covering = (zone: Zone, name: string): string => zone.signer!.covering(name);

/** The highest delegation point at or above `qname`, below the apex. */
export function findCut(zone: Zone, qname: string): string | undefined {
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
    out.push(...zone.answersAt(target, T.A), ...zone.answersAt(target, T.AAAA));
  }
  return out;
}
