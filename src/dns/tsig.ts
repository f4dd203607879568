// TSIG (RFC 8945) over the wire, for zone transfers, NOTIFY and the SOA queries of secondaries
// (docs/decisions/0013-dns-secondaries.md). dns-packet knows the TSIG type code
// but not its MAC, so the digest is built here from the bytes exactly as RFC 8945 §4.3 lays it out.
// Only hmac-sha256 is offered (RFC 8945 §6: mandatory to implement; what `tsig-keygen` writes).
//
// Also a small walker over a message's sections (names with compression pointers, RR headers),
// so the TSIG record can be found and cut off without decoding the whole message.
import crypto from 'node:crypto';
import { TSIG_ALGORITHM as ALGORITHM, nameWire, readName, type TsigKey } from '../dns-wire.js';

export const TSIG_TYPE = 250;
const CLASS_ANY = 255;
/** RFC 8945 §5.2.3: the recommended fudge. */
export const FUDGE = 300;

/** TSIG error codes (RFC 8945 §3) and the header RCODE they go with. */
export const BADSIG = 16;
export const BADKEY = 17;
export const BADTIME = 18;
export const NOTAUTH = 9;

/** Offset after the name at `off` without reading it, or -1. */
function skipName(msg: Buffer, off: number): number {
  let p = off;
  while (p < msg.length) {
    const len = msg[p];
    if (len === 0) return p + 1;
    if ((len & 0xc0) === 0xc0) return p + 2 <= msg.length ? p + 2 : -1;
    if (len > 63) return -1;
    p += 1 + len;
  }
  return -1;
}

/**
 * Where the last additional record starts when it is a TSIG record, or -1. Cheap (no allocation):
 * the DNS server runs it on queries that carry additional records, so unsigned queries cost only
 * this walk.
 */
export function tsigOffset(msg: Buffer): number {
  if (msg.length < 12) return -1;
  const ar = msg.readUInt16BE(10);
  if (ar === 0) return -1;
  const qd = msg.readUInt16BE(4);
  const rrs = msg.readUInt16BE(6) + msg.readUInt16BE(8) + ar;
  let p = 12;
  for (let i = 0; i < qd; i++) {
    p = skipName(msg, p);
    if (p < 0 || p + 4 > msg.length) return -1;
    p += 4;
  }
  let last = -1;
  let lastType = 0;
  for (let i = 0; i < rrs; i++) {
    last = p;
    p = skipName(msg, p);
    if (p < 0 || p + 10 > msg.length) return -1;
    lastType = msg.readUInt16BE(p);
    p += 10 + msg.readUInt16BE(p + 8);
    if (p > msg.length) return -1;
  }
  return lastType === TSIG_TYPE && p === msg.length ? last : -1;
}

export interface TsigRecord {
  /** Where the TSIG record starts: the message before it is what was signed. */
  start: number;
  keyName: string;
  algorithm: string;
  timeSigned: number;
  fudge: number;
  mac: Buffer;
  originalId: number;
  error: number;
  other: Buffer;
}

/** The TSIG record of `msg` (the last additional record), or null when there is none or it is malformed. */
export function readTsig(msg: Buffer): TsigRecord | null {
  const start = tsigOffset(msg);
  if (start < 0) return null;
  const owner = readName(msg, start);
  if (!owner) return null;
  let p = owner.next + 10; // type, class, ttl, rdlength
  if (msg.readUInt16BE(owner.next + 2) !== CLASS_ANY) return null;
  const alg = readName(msg, p);
  if (!alg) return null;
  p = alg.next;
  if (p + 10 > msg.length) return null;
  const timeSigned = msg.readUInt16BE(p) * 2 ** 32 + msg.readUInt32BE(p + 2);
  const fudge = msg.readUInt16BE(p + 6);
  const macSize = msg.readUInt16BE(p + 8);
  p += 10;
  if (p + macSize + 6 > msg.length) return null;
  const mac = msg.subarray(p, p + macSize);
  p += macSize;
  const originalId = msg.readUInt16BE(p);
  const error = msg.readUInt16BE(p + 2);
  const otherLen = msg.readUInt16BE(p + 4);
  p += 6;
  if (p + otherLen !== msg.length) return null;
  return { start, keyName: owner.name, algorithm: alg.name, timeSigned, fudge, mac, originalId, error, other: msg.subarray(p, p + otherLen) };
}

const u16 = (n: number) => {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n);
  return b;
};
const time48 = (t: number) => {
  const b = Buffer.alloc(6);
  b.writeUInt16BE(Math.floor(t / 2 ** 32));
  b.writeUInt32BE(t % 2 ** 32, 2);
  return b;
};
const withMacSize = (mac: Buffer) => Buffer.concat([u16(mac.length), mac]);

