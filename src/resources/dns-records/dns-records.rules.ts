// Validation and normalisation of DNS records (API guide "DNS records"): owner names,
// the `data` of every creatable type by its RFC syntax in presentation form, TTLs, and the rules
// between records of one name (identical record, CNAME exclusivity). Pure functions: the API, the
// plan templates (base records) and the tests share them.
//
// Stored forms (what the API shows and the DNS server parses, migration 002):
// - owner names are relative to the domain, lower-case ACE, '' for the apex, `*` as first label;
// - host names inside `data` are absolute, lower-case ACE, written WITHOUT the trailing dot
//   (`10 mail.example.com`; a trailing dot in the input is the same name);
// - fields are separated by single spaces; hex digests are upper-case (as dig prints them);
// - TXT `data` is the text itself (no quotes, no escapes); the DNS server splits it into
//   character-strings of at most 255 bytes on the wire.
import net from 'node:net';
import { aceLabel, fqdnOf, unicodeName } from '../../domain-name.js';

export const RECORD_TYPES = ['A', 'AAAA', 'CNAME', 'MX', 'TXT', 'SRV', 'CAA', 'NS', 'DS', 'TLSA'] as const;
export type RecordType = (typeof RECORD_TYPES)[number];

export const TTL_MIN = 300;
export const TTL_MAX = 86400;
/** Longest `data` accepted, in UTF-8 bytes (a long TXT such as a 4096-bit DKIM key fits). */
export const DATA_MAX_BYTES = 4096;

/** A failed check: the attribute at fault and why. */
export interface FieldProblem {
  field: 'record_type' | 'name' | 'domain' | 'data' | 'ttl';
  detail: string;
}

export class RecordInvalid extends Error {
  constructor(readonly problem: FieldProblem) {
    super(problem.detail);
  }
}

const fail = (field: FieldProblem['field'], detail: string): never => {
  throw new RecordInvalid({ field, detail });
};

export const isRecordType = (t: string): t is RecordType => (RECORD_TYPES as readonly string[]).includes(t);

/** `txt` → `TXT`; unknown types fail. */
export function parseRecordType(input: string): RecordType {
  const t = input.trim().toUpperCase();
  if (!isRecordType(t)) fail('record_type', `Unsupported record type; creatable types: ${RECORD_TYPES.join(', ')}.`);
  return t as RecordType;
}

// ---- names ----------------------------------------------------------------------------------

