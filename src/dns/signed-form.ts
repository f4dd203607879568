// How a signed zone keeps its DNSSEC records (docs/decisions/0032-dnssec.md, Consequences: memory):
// per owner only what differs from owner to owner. An owner's signatures are one string (type covered,
// the index of its fixed fields, the signature); the fields every signature of the zone repeats
// (algorithm, times, key tag, signer) are kept once per zone in a `SigTable`; the NSEC is not kept,
// it is made from the chain when answered. Answers write the records out again: a copy, no signing.
import { TYPE_NSEC, TYPE_RRSIG, typeBitmap } from './dnssec-keys.js';
import { listOf, setType, type Sets, type WireSet } from './rrsets.js';

/** One signature as signing and keeping see it (RFC 4034 §3.1), without what its RRset gives. */
export interface Sig {
  type: number;
  algorithm: number;
  keyTag: number;
  inception: number;
  expiration: number;
  /** The signature field, latin1. */
  signature: string;
}

/** The fields of a zone's signatures that repeat: one entry per algorithm, key tag and times. */
interface Fixed {
  algorithm: number;
  keyTag: number;
  inception: number;
  expiration: number;
  sigLength: number;
  /** RDLENGTH of the record, 2 bytes. */
  rdlength: string;
  /** The algorithm byte. */
  alg: string;
  /** Expiration, inception, key tag and the signer's name, as they follow the original TTL. */
  tail: string;
}

const u16 = (n: number) => String.fromCharCode(n >> 8, n & 0xff);
const u32 = (n: number) => u16(n >>> 16) + u16(n & 0xffff);
const readU16 = (s: string, p: number) => (s.charCodeAt(p) << 8) | s.charCodeAt(p + 1);

/** An owner (lower case, dot-joined, no trailing dot) in wire form, as a latin1 string. */
export function dnsNameWire(name: string): string {
  let out = '';
  for (let start = 0; name !== ''; ) {
    const dot = name.indexOf('.', start);
    const end = dot < 0 ? name.length : dot;
    out += String.fromCharCode(end - start) + name.slice(start, end);
    if (dot < 0) break;
    start = dot + 1;
  }
  return out + '\0';
}

/** Labels for the RRSIG Labels field (RFC 4034 §3.1.3): a leading wildcard label does not count. */
function labels(owner: string): number {
  if (owner === '') return 0;
  let n = 1;
  for (let i = owner.indexOf('.'); i >= 0; i = owner.indexOf('.', i + 1)) n++;
  return owner === '*' || owner.startsWith('*.') ? n - 1 : n;
}

/**
 * A zone's fixed signature fields, each once: `table.index(sig)` when storing, `table.at(i)` when
 * writing out. Made anew with each whole signing, so it holds only what the zone's signatures use
 * (and what owner-by-owner changes added since: one entry an hour and key at most).
 */
export class SigTable {
  private readonly entries: Fixed[] = [];
  private readonly byKey = new Map<string, number>();
  private readonly signer: string;

  constructor(zone: string) {
    this.signer = dnsNameWire(zone);
  }

  index(s: Sig): number {
    const key = `${s.algorithm}/${s.keyTag}/${s.inception}/${s.expiration}/${s.signature.length}`;
    let i = this.byKey.get(key);
    if (i === undefined) {
      i = this.entries.length;
      if (i > 0xffff) throw new Error('too many signature validities in one zone');
      const { algorithm, keyTag, inception, expiration } = s;
      const tail = u32(expiration) + u32(inception) + u16(keyTag) + this.signer;
      const rdlength = u16(18 + this.signer.length + s.signature.length);
      this.entries.push({ algorithm, keyTag, inception, expiration, sigLength: s.signature.length, rdlength, alg: String.fromCharCode(algorithm), tail });
      this.byKey.set(key, i);
    }
    return i;
  }

  at(i: number): Fixed {
    return this.entries[i];
  }

