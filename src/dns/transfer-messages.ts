// Zone transfers to secondaries (docs/decisions/0013-dns-secondaries.md): AXFR
// (RFC 5936) and IXFR (RFC 1995) responses built from the in-memory zones, as a list of unsigned
// messages (the server signs each with TSIG and writes them on the TCP connection).
//
// IXFR history: every change the DNS server applies leaves the difference between the old and the
// new version in the zone's history (addChange for a change applied owner by owner, withHistory
// for a zone built whole again), so a secondary at an older serial gets only what changed. The history lives in memory with the zone; a serial it does not reach back to (a
// restarted server, more than MAX_DELTAS changes ago, a serial another server made) gets the whole
// zone in AXFR form, which RFC 1995 §4 allows.
import { recordWire } from './rdata.js';
import type { Delta, Zone } from './zone.js';
import { readName, serialGt } from '../dns-wire.js';

export type { Delta } from './zone.js';

export const AXFR = 252;
export const IXFR = 251;
/** Records per message are packed up to this many bytes (TCP allows 65535; room for the TSIG record and a question). */
export const MESSAGE_BYTES = 16_000;
/** Deltas kept per zone. */
const MAX_DELTAS = 50;

/** Every record of the zone except the SOA, in wire form. */
export function zoneRecords(zone: Zone): Buffer[] {
  const out: Buffer[] = [];
  for (const owner of zone.nodes.keys()) out.push(...zone.recordsAt(owner));
  return out;
}

export const soaWire = (zone: Zone) => recordWire(zone.soa);

/**
 * Gives `next` (a zone built whole to replace `prev`) the history of `prev` plus the step between
 * them: `withHistory(this.zones.get(name), rebuilt)` before `zones.set(rebuilt)`.
 */
export function withHistory(prev: Zone | undefined, next: Zone): void {
  if (!prev) return;
  if (prev.serial === next.serial) {
    next.history = prev.history;
    return;
  }
  // A serial that went back (a domain deleted and made again) starts a new history.
  if (!serialGt(next.serial, prev.serial)) return;
  const key = (b: Buffer) => b.toString('latin1');
  const old = new Map(zoneRecords(prev).map((b) => [key(b), b]));
  const now = new Map(zoneRecords(next).map((b) => [key(b), b]));
  const removed = [...old].filter(([k]) => !now.has(k)).map(([, b]) => b);
  const added = [...now].filter(([k]) => !old.has(k)).map(([, b]) => b);
  next.history = prev.history;
  addStep(next, { from: prev.serial, to: next.serial, fromSoa: soaWire(prev), toSoa: soaWire(next), removed, added });
}

/**
 * Records one step of a zone changed in place (Zone.replaceOwners): `fromSoa` is the SOA before
 * the change. A step that did not move the serial (a change applied twice) is not one.
 */
export function addChange(zone: Zone, from: number, fromSoa: Buffer, change: { removed: Buffer[]; added: Buffer[] }): void {
  if (from === zone.serial) return;
  if (!serialGt(zone.serial, from)) {
    zone.history = [];
    return;
  }
  addStep(zone, { from, to: zone.serial, fromSoa, toSoa: soaWire(zone), ...change });
}

function addStep(zone: Zone, step: Delta) {
  const history = [...zone.history, step];
  // Differences bigger than the zone itself are worth less than the zone: keep them smaller (its
  // owner count, a lower bound of its records that costs nothing to read).
  let size = history.reduce((n, d) => n + d.removed.length + d.added.length, 0);
  while (history.length > MAX_DELTAS || (history.length > 1 && size > zone.nodes.size + 2)) {
    const d = history.shift()!;
    size -= d.removed.length + d.added.length;
  }
  zone.history = history;
}

