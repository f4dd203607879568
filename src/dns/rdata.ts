// From a stored DNS record (API guide "DNS records"; migration 002) to the resource
// record the DNS server puts on the wire (a dns-packet answer). Pure: no store, no sockets.
//
// The store holds owner names relative to the zone ('' apex, '*' / '*.x' wildcards) and `data` in
// presentation form (`10 mail.example.com`, `0 issue "letsencrypt.org"`, TXT as the bare text).
// The API validates what it stores (src/resources/dns-records); this module parses again on its
// own, strictly, because a DNS server must never put a malformed record on the wire, whatever a
// row says: a record that does not parse is skipped (and logged) instead of served.
import net from 'node:net';
import dnsPacket, { type Answer } from 'dns-packet';

/** One row of dns_records as the DNS server reads it. */
export interface StoredRecord {
  /** Relative to the zone, lower-case; '' is the apex. */
  name: string;
  record_type: string;
  data: string;
  ttl: number;
  /** The row's id, where known: RRsets at one name are listed in the order they were created. */
  id?: number;
}

export class RdataError extends Error {}

const fail = (message: string): never => {
  throw new RdataError(message);
};

/** Types this server serves from stored records (SOA and apex NS come from settings). */
export const SERVED_TYPES = ['A', 'AAAA', 'CNAME', 'MX', 'TXT', 'SRV', 'CAA', 'NS', 'DS', 'TLSA'] as const;

/** Wire type codes of the types we answer for; others are looked up by code and never match. */
export const TYPE_CODES: Record<string, number> = {
  A: 1, NS: 2, CNAME: 5, SOA: 6, PTR: 12, MX: 15, TXT: 16, AAAA: 28, SRV: 33, DS: 43, TLSA: 52, CAA: 257,
};

// A label as it may appear in a name we put on the wire: dns-packet writes labels as text split on
// dots, so only printable ASCII without dots, backslashes and spaces is safe (host names,
// `_service` labels, and '*' where wildcards are allowed).
const LABEL = /^[A-Za-z0-9_*-]{1,63}$/;

/**
 * A domain name in presentation form, absolute (a trailing dot is optional), without the dot:
 * `parseName('Mail.Example.com.')` → 'mail.example.com'; `parseName('.')` → '' (the root,
 * allowed only with `{ root: true }`, e.g. a null MX). Lower-cased: names compare ignoring case.
 */
export function parseName(input: string, opts: { root?: boolean; wildcard?: boolean } = {}): string {
  const s = input.endsWith('.') ? input.slice(0, -1) : input;
  if (s === '') return opts.root ? '' : fail('empty host name');
  if (s.length > 253) fail('host name longer than 253 characters');
  const labels = s.split('.');
  labels.forEach((l, i) => {
    if (!LABEL.test(l)) fail(`invalid label "${l}" in "${input}"`);
    if (l.includes('*') && !(opts.wildcard && i === 0 && l === '*')) fail(`"*" is only allowed as a whole first label: "${input}"`);
  });
  return s.toLowerCase();
}

/** The absolute owner name of a record: `ownerName('www', 'example.com')` → 'www.example.com'. */
export function ownerName(relative: string, zone: string): string {
  if (relative === '' || relative === '@') return zone;
  // The zone's own labels are valid (it is a served zone's name): only the relative part is checked.
  if (relative.endsWith('.')) fail(`invalid label "" in "${relative}.${zone}"`);
  const owner = `${parseName(relative, { wildcard: true })}.${zone}`;
  if (owner.length > 253) fail('host name longer than 253 characters');
  return owner;
}

/** An unsigned integer in decimal without sign or leading zeros, at most `max`. */
export function parseUint(s: string, max: number, what: string): number {
  if (!/^(0|[1-9][0-9]{0,9})$/.test(s)) fail(`${what}: "${s}" is not a whole number`);
  const n = Number(s);
  if (n > max) fail(`${what}: ${n} is larger than ${max}`);
  return n;
}

const IPV4 = /^(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}$/;

/** Dotted quad without leading zeros: `parseIPv4('192.0.2.1')`. */
export function parseIPv4(s: string): string {
  if (!IPV4.test(s)) fail(`"${s}" is not an IPv4 address`);
  return s;
}