  /**
   * An owner's signatures in the stored form: a header whose type reads as RRSIG (so `pickSet` finds
   * it among the owner's sets), the Labels field, then per signature type covered, table index and
   * signature.
   */
  encode(owner: string, sigs: Sig[]): WireSet {
    // Written in a buffer and read out as one flat string: joined with +, it would be a tree of
    // string pieces holding each signature apart (twice the bytes).
    const out = Buffer.allocUnsafe(sigs.reduce((n, s) => n + 4 + s.signature.length, 5));
    out.writeUInt32BE(TYPE_RRSIG, 0);
    out[4] = labels(owner);
    let p = 5;
    for (const s of sigs) {
      out.writeUInt16BE(s.type, p);
      out.writeUInt16BE(this.index(s), p + 2);
      p += 4 + out.write(s.signature, p + 4, 'latin1');
    }
    return out.toString('latin1');
  }

  /** The signatures of the stored form. */
  decode(stored: WireSet | undefined): Sig[] {
    const out: Sig[] = [];
    if (stored === undefined) return out;
    for (let p = 5; p < stored.length; ) {
      const f = this.entries[readU16(stored, p + 2)];
      const { algorithm, keyTag, inception, expiration } = f;
      out.push({ type: readU16(stored, p), algorithm, keyTag, inception, expiration, signature: stored.substr(p + 4, f.sigLength) });
      p += 4 + f.sigLength;
    }
    return out;
  }

  /**
   * The RRSIG records (wire form, owner `C0 0C`) over `type` in the stored form, each with `ttl` (4
   * bytes: the covered set's, RFC 4034 §3), and how many; `type` -1 for all, `ttlOf` giving each one's.
   */
  records(stored: WireSet, type: number, ttlOf: (type: number) => string): { wire: string; count: number } {
    let wire = '';
    let count = 0;
    const labelsByte = stored[4];
    for (let p = 5; p < stored.length; ) {
      const f = this.entries[readU16(stored, p + 2)];
      const end = p + 4 + f.sigLength;
      const covered = readU16(stored, p);
      if (type < 0 || covered === type) {
        const ttl = ttlOf(covered);
        wire += RRSIG_HEAD + ttl + f.rdlength + stored.slice(p, p + 2) + f.alg + labelsByte + ttl + f.tail + stored.slice(p + 4, end);
        count++;
      }
      p = end;
    }
    return { wire, count };
  }
}

/** `C0 0C`, type RRSIG, class IN: what every RRSIG record written out begins with. */
const RRSIG_HEAD = '\xc0\x0c' + u16(TYPE_RRSIG) + '\0\x01';

/** The TTL (4 bytes) of a set in wire form. */
export const ttlOf = (s: WireSet) => s.slice(6, 10);

/** The data sets of an owner (what the signer keeps beside them left out). */
export const dataSets = (sets: Sets): WireSet[] => listOf(sets).filter((s) => setType(s) !== TYPE_RRSIG);

const bits = Buffer.alloc(32);

/**
 * The NSEC set (wire form, owner `C0 0C`) of an owner whose data sets are `sets`, naming `next`:
 * its types with RRSIG and NSEC (RFC 4035 §2.3), `ttl` 4 bytes.
 */
export function nsecSet(sets: Sets, next: string, ttl: string): WireSet {
  const types: number[] = [TYPE_RRSIG, TYPE_NSEC];
  let low = true;
  for (const s of listOf(sets)) {
    const t = setType(s);
    if (t === TYPE_RRSIG) continue;
    types.push(t);
    if (t > 255) low = false;
  }
  let bitmap: string;
  if (low) {
    // Window 0 only (the common case), without the general form's buffers.
    let len = 0;
    for (const t of types) len = Math.max(len, (t >> 3) + 1);
    bits.fill(0, 0, len);
    for (const t of types) bits[t >> 3] |= 0x80 >> (t & 7);
    bitmap = '\0' + String.fromCharCode(len) + bits.toString('latin1', 0, len);
  } else bitmap = typeBitmap(types).toString('latin1');
  const rdata = dnsNameWire(next) + bitmap;
  return '\xc0\x0c' + u16(TYPE_NSEC) + '\0\x01' + ttl + u16(rdata.length) + rdata;
}