/** The deltas leading from `serial` to the zone's serial, or null when the history does not reach back to it. */
export function deltasFrom(zone: Zone, serial: number): Delta[] | null {
  const history = zone.history;
  const i = history.findIndex((d) => d.from === serial);
  if (i < 0) return null;
  const chain = history.slice(i);
  for (let k = 1; k < chain.length; k++) if (chain[k].from !== chain[k - 1].to) return null;
  return chain[chain.length - 1].to === zone.serial ? chain : null;
}

/** The QTYPE of a message's first question, or -1 (cheap: no allocation). */
export function questionType(msg: Buffer): number {
  if (msg.length < 12 || msg.readUInt16BE(4) < 1) return -1;
  let p = 12;
  while (p < msg.length) {
    const len = msg[p];
    if (len === 0) return p + 3 <= msg.length ? msg.readUInt16BE(p + 1) : -1;
    if (len > 63) return -1;
    p += 1 + len;
  }
  return -1;
}

/** The serial of the SOA in the authority section of an IXFR query (RFC 1995 §3), or null. */
export function ixfrClientSerial(msg: Buffer, questionEnd: number): number | null {
  let p = questionEnd;
  const an = msg.readUInt16BE(6);
  if (msg.readUInt16BE(8) < 1) return null;
  for (let i = 0; i <= an; i++) {
    const owner = readName(msg, p);
    if (!owner || owner.next + 10 > msg.length) return null;
    const type = msg.readUInt16BE(owner.next);
    const rdlen = msg.readUInt16BE(owner.next + 8);
    const rdata = owner.next + 10;
    if (i === an) {
      if (type !== 6) return null;
      const mname = readName(msg, rdata);
      const rname = mname && readName(msg, mname.next);
      if (!rname || rname.next + 4 > rdata + rdlen) return null;
      return msg.readUInt32BE(rname.next);
    }
    p = rdata + rdlen;
  }
  return null;
}

const QR_AA = 0x8400;

/** Packs records into response messages of at most MESSAGE_BYTES, the question in the first only (RFC 5936 §2.2.1). */
function pack(id: number, question: Buffer, records: Buffer[]): Buffer[] {
  const out: Buffer[] = [];
  let batch: Buffer[] = [];
  let size = 12 + question.length;
  const flush = () => {
    const first = out.length === 0;
    const header = Buffer.alloc(12);
    header.writeUInt16BE(id, 0);
    header.writeUInt16BE(QR_AA, 2);
    header.writeUInt16BE(first ? 1 : 0, 4);
    header.writeUInt16BE(batch.length, 6);
    out.push(Buffer.concat([header, ...(first ? [question] : []), ...batch]));
    batch = [];
    size = 12;
  };
  for (const r of records) {
    if (batch.length && size + r.length > MESSAGE_BYTES) flush();
    batch.push(r);
    size += r.length;
  }
  if (batch.length || !out.length) flush();
  return out;
}

/** AXFR (RFC 5936 §2.2): SOA, every record, SOA; in as many messages as needed. */
export function axfrMessages(zone: Zone, id: number, question: Buffer): Buffer[] {
  const soa = soaWire(zone);
  return pack(id, question, [soa, ...zoneRecords(zone), soa]);
}

/**
 * IXFR (RFC 1995 §4) for a secondary at `clientSerial`: the current SOA alone when it is up to
 * date (or ahead), the deltas when the history reaches back to its serial, else the whole zone.
 */
export function ixfrMessages(zone: Zone, id: number, question: Buffer, clientSerial: number): { kind: 'current' | 'incremental' | 'full'; messages: Buffer[] } {
  const soa = soaWire(zone);
  if (clientSerial === zone.serial || serialGt(clientSerial, zone.serial)) return { kind: 'current', messages: pack(id, question, [soa]) };
  const deltas = deltasFrom(zone, clientSerial);
  if (!deltas) return { kind: 'full', messages: axfrMessages(zone, id, question) };
  const records = [soa];
  for (const d of deltas) records.push(d.fromSoa, ...d.removed, d.toSoa, ...d.added);
  records.push(soa);
  return { kind: 'incremental', messages: pack(id, question, records) };
}