/** The message as signed: without the TSIG record, ARCOUNT one less, the original id in the header (RFC 8945 §4.3.2). */
function unsignedPart(msg: Buffer, t: TsigRecord): Buffer {
  const m = Buffer.from(msg.subarray(0, t.start));
  m.writeUInt16BE(t.originalId, 0);
  m.writeUInt16BE(msg.readUInt16BE(10) - 1, 10);
  return m;
}

/** RFC 8945 §4.3.3: the TSIG variables. */
function variables(key: TsigKey, timeSigned: number, fudge: number, error: number, other: Buffer): Buffer {
  return Buffer.concat([nameWire(key.name), u16(CLASS_ANY), Buffer.alloc(4), nameWire(key.algorithm), time48(timeSigned), u16(fudge), u16(error), u16(other.length), other]);
}

const hmac = (key: TsigKey, parts: Buffer[]) => {
  const h = crypto.createHmac('sha256', key.secret);
  for (const p of parts) h.update(p);
  return h.digest();
};

/** The TSIG record appended to `msg` (ARCOUNT + 1). */
function appendTsig(msg: Buffer, key: TsigKey, o: { timeSigned: number; fudge: number; mac: Buffer; originalId: number; error: number; other: Buffer }): Buffer {
  const rdata = Buffer.concat([nameWire(key.algorithm), time48(o.timeSigned), u16(o.fudge), withMacSize(o.mac), u16(o.originalId), u16(o.error), u16(o.other.length), o.other]);
  const rr = Buffer.concat([nameWire(key.name), u16(TSIG_TYPE), u16(CLASS_ANY), Buffer.alloc(4), u16(rdata.length), rdata]);
  const out = Buffer.concat([msg, rr]);
  out.writeUInt16BE(msg.readUInt16BE(10) + 1, 10);
  return out;
}

export const nowSeconds = () => Math.floor(Date.now() / 1000);

export type VerifyResult = { ok: true; tsig: TsigRecord; key: TsigKey } | { ok: false; error: number; tsig: TsigRecord; key?: TsigKey };

/**
 * Checks a signed request (RFC 8945 §5.2): the key is known (`keys` by lower-case name) and of our
 * algorithm, the MAC is right (compared in constant time, full length only), then the time is
 * within the fudge. `verifyRequest(msg, readTsig(msg)!, keys)`.
 */
export function verifyRequest(msg: Buffer, tsig: TsigRecord, keys: (name: string) => TsigKey | undefined, now = nowSeconds()): VerifyResult {
  const key = keys(tsig.keyName);
  if (!key || tsig.algorithm !== ALGORITHM) return { ok: false, error: BADKEY, tsig };
  const expected = hmac(key, [unsignedPart(msg, tsig), variables(key, tsig.timeSigned, tsig.fudge, tsig.error, tsig.other)]);
  // RFC 8945 §5.2.2.1 allows truncated MACs; every implementation we talk to sends all 32 bytes.
  if (tsig.mac.length !== expected.length || !crypto.timingSafeEqual(tsig.mac, expected)) return { ok: false, error: BADSIG, tsig, key };
  if (Math.abs(now - tsig.timeSigned) > tsig.fudge) return { ok: false, error: BADTIME, tsig, key };
  return { ok: true, tsig, key };
}

/** Signs a request (NOTIFY, a test client's query): `signRequest(msg, key)` → { message, mac }. */
export function signRequest(msg: Buffer, key: TsigKey, now = nowSeconds()): { message: Buffer; mac: Buffer } {
  const id = msg.readUInt16BE(0);
  const mac = hmac(key, [msg, variables(key, now, FUDGE, 0, Buffer.alloc(0))]);
  return { message: appendTsig(msg, key, { timeSigned: now, fudge: FUDGE, mac, originalId: id, error: 0, other: Buffer.alloc(0) }), mac };
}

/**
 * Signs the responses to one verified request, in order (RFC 8945 §5.3): the first over the
 * request's MAC and its own variables, each later one over the prior MAC and the TSIG timers
 * (§5.3.1; we sign every message of a transfer, which the RFC allows).
 * `const s = new ResponseSigner(key, requestMac, originalId); for (m of msgs) send(s.sign(m))`.
 */
export class ResponseSigner {
  private prior: Buffer;
  private first = true;

  constructor(private readonly key: TsigKey, requestMac: Buffer, private readonly originalId: number) {
    this.prior = requestMac;
  }

