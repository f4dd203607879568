// The DNSSEC parts of signed answers on the quick path (docs/decisions/0032-dnssec.md, 0014): the
// negative SOA with its signature, and the NSEC records with theirs that prove a denial or a wildcard,
// written out from what the signer keeps (signed-form.ts) with their owners. The same records, in the
// same order, as the general path (lookup.ts) gives; no signing and no dns-packet while a query waits.
import { pickSet, type Sets } from './rrsets.js';
import { dnsNameWire, ttlOf } from './signed-form.js';
import { T, type Zone } from './zone.js';

/** Records in wire form with their owners written out (an authority section's part), and how many. */
export interface WirePart {
  wire: string;
  count: number;
}

/** Per zone: the negative SOA and its RRSIG (TTL that of the negative SOA), made when the apex changes. */
const negatives = new WeakMap<Zone, { apex: Sets; part: WirePart }>();

/**
 * The SOA of a negative answer and its signatures (RFC 4035 §3.1.3: with TTL of the negative SOA,
 * RFC 2308 §3); null when the apex holds no signature over the SOA (then the general path answers).
 */
export function negativeSoaSigned(zone: Zone): WirePart | null {
  const apex = zone.nodes.get(zone.name);
  if (apex === undefined) return null;
  const cached = negatives.get(zone);
  if (cached?.apex === apex) return cached.part;
  const soaSet = pickSet(apex, T.SOA);
  if (soaSet === undefined || zone.signer === null) return null;
  const { wire: sigs, count } = zone.signer.sigsOver(apex, T.SOA, ttlOf(soaSet));
  if (!count) return null;
  const owner = dnsNameWire(zone.name);
  // The SOA's TTL in the negative form; each signature takes it too.
  const soa = zone.negativeSoaWire;
  const ttl = soa.slice(owner.length + 4, owner.length + 8);
  let wire = soa;
  for (let p = 0; p < sigs.length; ) {
    const end = p + 12 + ((sigs.charCodeAt(p + 10) << 8) | sigs.charCodeAt(p + 11));
    wire += owner + sigs.slice(p + 2, p + 6) + ttl + sigs.slice(p + 10, end);
    p = end;
  }
  const part = { wire, count: 1 + count };
  negatives.set(zone, { apex, part });
  return part;
}

/**
 * Per zone, the NSEC proofs written out lately (the apex's, which every NXDOMAIN next to it shows
 * against the wildcard, above all): a few hundred kB at most, dropped whole when the signer changes
 * anything or it is full.
 */
const proofs = new WeakMap<Zone, { version: number; byOwner: Map<string, WirePart | null> }>();
const PROOFS_KEPT = 1024;

/** The NSEC record at `owner` and its signatures, owner written out; null when it has none. */
export function nsecProof(zone: Zone, owner: string): WirePart | null {
  if (zone.signer === null) return null;
  let kept = proofs.get(zone);
  if (kept?.version !== zone.signer.version || kept.byOwner.size >= PROOFS_KEPT) proofs.set(zone, (kept = { version: zone.signer.version, byOwner: new Map() }));
  let part = kept.byOwner.get(owner);
  if (part === undefined) kept.byOwner.set(owner, (part = writeProof(zone, owner)));
  return part;
}

function writeProof(zone: Zone, owner: string): WirePart | null {
  const sets = zone.nodes.get(owner);
  if (sets === undefined || zone.signer === null) return null;
  // Made from the chain (the signer does not keep it): the next owner's name and the types here.
  const nsec = zone.signer.nsec(owner, sets);
  if (nsec === undefined) return null;
  const name = dnsNameWire(owner);
  let wire = name + nsec.slice(2);
  const sigs = zone.signer.sigsOver(sets, T.NSEC, ttlOf(nsec));
  for (let p = 0; p < sigs.wire.length; ) {
    const end = p + 12 + ((sigs.wire.charCodeAt(p + 10) << 8) | sigs.wire.charCodeAt(p + 11));
    wire += name + sigs.wire.slice(p + 2, end);
    p = end;
  }
  return { wire, count: 1 + sigs.count };
}

/**
 * A signed negative answer's authority section: the negative SOA with its signatures, then the NSEC
 * proof of each owner (each once, in order). `before`, a proof listed ahead of the SOA (a wildcard's
 * NODATA: the NSEC that shows the name itself does not exist). Null where the general path must answer.
 */
export function signedDenial(zone: Zone, proofs: string[], before?: string): WirePart | null {
  const soa = negativeSoaSigned(zone);
  if (soa === null) return null;
  let wire = '';
  let count = 0;
  if (before !== undefined) {
    const p = nsecProof(zone, before);
    if (p === null) return null;
    wire = p.wire;
    count = p.count;
  }
  wire += soa.wire;
  count += soa.count;
  for (let i = 0; i < proofs.length; i++) {
    if (i > 0 && proofs.indexOf(proofs[i]) < i) continue;
    const p = nsecProof(zone, proofs[i]);
    if (p === null) return null;
    wire += p.wire;
    count += p.count;
  }
  return { wire, count };
}