export interface OwnerName {
  /** Relative, lower-case ACE; '' is the apex. */
  ace: string;
  /** The same name with IDN labels in Unicode. */
  unicode: string;
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The owner name of a record relative to its domain: `""` or `@` is the apex; several labels,
 * `_` labels and a leading `*` label are allowed; IDN labels are converted to ACE.
 * `parseOwnerName('_acme-challenge.WWW')` → `{ ace: '_acme-challenge.www', unicode: … }`.
 */
export function parseOwnerName(input: string): OwnerName {
  if (input === '' || input === '@') return { ace: '', unicode: '' };
  if (CONTROL.test(input) || LONE_SURROGATE.test(input) || /\s/.test(input)) fail('name', 'name must not contain spaces or control characters.');
  if (input.endsWith('.')) fail('name', 'name is relative to the domain: leave out the trailing dot and the domain.');
  const labels = input.split('.');
  const out: string[] = [];
  for (const [i, label] of labels.entries()) {
    if (label === '') fail('name', 'name has an empty label.');
    if (label === '*') {
      if (i !== 0) fail('name', 'A wildcard * is allowed only as the first label of name.');
      out.push('*');
      continue;
    }
    if (label.includes('*')) fail('name', 'A wildcard is a whole label: * alone, as the first label.');
    const ace = aceLabel(label, true);
    if (ace === null) {
      fail('name', `"${label}" is not a valid label: letters, digits, hyphens and underscores, at most 63 characters, no hyphen at either end.`);
    }
    out.push(ace!);
  }
  const ace = out.join('.');
  return { ace, unicode: unicodeName(ace) };
}

/** Fails unless the fully qualified owner name fits in a DNS name (253 characters). */
export function checkFqdnLength(name: string, domainAce: string) {
  if (fqdnOf(name, domainAce).length > 253) fail('name', 'name and domain together exceed 253 characters.');
}

/**
 * A host name inside `data`: absolute (a trailing dot makes no difference, API guide "DNS
 * records"), returned in lower-case ACE without the trailing dot. `root` allows `.` (no host: null
 * MX, RFC 7505; SRV "service not available", RFC 2782). Null when invalid.
 */
function parseHost(input: string, o: { underscores: boolean; root?: boolean }): string | null {
  if (input === '.') return o.root ? '.' : null;
  const name = input.endsWith('.') ? input.slice(0, -1) : input;
  const labels = name.split('.');
  // A single label would be a top-level name: almost surely a relative name meant differently.
  if (labels.length < 2) return null;
  const out: string[] = [];
  for (const label of labels) {
    const ace = label === '' ? null : aceLabel(label, o.underscores);
    if (ace === null) return null;
    out.push(ace);
  }
  if (/^[0-9]+$/.test(out[out.length - 1])) return null; // an address, not a name
  const ace = out.join('.');
  return ace.length > 253 ? null : ace;
}

// ---- data ------------------------------------------------------------------------------------

const fields = (data: string) => data.trim().split(/\s+/).filter(Boolean);

function uint(raw: string | undefined, max: number, what: string, min = 0): number {
  if (raw === undefined || !/^[0-9]{1,10}$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    fail('data', `${what} must be a whole number from ${min} to ${max}.`);
  }
  return Number(raw);
}

function expectFields(f: string[], n: number, form: string) {
  if (f.length !== n) fail('data', `data must have the form "${form}".`);
}

function hex(raw: string, what: string, length?: number[]): string {
  if (!/^[0-9a-fA-F]+$/.test(raw) || raw.length % 2 !== 0) fail('data', `${what} must be hexadecimal (an even number of digits 0-9, A-F).`);
  if (length && !length.includes(raw.length)) fail('data', `${what} must have ${length.join(' or ')} hex digits.`);
  return raw.toUpperCase();
}

/** RFC 5952 text of an IPv6 address (lower case, longest zero run compressed). */
function canonicalIpv6(address: string): string {
  // The WHATWG URL parser implements exactly this serialisation.
  return new URL(`http://[${address}]/`).hostname.slice(1, -1);
}

const DS_DIGEST_HEX: Record<number, number> = { 1: 40, 2: 64, 4: 96 };
const TLSA_MATCH_HEX: Record<number, number | undefined> = { 0: undefined, 1: 64, 2: 128 };
const CAA_VALUE = /^[\x20-\x21\x23-\x5b\x5d-\x7e]*$/; // printable ASCII without " and \

function caaData(data: string): string {
  const m = /^\s*([0-9]{1,3})\s+([A-Za-z0-9]+)\s+(.*?)\s*$/.exec(data);
  if (!m) fail('data', 'data must have the form "flags tag \\"value\\"", e.g. 0 issue "letsencrypt.org".');
  const flags = uint(m![1], 255, 'CAA flags');
  const tag = m![2].toLowerCase();
  if (tag.length > 15) fail('data', 'CAA tag must be at most 15 letters and digits (RFC 8659).');
  let value = m![3];
  if (value.startsWith('"')) {
    if (value.length < 2 || !value.endsWith('"')) fail('data', 'CAA value: a quoted value needs its closing quote.');
    value = value.slice(1, -1);
  } else if (/\s/.test(value)) {
    fail('data', 'CAA value: put a value containing spaces in double quotes.');
  }
  if (!CAA_VALUE.test(value)) fail('data', 'CAA value must be printable ASCII without double quotes or backslashes.');
  if (tag === 'issue' || tag === 'issuewild' || tag === 'issuemail') {
    // RFC 8659 §4.2: [issuer-domain-name] *(";" parameter)
    const issuer = value.split(';')[0].trim();
    if (issuer !== '' && parseHost(issuer, { underscores: false }) === null) fail('data', `CAA ${tag}: "${issuer}" is not an issuer domain name.`);
  } else if (tag === 'iodef') {
    if (!/^(mailto:[^@\s]+@[^@\s]+|https?:\/\/\S+)$/i.test(value)) fail('data', 'CAA iodef value must be a mailto: or http(s): URL (RFC 8659 §4.4).');
  }
  return `${flags} ${tag} "${value}"`;
}

/**
 * Checks `data` of `type` and returns its normalised presentation form (so identical records are
 * detected however they were written): `normaliseData('MX', ' 10  Mail.Example.COM. ')` →
 * `'10 mail.example.com'`. Throws RecordInvalid (field `data`).
 */
export function normaliseData(type: RecordType, data: string): string {
  if (Buffer.byteLength(data, 'utf8') > DATA_MAX_BYTES) fail('data', `data must be at most ${DATA_MAX_BYTES} bytes.`);
  if (LONE_SURROGATE.test(data)) fail('data', 'data must be valid Unicode text.');
  if (type === 'TXT') {
    if (data.length === 0) fail('data', 'TXT data must not be empty.');
    if (CONTROL.test(data)) fail('data', 'TXT data must be printable text without control characters.');
    return data;
  }
  if (CONTROL.test(data.replace(/[\t\r\n]/g, ' '))) fail('data', 'data must not contain control characters.');
  const f = fields(data);
  if (f.length === 0) fail('data', 'data must not be empty.');
  switch (type) {
    case 'A':
      expectFields(f, 1, 'IPv4 address');
      if (!net.isIPv4(f[0])) fail('data', 'A data must be an IPv4 address in dotted-decimal form, e.g. 192.0.2.10.');
      return f[0];
    case 'AAAA':
      expectFields(f, 1, 'IPv6 address');
      if (!net.isIPv6(f[0]) || f[0].includes('%')) fail('data', 'AAAA data must be an IPv6 address, e.g. 2001:db8::10.');
      return canonicalIpv6(f[0]);
    case 'CNAME': {
      expectFields(f, 1, 'host name');
      const host = parseHost(f[0], { underscores: true });
      if (host === null) fail('data', 'CNAME data must be a fully qualified domain name (it is always absolute).');
      return host!;
    }
    case 'NS': {
      expectFields(f, 1, 'host name');
      const host = parseHost(f[0], { underscores: false });
      if (host === null) fail('data', 'NS data must be the fully qualified host name of a name server.');
      return host!;
    }
    case 'MX': {
      expectFields(f, 2, 'preference host');
      const pref = uint(f[0], 65535, 'MX preference');
      const host = parseHost(f[1], { underscores: false, root: pref === 0 });
      if (host === null) fail('data', 'MX host must be a fully qualified host name (or "." with preference 0: null MX, RFC 7505).');
      return `${pref} ${host}`;
    }
    case 'SRV': {
      expectFields(f, 4, 'priority weight port target');
      const prio = uint(f[0], 65535, 'SRV priority');
      const weight = uint(f[1], 65535, 'SRV weight');
      const port = uint(f[2], 65535, 'SRV port');
      const target = parseHost(f[3], { underscores: false, root: true });
      if (target === null) fail('data', 'SRV target must be a fully qualified host name, or "." for no service (RFC 2782).');
      return `${prio} ${weight} ${port} ${target}`;
    }
    case 'CAA':
      return caaData(data);
    case 'DS': {
      if (f.length < 4) fail('data', 'data must have the form "key-tag algorithm digest-type digest".');
      const keyTag = uint(f[0], 65535, 'DS key tag');
      const alg = uint(f[1], 255, 'DS algorithm', 1);
      const digestType = uint(f[2], 255, 'DS digest type');
      const length = DS_DIGEST_HEX[digestType];
      if (length === undefined) fail('data', 'DS digest type must be 1 (SHA-1), 2 (SHA-256) or 4 (SHA-384).');
      // Presentation form may split the digest with spaces (RFC 4034 §5.3).
      const digest = hex(f.slice(3).join(''), 'DS digest', [length]);
      return `${keyTag} ${alg} ${digestType} ${digest}`;
    }
    case 'TLSA': {
      if (f.length < 4) fail('data', 'data must have the form "usage selector matching-type data".');
      const usage = uint(f[0], 3, 'TLSA certificate usage');
      const selector = uint(f[1], 1, 'TLSA selector');
      const mtype = uint(f[2], 2, 'TLSA matching type');
      const length = TLSA_MATCH_HEX[mtype];
      const assoc = hex(f.slice(3).join(''), 'TLSA certificate association data', length === undefined ? undefined : [length]);
      return `${usage} ${selector} ${mtype} ${assoc}`;
    }
  }
  return fail('data', 'Unsupported record type.');
}

/**
 * Rules between the owner name and the type: CNAME, NS and DS never at the apex (the apex has
 * SOA and NS, RFC 1912 §2.4; a DS belongs in the parent zone); NS and DS not at a wildcard
 * (RFC 4592 §4); SRV needs `_service._proto` (RFC 2782), TLSA `_port._proto` (RFC 6698 §3).
 */
export function checkNameForType(type: RecordType, name: string) {
  const labels = name === '' ? [] : name.split('.');
  if (name === '' && (type === 'CNAME' || type === 'NS' || type === 'DS')) {
    fail('name', `${type} records are not allowed at the apex of the domain.`);
  }
  if (labels[0] === '*' && (type === 'NS' || type === 'DS')) fail('name', `${type} records are not allowed at a wildcard name.`);
  if (type === 'SRV' && !(labels.length >= 2 && labels[0].startsWith('_') && labels[1].startsWith('_'))) {
    fail('name', 'SRV name must start with _service._protocol, e.g. _sip._tcp (RFC 2782).');
  }
  if (type === 'TLSA') {
    const port = /^_([0-9]{1,5})$/.exec(labels[0] ?? '');
    if (!port || Number(port[1]) > 65535 || !/^_(tcp|udp|sctp)$/.test(labels[1] ?? '')) {
      fail('name', 'TLSA name must start with _port._protocol, e.g. _443._tcp (RFC 6698).');
    }
  }
}

/** Fails unless `ttl` is in 300..86400 (API guide "DNS records"). */
export function checkTtl(ttl: number) {
  if (!Number.isInteger(ttl) || ttl < TTL_MIN || ttl > TTL_MAX) fail('ttl', `ttl must be from ${TTL_MIN} to ${TTL_MAX} seconds.`);
}

// ---- one record, and records of one name ------------------------------------------------------

export interface RecordInput {
  record_type: string;
  name?: string;
  data: string;
  ttl?: number | null;
}

export interface NormalisedRecord {
  record_type: RecordType;
  name: OwnerName;
  data: string;
  ttl: number;
}

/**
 * Every check that needs no other record, all fields at once: returns the record in stored form,
 * or the problems found (one per field). `name` left out is the apex (clients that omit empty
 * fields, such as lego's, send no name for the apex).
 */
export function normaliseRecord(input: RecordInput, defaultTtl: number): { record: NormalisedRecord } | { problems: FieldProblem[] } {
  const problems: FieldProblem[] = [];
  const attempt = <T>(fn: () => T): T | undefined => {
    try {
      return fn();
    } catch (e) {
      if (!(e instanceof RecordInvalid)) throw e;
      problems.push(e.problem);
      return undefined;
    }
  };
  const type = attempt(() => parseRecordType(input.record_type));
  const name = attempt(() => parseOwnerName(input.name ?? ''));
  const ttl = input.ttl ?? defaultTtl;
  attempt(() => checkTtl(ttl));
  const data = type === undefined ? undefined : attempt(() => normaliseData(type, input.data));
  if (type !== undefined && name !== undefined) attempt(() => checkNameForType(type, name.ace));
  if (problems.length || type === undefined || name === undefined || data === undefined) return { problems };
  return { record: { record_type: type, name, data, ttl } };
}

/** A record already stored at the same owner name (any state: pending, active, deleting). */
export interface ExistingRecord {
  record_type: string;
  data: string;
  state?: string;
  tag?: string;
}

export type Conflict = { field: 'name' | 'data'; detail: string };

const going = (r: ExistingRecord) => (r.state === 'deleting' ? ' It is being deleted; try again when its job is done.' : '');
/** The record to name in a detail: one that stays, if any (so "being deleted" is said only when all are). */
const blocker = <T extends ExistingRecord>(rs: T[]): T => rs.find((r) => r.state !== 'deleting') ?? rs[0];

/** Why a record may not join `existing` (the records of its owner name), or null. */
export function conflictAt(existing: ExistingRecord[], cand: { record_type: string; data: string }): Conflict | null {
  const same = existing.find((r) => r.record_type === cand.record_type && r.data === cand.data);
  if (same) return { field: 'data', detail: `An identical ${cand.record_type} record exists at this name.${going(same)}` };
  // The DKIM key's name belongs to the service: a second TXT there would break DKIM (RFC 6376 §3.6.2.2).
  if (existing.some((r) => r.tag === 'managed')) return { field: 'name', detail: 'This name holds a record managed by the service (the DKIM key); no other record may be added at it.' };
  // RFC 1034 §3.6.2, RFC 2181 §10.1: a CNAME is the only record at its name.
  const cname = existing.find((r) => r.record_type === 'CNAME');
  if (cname) return { field: 'name', detail: `This name has a CNAME record; no other record may exist at it.${going(cname)}` };
  if (cand.record_type === 'CNAME' && existing.length) {
    return { field: 'name', detail: `Other records exist at this name; a CNAME must be the only record at its name.${going(existing[0])}` };
  }
  return null;
}

// ---- records of one zone: delegations and the size of an answer -------------------------------

/** A stored record with its owner name (relative, lower-case ACE, '' = apex). */
export interface ZoneRecord extends ExistingRecord {
  name: string;
}

/**
 * Budget of the records at one owner name: each counts the bytes of its `data` plus
 * RECORD_OVERHEAD_BYTES. A reply must fit in one DNS message (65535 bytes over TCP, RFC 1035
 * §4.2.2), and an answer to ANY holds every record of the name. On the wire a record is at most
 * its data + 17 bytes (TXT string lengths; AAAA `::`) + 10 (type, class, TTL, length) + 255 (the
 * owner name: our server does not compress), so this budget keeps a name's records under ~37 KB,
 * leaving room for CNAME chains to it; data alone would not do, as thousands of tiny records fit.
 */
export const NAME_DATA_MAX_BYTES = 16384;
export const RECORD_OVERHEAD_BYTES = 128;

/** True when `name` is strictly below `ancestor` (a wildcard `*.x` is below `x`); the apex is never a cut. */
const isBelow = (name: string, ancestor: string) => ancestor !== '' && name.endsWith(`.${ancestor}`);
const atCutTypes = (type: string) => type === 'NS' || type === 'DS';

/**
 * Delegations (RFC 1034 §4.2.1): an NS record below the apex makes our DNS server answer a
 * referral for its name and everything below it (src/dns/lookup.ts), so records there
 * would be listed and "done" but never answered, and an NS above the DKIM key would hide the
 * undeletable managed record (API guide "DNS records"). Only NS and DS may be at a cut, nothing
 * below it.
 */
function delegationConflict(zone: ZoneRecord[], cand: { name: string; record_type: string }): Conflict | null {
  const ns = zone.filter((r) => r.record_type === 'NS' && r.name !== '');
  const above = ns.filter((r) => isBelow(cand.name, r.name));
  if (above.length) {
    const cut = blocker(above);
    return { field: 'name', detail: `This name is below "${cut.name}", which an NS record delegates to other name servers; no record may be added below a delegation.${going(cut)}` };
  }
  const at = ns.filter((r) => r.name === cand.name);
  if (at.length && !atCutTypes(cand.record_type)) {
    return { field: 'name', detail: `An NS record delegates this name to other name servers; only NS and DS records may be added at it.${going(blocker(at))}` };
  }
  if (cand.record_type !== 'NS') return null;
  const here = zone.filter((r) => r.name === cand.name && !atCutTypes(r.record_type));
  if (here.length) {
    return { field: 'name', detail: `Records other than NS and DS exist at this name; an NS record would delegate it to other name servers and hide them.${going(blocker(here))}` };
  }
  const below = zone.filter((r) => isBelow(r.name, cand.name));
  if (below.some((r) => r.tag === 'managed')) {
    return { field: 'name', detail: 'A record managed by the service (the DKIM key) is below this name; an NS record would delegate it to other name servers and hide it.' };
  }
  if (below.length) {
    const r = blocker(below);
    return { field: 'name', detail: `Records exist below this name (at "${r.name}"); an NS record would delegate them to other name servers and hide them.${going(r)}` };
  }
  return null;
}

/** Fails when the records at the candidate's name would outgrow NAME_DATA_MAX_BYTES. */
function sizeConflict(here: ExistingRecord[], cand: { data: string }): Conflict | null {
  const size = (r: { data: string }) => Buffer.byteLength(r.data, 'utf8') + RECORD_OVERHEAD_BYTES;
  const total = here.reduce((n, r) => n + size(r), size(cand));
  if (total <= NAME_DATA_MAX_BYTES) return null;
  const deleting = here.some((r) => r.state === 'deleting') ? ' Records being deleted count until their jobs are done.' : '';
  return {
    field: 'data',
    detail: `The records at this name would exceed ${NAME_DATA_MAX_BYTES} bytes together (each counts its data plus ${RECORD_OVERHEAD_BYTES} bytes), more than one DNS answer surely holds.${deleting}`,
  };
}

/**
 * Why a record may not join its zone, or null: the rules of its own name (conflictAt), then
 * delegations, then the size of the name's answer. `zone` holds at least the records at the
 * candidate's name, at its ancestors and, for an NS candidate, below it
 * (DnsRecordsRepository.recordsAround), in any state.
 */
export function conflictInZone(zone: ZoneRecord[], cand: { name: string; record_type: string; data: string }): Conflict | null {
  const here = zone.filter((r) => r.name === cand.name);
  return conflictAt(here, cand) ?? delegationConflict(zone, cand) ?? sizeConflict(here, cand);
}