  sign(msg: Buffer, o: { error?: number; other?: Buffer; now?: number } = {}): Buffer {
    const now = o.now ?? nowSeconds();
    const error = o.error ?? 0;
    const other = o.other ?? Buffer.alloc(0);
    const unsigned = Buffer.from(msg);
    unsigned.writeUInt16BE(this.originalId, 0);
    const tail = this.first ? variables(this.key, now, FUDGE, error, other) : Buffer.concat([time48(now), u16(FUDGE)]);
    const mac = hmac(this.key, [withMacSize(this.prior), unsigned, tail]);
    this.prior = mac;
    this.first = false;
    return appendTsig(msg, this.key, { timeSigned: now, fudge: FUDGE, mac, originalId: this.originalId, error, other });
  }
}

/**
 * Checks the signed responses to a request we signed with `requestMac`, in order (tests, and
 * anyone who wants to see our signatures verify): returns false at the first bad one.
 * Every message must be signed (we sign every one).
 */
export function verifyResponses(msgs: Buffer[], key: TsigKey, requestMac: Buffer): boolean {
  let prior = requestMac;
  for (let i = 0; i < msgs.length; i++) {
    const t = readTsig(msgs[i]);
    if (!t || t.keyName !== key.name || t.algorithm !== ALGORITHM) return false;
    const body = unsignedPart(msgs[i], t);
    const tail = i === 0 ? variables(key, t.timeSigned, t.fudge, t.error, t.other) : Buffer.concat([time48(t.timeSigned), u16(t.fudge)]);
    const mac = hmac(key, [withMacSize(prior), body, tail]);
    if (!t.mac.equals(mac)) return false;
    prior = t.mac;
  }
  return true;
}

/**
 * An unsigned error response carrying a TSIG record with `error` and no MAC (RFC 8945 §5.2.2:
 * BADKEY and BADSIG are not signed). `msg` is the response without TSIG.
 */
export function unsignedTsigError(msg: Buffer, tsig: TsigRecord, error: number): Buffer {
  const key: TsigKey = { name: tsig.keyName, algorithm: ALGORITHM, secret: Buffer.alloc(0) };
  const rdata = Buffer.concat([nameWire(tsig.algorithm), time48(tsig.timeSigned), u16(tsig.fudge), u16(0), u16(tsig.originalId), u16(error), u16(0)]);
  const rr = Buffer.concat([nameWire(key.name), u16(TSIG_TYPE), u16(CLASS_ANY), Buffer.alloc(4), u16(rdata.length), rdata]);
  const out = Buffer.concat([msg, rr]);
  out.writeUInt16BE(msg.readUInt16BE(10) + 1, 10);
  return out;
}

/** The time part of a BADTIME response's other data (RFC 8945 §5.2.3). */
export const timeOther = (now = nowSeconds()) => time48(now);

/**
 * A BIND key file as `tsig-keygen` writes it:
 * `key "name" { algorithm hmac-sha256; secret "base64"; };` → { name, algorithm, secret }.
 * Throws with a message for people on anything else (another algorithm, several keys, no secret).
 */
export function parseBindKey(text: string): { name: string; algorithm: string; secret: string } {
  // Comments (/* */, //, #) go, but not inside quoted strings: a base64 secret may hold "//".
  const clean = text.replace(/("[^"]*")|\/\*[\s\S]*?\*\/|(?:#|\/\/)[^\n]*/g, (m, quoted: string | undefined) => quoted ?? ' ');
  const keys = [...clean.matchAll(/key\s+"?([A-Za-z0-9._-]+)"?\s*\{([^}]*)\}\s*;/g)];
  if (keys.length !== 1) throw new Error(keys.length ? 'the file holds several keys: give a file with one' : 'no `key "name" { algorithm …; secret "…"; };` statement found');
  const [, name, body] = keys[0];
  const alg = /algorithm\s+"?([A-Za-z0-9-]+)"?\s*;/.exec(body)?.[1]?.toLowerCase();
  const secret = /secret\s+"([A-Za-z0-9+/=\s]+)"\s*;/.exec(body)?.[1]?.replace(/\s+/g, '');
  if (!alg) throw new Error(`key "${name}" names no algorithm`);
  if (alg !== ALGORITHM) throw new Error(`key "${name}" uses ${alg}; only ${ALGORITHM} is supported (tsig-keygen -a hmac-sha256 ${name})`);
  if (!secret || Buffer.from(secret, 'base64').length < 16) throw new Error(`key "${name}" has no base64 secret of at least 16 bytes`);
  return { name: name.replace(/\.$/, '').toLowerCase(), algorithm: alg, secret };
}
