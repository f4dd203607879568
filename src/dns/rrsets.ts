// RRsets in the compact form the zones hold (docs/decisions/0014-dns-zones-in-wire-form.md): each
// one latin1 string of its records in wire form, owners written as the pointer C0 0C; encoded once
// when a zone is built, copied into replies as they are (query.ts), decoded only by the general
// path and transfers.
import dnsPacket, { type Answer } from 'dns-packet';
import { writeRecordTail, type WireRecord } from './rdata.js';

/**
 * One RRset in wire form: its records joined, each `C0 0C` TYPE CLASS TTL RDLENGTH RDATA, as a
 * latin1 string (one byte a character; far smaller in V8 than a Buffer per set).
 */
export type WireSet = string;
/** The RRsets of one owner: the set itself when there is one (the common case), else a list. */
export type Sets = WireSet | WireSet[];

/** The type of an RRset (every record in it has it). */
export const setType = (s: WireSet): number => (s.charCodeAt(2) << 8) | s.charCodeAt(3);

/** How many records an RRset holds. */
export function setCount(s: WireSet): number {
  let n = 0;
  for (let p = 0; p < s.length; p += 12 + ((s.charCodeAt(p + 10) << 8) | s.charCodeAt(p + 11))) n++;
  return n;
}

/** The RRset of `type` among an owner's sets, if any. */
export function pickSet(sets: Sets, type: number): WireSet | undefined {
  if (typeof sets === 'string') return setType(sets) === type ? sets : undefined;
  for (const s of sets) if (setType(s) === type) return s;
  return undefined;
}

export const listOf = (sets: Sets): WireSet[] => (typeof sets === 'string' ? [sets] : sets);

/** The records of an RRset, each in full wire form with `owner` written out (transfers, IXFR deltas). */
export function setRecords(s: WireSet, owner: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let p = 0; p < s.length; ) {
    const end = p + 12 + ((s.charCodeAt(p + 10) << 8) | s.charCodeAt(p + 11));
    const rr = Buffer.allocUnsafe(owner.length + end - p - 2);
    owner.copy(rr, 0);
    rr.write(s.slice(p + 2, end), owner.length, 'latin1');
    out.push(rr);
    p = end;
  }
  return out;
}

/** The records of an RRset as dns-packet answers owned by `owner` (spelt as given). */
export function setAnswers(s: WireSet, owner: string): Answer[] {
  const ownerWire = dnsPacket.name.encode(owner);
  return setRecords(s, ownerWire).map((rr) => ({ ...dnsPacket.answer.decode(rr), name: owner }) as Answer);
}

/** Encodes the records of one owner and type as an RRset with one TTL, the smallest (RFC 2181 §5.2), in one flat string. */
export function encodeSet(records: WireRecord[]): WireSet {
  let ttl = records[0].ttl;
  let size = 0;
  for (const r of records) {
    ttl = Math.min(ttl, r.ttl);
    size += 12 + r.rdata.length;
  }
  // Written in a buffer kept for the purpose (a zone build encodes a set per owner).
  if (size > scratch.length) scratch = Buffer.allocUnsafe(Math.max(size, 2 * scratch.length));
  const out = scratch;
  let p = 0;
  for (const r of records) {
    // The owner is the pointer to the question's name.
    out[p] = 0xc0;
    out[p + 1] = 0x0c;
    p = writeRecordTail(out, p + 2, r.type, ttl, r.rdata);
  }
  return out.toString('latin1', 0, size);
}
let scratch = Buffer.allocUnsafe(1 << 16);