/** Any RFC 4291 text form (no zone index): `parseIPv6('2001:db8::1')`. */
export function parseIPv6(s: string): string {
  if (s.includes('%') || !net.isIPv6(s)) fail(`"${s}" is not an IPv6 address`);
  return s;
}

/** Hex digits, even count, spaces allowed between groups (RFC 4034 §5.3): → bytes. */
export function parseHex(s: string, what: string): Buffer {
  const hex = s.replace(/\s+/g, '');
  if (hex === '' || hex.length % 2 !== 0 || !/^[0-9a-fA-F]+$/.test(hex)) fail(`${what}: "${s}" is not an even number of hex digits`);
  return Buffer.from(hex, 'hex');
}

/**
 * A TXT value → character-strings of at most 255 bytes each (RFC 1035 §3.3.14), split on byte
 * boundaries of the UTF-8 text. `splitTxt('')` → one empty string (a TXT RR has at least one).
 */
export function splitTxt(text: string): Buffer[] {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length > 65000) fail('TXT value too long for one record');
  const parts: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += 255) parts.push(bytes.subarray(i, i + 255));
  return parts.length ? parts : [Buffer.alloc(0)];
}

/**
 * A CAA value in presentation form: quoted (`"letsencrypt.org"`, `\"` `\\` and `\DDD` escapes) or a
 * bare word (RFC 8659 §4.1.1). Returns the value's text.
 */
export function parseCaaValue(s: string): string {
  if (!s.startsWith('"')) {
    if (!/^[\x21-\x7e]*$/.test(s) || s.includes('"')) fail(`CAA value "${s}" must be quoted`);
    return s;
  }
  if (s.length < 2 || !s.endsWith('"')) fail('CAA value: missing closing quote');
  const inner = s.slice(1, -1);
  let out = '';
  for (let i = 0; i < inner.length; i++) {
    const c = inner[i];
    if (c === '"') fail('CAA value: unescaped quote');
    if (c !== '\\') {
      out += c;
      continue;
    }
    const d = /^[0-9]{3}/.exec(inner.slice(i + 1));
    if (d) {
      const code = Number(d[0]);
      if (code > 255) fail('CAA value: escape larger than \\255');
      out += String.fromCharCode(code);
      i += 3;
    } else if (i + 1 < inner.length) {
      out += inner[++i];
    } else {
      fail('CAA value: dangling backslash');
    }
  }
  if (!/^[\x20-\x7e]*$/.test(out)) fail('CAA value must be printable ASCII');
  return out;
}

const fields = (data: string) => data.trim().split(/\s+/).filter(Boolean);

function expect(f: string[], n: number, form: string) {
  if (f.length !== n) fail(`expected "${form}", got ${f.length} field(s)`);
}

/**
 * The record data dns-packet encodes for `type`, from presentation form:
 * `parseRdata('MX', '10 mail.example.com')` → `{ preference: 10, exchange: 'mail.example.com' }`.
 * Throws RdataError for anything that is not valid syntax of that type.
 */
