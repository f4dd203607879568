// DNSSEC keys and signatures with node:crypto (docs/decisions/0032-dnssec.md): a zone's combined
// signing key, its DNSKEY record, key tag (RFC 4034 App. B) and DS digest (RFC 4034 §5.1.4, SHA-256),
// and RRSIG records over RRsets in canonical form (RFC 4034 §3.1.8.1, §6). Pure: no store, no sockets.
import crypto from 'node:crypto';
import { nameWire } from '../dns-wire.js';

/** ECDSA P-256 with SHA-256 (RFC 6605) and Ed25519 (RFC 8080). */
export type DnssecAlgorithm = 13 | 15;
/** A combined signing key: zone key + secure entry point (RFC 4034 §2.1.1). */
export const CSK_FLAGS = 257;
export const TYPE_RRSIG = 46;
export const TYPE_NSEC = 47;
export const TYPE_DNSKEY = 48;
export const TYPE_CDS = 59;
export const TYPE_CDNSKEY = 60;

export interface SigningKey {
  algorithm: DnssecAlgorithm;
  flags: number;
  /** The DNSKEY RDATA: flags, protocol 3, algorithm, public key. */
  dnskey: Buffer;
  keyTag: number;
  privateKey: crypto.KeyObject;
}

/** A new private key as PKCS#8 PEM: `newPrivateKey(13)`. */
export function newPrivateKey(algorithm: DnssecAlgorithm): string {
  const { privateKey } = algorithm === 13 ? crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }) : crypto.generateKeyPairSync('ed25519');
  return privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
}

/** The DNSKEY public key field: P-256's X and Y (RFC 6605 §4), Ed25519's 32 bytes (RFC 8080 §3). */
function publicKeyField(key: crypto.KeyObject, algorithm: DnssecAlgorithm): Buffer {
  const jwk = crypto.createPublicKey(key).export({ format: 'jwk' });
  const part = (s: string | undefined) => Buffer.from(s ?? '', 'base64url');
  return algorithm === 13 ? Buffer.concat([part(jwk.x), part(jwk.y)]) : part(jwk.x);
}

/** The key from its PEM: `signingKey(pem, 13)`; throws when the PEM is not a key of that algorithm. */
export function signingKey(pem: string, algorithm: DnssecAlgorithm, flags = CSK_FLAGS): SigningKey {
  const privateKey = crypto.createPrivateKey(pem);
  const expected = algorithm === 13 ? 'ec' : 'ed25519';
  if (privateKey.asymmetricKeyType !== expected) throw new Error(`a DNSSEC key of algorithm ${algorithm} must be ${expected}`);
  const pub = publicKeyField(privateKey, algorithm);
  const dnskey = Buffer.alloc(4 + pub.length);
  dnskey.writeUInt16BE(flags, 0);
  dnskey[2] = 3;
  dnskey[3] = algorithm;
  pub.copy(dnskey, 4);
  return { algorithm, flags, dnskey, keyTag: keyTag(dnskey), privateKey };
}

/** RFC 4034 Appendix B: the key tag of a DNSKEY RDATA (any algorithm but 1). */
export function keyTag(dnskey: Buffer): number {
  let ac = 0;
  for (let i = 0; i < dnskey.length; i++) ac += i & 1 ? dnskey[i] : dnskey[i] << 8;
  ac += (ac >> 16) & 0xffff;
  return ac & 0xffff;
}

/** RFC 4034 §5.1.4 with SHA-256 (RFC 4509): digest over the owner in canonical form and the DNSKEY RDATA. */
export function dsDigest(zone: string, dnskey: Buffer): Buffer {
  return crypto.createHash('sha256').update(nameWire(zone)).update(dnskey).digest();
}

/** CDS RDATA (RFC 7344 §3.1): as the DS RDATA with SHA-256, `<key tag> <algorithm> 2 <digest>`. */
export function cdsRdata(zone: string, key: Pick<SigningKey, 'algorithm' | 'dnskey' | 'keyTag'>): Buffer {
  const head = Buffer.from([key.keyTag >> 8, key.keyTag & 0xff, key.algorithm, 2]);
  return Buffer.concat([head, dsDigest(zone, key.dnskey)]);
}

/** A key's public side: what DNSKEY and DS records are made of. */
export type PublicKey = Pick<SigningKey, 'algorithm' | 'flags' | 'dnskey' | 'keyTag'>;