/**
 * Canonical order of names (RFC 4034 §6.1): labels from the right, a label before any longer one it
 * begins; the order of dnssec-keys.ts's `canonicalKey` strings, compared without making them.
 * `shared`: how many characters both names are known to end with (the zone's name).
 */
export function canonicalCompare(a: string, b: string, shared = 0): number {
  // The end both share is skipped, back to where they differ.
  let i = a.length - shared;
  let j = b.length - shared;
  while (i > 0 && j > 0 && a.charCodeAt(i - 1) === b.charCodeAt(j - 1)) {
    i--;
    j--;
  }
  if (i === 0 && j === 0) return 0;
  // The common case: both differ inside a label, and the labels compare as strings (a label before
  // a longer one it begins, unless a 0 byte follows it there: then the whole way below).
  if (i > 0 && j > 0 && a.charCodeAt(i - 1) !== 0x2e && b.charCodeAt(j - 1) !== 0x2e) {
    // Scanned here: lastIndexOf is a call into the runtime, dearer than the loop.
    let la = i - 1;
    while (la > 0 && a.charCodeAt(la - 1) !== 0x2e) la--;
    let lb = j - 1;
    while (lb > 0 && b.charCodeAt(lb - 1) !== 0x2e) lb--;
    let dot = i;
    while (dot < a.length && a.charCodeAt(dot) !== 0x2e) dot++;
    const na = dot - la;
    const nb = j + dot - i - lb;
    const n = na < nb ? na : nb;
    for (let k = 0; k < n; k++) {
      const d = a.charCodeAt(la + k) - b.charCodeAt(lb + k);
      if (d !== 0) return d;
    }
    if (na < nb && b.charCodeAt(lb + n) !== 0) return -1;
    if (na > nb && a.charCodeAt(la + n) !== 0) return 1;
  }
  return keyCompare(a, b, i, j);
}

/** `canonicalCompare` the whole way: each name read as its canonical key, from the label at `i`/`j` on. */
function keyCompare(a: string, b: string, i: number, j: number): number {
  // The labels right of the first dot at or after i (j) are the same in both.
  const dot = a.indexOf('.', i);
  let aEnd = dot < 0 ? a.length : dot;
  let bEnd = dot < 0 ? b.length : j + dot - i;
  let aStart = aEnd > 0 ? a.lastIndexOf('.', aEnd - 1) + 1 : 0;
  let ai = aStart;
  let bStart = bEnd > 0 ? b.lastIndexOf('.', bEnd - 1) + 1 : 0;
  let bi = bStart;
  let aDone = a === '';
  let bDone = b === '';
  // The two cursors' steps are written out, alike, rather than shared: this runs in every denial's
  // search, and a shared step would keep its state in memory instead of locals.
  for (;;) {
    let ca: number;
    if (aDone) ca = -1;
    else if (ai < aEnd) ca = a.charCodeAt(ai++);
    else if (aStart > 0) {
      ca = 0;
      aEnd = aStart - 1;
      aStart = aEnd > 0 ? a.lastIndexOf('.', aEnd - 1) + 1 : 0;
      ai = aStart;
    } else {
      ca = -1;
      aDone = true;
    }
    let cb: number;
    if (bDone) cb = -1;
    else if (bi < bEnd) cb = b.charCodeAt(bi++);
    else if (bStart > 0) {
      cb = 0;
      bEnd = bStart - 1;
      bStart = bEnd > 0 ? b.lastIndexOf('.', bEnd - 1) + 1 : 0;
      bi = bStart;
    } else {
      cb = -1;
      bDone = true;
    }
    if (ca !== cb) return ca - cb;
    if (ca < 0) return 0;
  }
}