export function parseRdata(type: string, data: string): Record<string, unknown> {
  switch (type) {
    case 'A': {
      const f = fields(data);
      expect(f, 1, 'IPv4 address');
      return { data: parseIPv4(f[0]) };
    }
    case 'AAAA': {
      const f = fields(data);
      expect(f, 1, 'IPv6 address');
      return { data: parseIPv6(f[0]) };
    }
    case 'CNAME':
    case 'NS':
    case 'PTR': {
      const f = fields(data);
      expect(f, 1, 'host name');
      return { data: parseName(f[0]) };
    }
    case 'MX': {
      const f = fields(data);
      expect(f, 2, 'preference exchange');
      // "." is the null MX of RFC 7505.
      return { data: { preference: parseUint(f[0], 65535, 'MX preference'), exchange: parseName(f[1], { root: true }) } };
    }
    case 'SRV': {
      const f = fields(data);
      expect(f, 4, 'priority weight port target');
      return {
        data: {
          priority: parseUint(f[0], 65535, 'SRV priority'),
          weight: parseUint(f[1], 65535, 'SRV weight'),
          port: parseUint(f[2], 65535, 'SRV port'),
          target: parseName(f[3], { root: true }),
        },
      };
    }
    case 'TXT':
      // The stored value is the text itself: no quotes, no escapes, spaces kept as they are.
      return { data: splitTxt(data) };
    case 'CAA': {
      const m = /^\s*([0-9]+)\s+([A-Za-z0-9]+)\s+(.*?)\s*$/.exec(data);
      if (!m) return fail('expected "flags tag value"');
      const flags = parseUint(m[1], 255, 'CAA flags');
      if (m[2].length > 15) fail('CAA tag longer than 15 characters');
      return { data: { flags, tag: m[2].toLowerCase(), value: parseCaaValue(m[3]) } };
    }
    case 'DS': {
      const f = fields(data);
      if (f.length < 4) fail('expected "key-tag algorithm digest-type digest"');
      return {
        data: {
          keyTag: parseUint(f[0], 65535, 'DS key tag'),
          algorithm: parseUint(f[1], 255, 'DS algorithm'),
          digestType: parseUint(f[2], 255, 'DS digest type'),
          digest: parseHex(f.slice(3).join(''), 'DS digest'),
        },
      };
    }
    case 'TLSA': {
      const f = fields(data);
      if (f.length < 4) fail('expected "usage selector matching-type data"');
      return {
        data: {
          usage: parseUint(f[0], 255, 'TLSA usage'),
          selector: parseUint(f[1], 255, 'TLSA selector'),
          matchingType: parseUint(f[2], 255, 'TLSA matching type'),
          certificate: parseHex(f.slice(3).join(''), 'TLSA data'),
        },
      };
    }
    default:
      return fail(`record type ${type} is not served`);
  }
}

/**
 * One stored record as a dns-packet answer with its absolute owner name (lower-case):
 * `toAnswer({ name: 'www', record_type: 'A', data: '192.0.2.1', ttl: 3600 }, 'example.com')`
 * → `{ type: 'A', class: 'IN', name: 'www.example.com', ttl: 3600, data: '192.0.2.1' }`.
 */
export function toAnswer(rec: StoredRecord, zone: string): Answer {
  const type = rec.record_type.toUpperCase();
  if (!Number.isInteger(rec.ttl) || rec.ttl < 0 || rec.ttl > 0x7fffffff) fail(`TTL ${rec.ttl} out of range`);
  const name = ownerName(rec.name, zone);
  return { type, class: 'IN', name, ttl: rec.ttl, ...parseRdata(type, rec.data) } as Answer;
}

/** A name in wire form (labels as validated by parseName: printable ASCII, no escapes); '' the root. */
function nameBytes(name: string): Buffer {
  const out = Buffer.allocUnsafe(name === '' ? 1 : name.length + 2);
  let p = 0;
  if (name !== '') {
    for (const label of name.split('.')) {
      out[p++] = label.length;
      p += out.write(label, p, 'latin1');
    }
  }
  out[p] = 0;
  return out;
}

/** One stored record in the form the zones hold: owner, type code, TTL and RDATA in wire form. */
export interface WireRecord {
  owner: string;
  type: number;
  ttl: number;
  rdata: Buffer;
  /** The stored record's id (-1 for ours: SOA, apex NS): orders the RRsets of a name. */
  order: number;
}

/**
 * `toAnswer`, then the RDATA in wire form: the common types (A, TXT, CNAME, NS, PTR, MX) written
 * here directly from what parseRdata validated, the others through dns-packet. Throws RdataError
 * for exactly what toAnswer refuses.
 */
export function toWireRecord(rec: StoredRecord, zone: string): WireRecord {
  return plainWireRecord(rec, zone) ?? wireRecordOf(rec, zone);
}

// What most rows are, in the form the API stores them: a lower-case relative owner without
// wildcard, an A record written as a plain dotted quad, a TXT of at most 255 bytes. Such rows are
// encoded without toAnswer's objects (a million of them at start); anything else,
// valid or not, takes wireRecordOf, which alone decides what is refused.
const PLAIN_RELATIVE = /^[a-z0-9_-]{1,63}(?:\.[a-z0-9_-]{1,63})*$/;