/** The public side from what the store keeps (flags, algorithm, base64 of the key field). */
export function publicKey(flags: number, algorithm: number, base64: string): PublicKey {
  const dnskey = Buffer.concat([Buffer.from([flags >> 8, flags & 0xff, 3, algorithm]), Buffer.from(base64, 'base64')]);
  return { flags, algorithm: algorithm as DnssecAlgorithm, dnskey, keyTag: keyTag(dnskey) };
}

/** The DS record a registry takes, in presentation form: `<key tag> <algorithm> 2 <digest>`. */
export const dsText = (zone: string, key: PublicKey): string => `${key.keyTag} ${key.algorithm} 2 ${dsDigest(zone, key.dnskey).toString('hex').toUpperCase()}`;

/** The DNSKEY in presentation form: `257 3 13 <base64>`. */
export const dnskeyText = (key: PublicKey): string => `${key.flags} 3 ${key.algorithm} ${key.dnskey.subarray(4).toString('base64')}`;

/** Signature times, in seconds since the epoch. */
export interface Validity {
  inception: number;
  expiration: number;
}

/** Labels of a name for the RRSIG Labels field: the root and a leading wildcard label do not count. */
export function labelCount(owner: string): number {
  if (owner === '') return 0;
  const n = owner.split('.').length;
  return owner.startsWith('*.') || owner === '*' ? n - 1 : n;
}

/** One record of an RRset to sign: its RDATA in canonical form (our names are lower case already). */
export interface SetToSign {
  /** Absolute, lower-case, without the trailing dot. */
  owner: string;
  type: number;
  ttl: number;
  rdatas: Buffer[];
}

/**
 * The RRSIG RDATA over one RRset (RFC 4034 §3.1.8.1): the RDATA fields before the signature, then
 * each record in canonical form and order (RDATA as octet strings, duplicates once).
 */
export function rrsigRdata(set: SetToSign, zone: string, key: SigningKey, v: Validity): Buffer {
  const signer = nameWire(zone);
  const head = Buffer.alloc(18 + signer.length);
  head.writeUInt16BE(set.type, 0);
  head[2] = key.algorithm;
  head[3] = labelCount(set.owner);
  head.writeUInt32BE(set.ttl, 4);
  head.writeUInt32BE(v.expiration >>> 0, 8);
  head.writeUInt32BE(v.inception >>> 0, 12);
  head.writeUInt16BE(key.keyTag, 16);
  signer.copy(head, 18);
  const owner = nameWire(set.owner);
  const sorted = [...set.rdatas].sort(Buffer.compare).filter((r, i, a) => i === 0 || !r.equals(a[i - 1]));
  const parts: Buffer[] = [head];
  for (const rdata of sorted) {
    const fixed = Buffer.alloc(10);
    fixed.writeUInt16BE(set.type, 0);
    fixed.writeUInt16BE(1, 2);
    fixed.writeUInt32BE(set.ttl, 4);
    fixed.writeUInt16BE(rdata.length, 8);
    parts.push(owner, fixed, rdata);
  }
  const data = Buffer.concat(parts);
  // ECDSA in DNSSEC's raw r||s form (RFC 6605 §4), not DER.
  const signature =
    key.algorithm === 13 ? crypto.sign('sha256', data, { key: key.privateKey, dsaEncoding: 'ieee-p1363' }) : crypto.sign(null, data, key.privateKey);
  return Buffer.concat([head, signature]);
}

/** The NSEC type bit map (RFC 4034 §4.1.2) of `types`. */
export function typeBitmap(types: Iterable<number>): Buffer {
  const windows = new Map<number, Buffer>();
  for (const t of types) {
    const w = t >> 8;
    let bits = windows.get(w);
    if (!bits) windows.set(w, (bits = Buffer.alloc(32)));
    bits[(t & 0xff) >> 3] |= 0x80 >> (t & 7);
  }
  const out: Buffer[] = [];
  for (const w of [...windows.keys()].sort((a, b) => a - b)) {
    const bits = windows.get(w)!;
    let len = 32;
    while (len > 0 && bits[len - 1] === 0) len--;
    out.push(Buffer.from([w, len]), bits.subarray(0, len));
  }
  return Buffer.concat(out);
}

/** NSEC RDATA: the next owner (canonical wire form) and the type bit map. */
export const nsecRdata = (next: string, types: Iterable<number>): Buffer => Buffer.concat([nameWire(next), typeBitmap(types)]);

/**
 * The key of a name in canonical order (RFC 4034 §6.1): labels from the right, a separator below any
 * label byte, so `a` < `ab` and a parent comes before its children; compared as strings.
 */
export const canonicalKey = (name: string): string => (name === '' ? '' : name.split('.').reverse().join('\0'));