function plainWireRecord(rec: StoredRecord, zone: string): WireRecord | null {
  const { ttl } = rec;
  if (!Number.isInteger(ttl) || ttl < 0 || ttl > 0x7fffffff) return null;
  let owner: string;
  if (rec.name === '') owner = zone;
  else if (PLAIN_RELATIVE.test(rec.name) && rec.name.length + 1 + zone.length <= 253) owner = `${rec.name}.${zone}`;
  else return null;
  let rdata: Buffer;
  let type: number;
  switch (rec.record_type) {
    case 'A': {
      if (!IPV4.test(rec.data)) return null;
      rdata = Buffer.allocUnsafe(4);
      let octet = 0;
      let at = 0;
      for (let i = 0; i < rec.data.length; i++) {
        const c = rec.data.charCodeAt(i);
        if (c === 46) {
          rdata[at++] = octet;
          octet = 0;
        } else octet = octet * 10 + c - 48;
      }
      rdata[at] = octet;
      type = 1;
      break;
    }
    case 'TXT': {
      const size = Buffer.byteLength(rec.data, 'utf8');
      if (size > 255) return null;
      rdata = Buffer.allocUnsafe(size + 1);
      rdata[0] = size;
      rdata.write(rec.data, 1, 'utf8');
      type = 16;
      break;
    }
    default:
      return null;
  }
  return { owner, type, ttl, rdata, order: rec.id ?? 0 };
}

function wireRecordOf(rec: StoredRecord, zone: string): WireRecord {
  const a = toAnswer(rec, zone);
  const type = TYPE_CODES[a.type];
  let rdata: Buffer;
  switch (a.type) {
    case 'A':
      rdata = Buffer.from((a.data as string).split('.').map(Number));
      break;
    case 'TXT': {
      const parts = a.data as Buffer[];
      rdata = Buffer.allocUnsafe(parts.reduce((n, b) => n + b.length + 1, 0));
      let p = 0;
      for (const b of parts) {
        rdata[p++] = b.length;
        p += b.copy(rdata, p);
      }
      break;
    }
    case 'CNAME':
    case 'NS':
    case 'PTR':
      rdata = nameBytes(a.data as string);
      break;
    case 'MX': {
      const mx = a.data as { preference: number; exchange: string };
      const name = nameBytes(mx.exchange);
      rdata = Buffer.allocUnsafe(2 + name.length);
      rdata.writeUInt16BE(mx.preference, 0);
      name.copy(rdata, 2);
      break;
    }
    default:
      rdata = rdataOf(a);
  }
  return { owner: a.name, type, ttl: a.ttl ?? 0, rdata, order: rec.id ?? 0 };
}

/** The RDATA of a record as dns-packet encodes it (cut at RDLENGTH: it over-counts escaped dots, `dns\\.admin`). */
export function rdataOf(a: Answer): Buffer {
  const rr = dnsPacket.answer.encode({ ...a, name: '.' });
  return rr.subarray(11, 11 + rr.readUInt16BE(9));
}

/** Writes TYPE, CLASS IN, TTL, RDLENGTH and RDATA of a record at `p` of `out`; returns the offset after them. */
export function writeRecordTail(out: Buffer, p: number, type: number, ttl: number, rdata: Buffer): number {
  out.writeUInt16BE(type, p);
  out.writeUInt16BE(1, p + 2);
  out.writeUInt32BE(ttl, p + 4);
  out.writeUInt16BE(rdata.length, p + 8);
  return p + 10 + rdata.copy(out, p + 10);
}

/** One record of class IN in wire form, its owner written out (the SOA of transfers and negative answers). */
export function recordWire(a: Answer): Buffer {
  const owner = dnsPacket.name.encode(a.name);
  const rdata = rdataOf(a);
  const out = Buffer.allocUnsafe(owner.length + 10 + rdata.length);
  owner.copy(out, 0);
  writeRecordTail(out, owner.length, TYPE_CODES[a.type], a.ttl ?? 0, rdata);
  return out;
}
