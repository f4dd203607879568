// One DNS message in, one out (RFC 1035 §4, RFC 6891, RFC 2181 §9): pure and total, any bytes give
// a reply or null (drop). The question is copied byte for byte, so the client sees its name as
// asked. Common questions are answered straight from the zones' wire form; the rest take the general
// path through dns-packet, with the same answers (decision 0014; fuzz.test.ts).
import dnsPacket, { type Answer, type DecodedPacket } from 'dns-packet';
import { RCODE, findCut, resolve, type Resolution } from './lookup.js';
import { nsecProof, signedDenial } from './denials.js';
import { pickSet, setCount } from './rrsets.js';
import { ttlOf } from './signed-form.js';
import { T, type ZoneSet } from './zone.js';

/** UDP replies never exceed this, whatever the client advertises (DNS Flag Day 2020: no fragments). */
export const MAX_UDP_PAYLOAD = 1232;
/** RFC 1035 §4.2.1: without EDNS0 a UDP message is at most 512 bytes. */
export const CLASSIC_UDP_PAYLOAD = 512;

const QR = 0x8000;
const AA = 0x0400;
const TC = 0x0200;
const RD = 0x0100;
const CD = 0x0010;
const BADVERS = 16;

interface ParsedQuestion {
  /** Lower-case (ASCII letters only), dot-joined, no trailing dot; '' for the root. */
  key: string;
  /** False when the name has bytes dns-packet cannot write back (askedName gives null then). */
  writable: boolean;
  qtype: number;
  qclass: number;
  /** The raw question section (name, type, class). */
  raw: Buffer;
}

/** Lower-cases the ASCII letters of a name's bytes and turns its length bytes into dots. */
const scratch = Buffer.alloc(256);

/**
 * The first question of `msg` read directly from the bytes (no compression: a pointer in the
 * first name can only point into the header, which is malformed). Null when malformed.
 */
export function parseQuestion(msg: Buffer, offset = 12): ParsedQuestion | null {
  let p = offset;
  let writable = true;
  let dotInLabel = false;
  let n = 0;
  let total = 0;
  for (;;) {
    if (p >= msg.length) return null;
    const len = msg[p++];
    if (len === 0) break;
    if (len > 63 || p + len > msg.length) return null;
    total += len + 1;
    if (total > 254) return null;
    if (n > 0) scratch[n++] = 0x2e;
    for (let i = p; i < p + len; i++) {
      let c = msg[i];
      // Printable ASCII without '.', '\\' and space is what dns-packet writes back unchanged.
      if (c <= 0x20 || c >= 0x7f || c === 0x2e || c === 0x5c) {
        writable = false;
        if (c === 0x2e) dotInLabel = true;
      }
      if (c >= 0x41 && c <= 0x5a) c += 0x20;
      scratch[n++] = c;
    }
    p += len;
  }
  if (p + 4 > msg.length) return null;
  const raw = msg.subarray(offset, p + 4);
  let key = scratch.toString('latin1', 0, n);
  // A label containing a dot could pass for two labels: such a name gets a key no zone has.
  if (dotInLabel) key = `\0${labelsOf(raw).map((l) => l.toLowerCase()).join('\0')}`;
  return { key, writable, qtype: msg.readUInt16BE(p), qclass: msg.readUInt16BE(p + 2), raw };
}

function labelsOf(raw: Buffer): string[] {
  const labels: string[] = [];
  for (let p = 0, len = raw[p++]; len !== 0; len = raw[p++]) {
    labels.push(raw.toString('latin1', p, p + len));
    p += len;
  }
  return labels;
}

/** The name as asked (case kept), or null when it cannot be written back. */
const askedName = (q: ParsedQuestion): string | null => (q.writable ? labelsOf(q.raw).join('.') : null);

export interface QueryContext {
  transport: 'udp' | 'tcp';
  /** Bytes a UDP reply must leave free (a TSIG record added after; transfers.ts). */
  reserve?: number;
  /** Always the general path (tests compare the two). */
  general?: boolean;
}

/**
 * The reply to `msg` from `zones`, or null when nothing should be sent (too short to carry an
 * id, or itself a response). `answerQuery(zones, udpPayload, { transport: 'udp' })`.
 */
export function answerQuery(zones: ZoneSet, msg: Buffer, ctx: QueryContext): Buffer | null {
  if (msg.length < 12) return null;
  const fast = ctx.general ? null : quickAnswer(zones, msg, ctx);
  if (fast) return fast;
  const id = msg.readUInt16BE(0);
  const flags = msg.readUInt16BE(2);
  if (flags & QR) return null; // never answer a response (reflection loops)
  const opcode = (flags >> 11) & 0xf;
  const echoed = flags & (RD | CD);
  const qdcount = msg.readUInt16BE(4);
  const question = qdcount >= 1 ? parseQuestion(msg) : null;

  let decoded: DecodedPacket;
  try {
    decoded = dnsPacket.decode(msg);
  } catch {
    return reply({ id, opcode, flags: echoed, rcode: RCODE.FORMERR, question: null, opt: null, ctx });
  }
  const opts = decoded.additionals.filter((a) => a.type === 'OPT');
  const opt = opts[0] ?? null;
  if (opcode !== 0) return reply({ id, opcode, flags: echoed, rcode: RCODE.NOTIMP, question, opt, ctx });
  if (qdcount !== 1 || !question || opts.length > 1 || (opt && opt.name !== '.')) {
    return reply({ id, opcode, flags: echoed, rcode: RCODE.FORMERR, question, opt: opts.length === 1 ? opt : null, ctx });
  }
  if (opt && (opt.ednsVersion ?? 0) > 0) {
    // RFC 6891 §6.1.3: we speak version 0 only.
    return reply({ id, opcode, flags: echoed, rcode: BADVERS, question, opt, ctx });
  }
  // Meta types that cannot be asked (OPT) are malformed; zone transfers are not offered.
  if (question.qtype === 41) return reply({ id, opcode, flags: echoed, rcode: RCODE.FORMERR, question, opt, ctx });
  if (question.qtype === 251 || question.qtype === 252 || (question.qclass !== 1 && question.qclass !== 255)) {
    return reply({ id, opcode, flags: echoed, rcode: RCODE.REFUSED, question, opt, ctx });
  }
  const dnssecOk = opt !== null && ((opt.flags ?? 0) & dnsPacket.DNSSEC_OK) !== 0;
  const res = resolve(zones, question.key, askedName(question), question.qtype, dnssecOk);
  return reply({ id, opcode, flags: echoed | (res.aa ? AA : 0), rcode: res.rcode, question, opt, ctx, res });
}

interface ReplyParts {
  id: number;
  opcode: number;
  flags: number;
  /** RCODE including the EDNS0 extension bits (BADVERS = 16). */
  rcode: number;
  question: ParsedQuestion | null;
  opt: Answer | null;
  ctx: QueryContext;
  res?: Resolution;
}

function reply(p: ReplyParts): Buffer | null {
  const optOut: Answer[] = p.opt
    ? // RFC 3225 §3: the DO bit is copied into the reply.
      [{ type: 'OPT', name: '.', udpPayloadSize: MAX_UDP_PAYLOAD, extendedRcode: p.rcode >> 4, ednsVersion: 0, flags: (p.opt.flags ?? 0) & dnsPacket.DNSSEC_OK, options: [] }]
    : [];
  const header = (extra: number) => ({
    type: 'response' as const,
    id: p.id,
    flags: (p.opcode << 11) | p.flags | extra | (p.rcode & 0xf),
  });
  const qlen = p.question?.raw.length ?? 0;
  const limit = sizeLimit(p.ctx, p.opt ? (p.opt.udpPayloadSize ?? 0) : -1);
  try {
    let body = dnsPacket.encode({
      ...header(0),
      questions: [],
      answers: p.res?.answers ?? [],
      authorities: p.res?.authorities ?? [],
      additionals: [...(p.res?.additionals ?? []), ...optOut],
    });
    if (body.length + qlen > limit) {
      // RFC 2181 §9: a truncated reply is marked TC; we send none of the records, so the client
      // neither caches a partial RRset nor misses that it must ask again over TCP.
      body = dnsPacket.encode({ ...header(TC), questions: [], answers: [], authorities: [], additionals: optOut });
    }
    return withQuestion(body, p.question);
  } catch {
    // A record that dns-packet cannot encode: say so rather than crash or send garbage.
    const body = dnsPacket.encode({ ...header(0), flags: (p.opcode << 11) | (p.flags & ~AA) | RCODE.SERVFAIL, questions: [], additionals: optOut });
    return withQuestion(body, p.question);
  }
}

/** Inserts the question as asked after the header (dns-packet does not compress, so nothing moves). */
function withQuestion(body: Buffer, q: ParsedQuestion | null): Buffer {
  if (!q) return body;
  const out = Buffer.allocUnsafe(body.length + q.raw.length);
  body.copy(out, 0, 0, 12);
  q.raw.copy(out, 12);
  body.copy(out, 12 + q.raw.length, 12);
  out.writeUInt16BE(1, 4);
  return out;
}

/** The largest reply allowed: `advertised` is the client's EDNS0 payload size, -1 without EDNS0. */
function sizeLimit(ctx: QueryContext, advertised: number): number {
  if (ctx.transport !== 'udp') return 65535;
  const size = advertised < 0 ? CLASSIC_UDP_PAYLOAD : Math.max(advertised, CLASSIC_UDP_PAYLOAD);
  return Math.min(size, MAX_UDP_PAYLOAD) - (ctx.reserve ?? 0);
}

/** Our OPT record (RFC 6891 §6.1.2): root owner, type 41, payload size, no extended rcode, version 0, no flags, no options. */
const OPT_WIRE = Buffer.from([0, 0, 41, MAX_UDP_PAYLOAD >> 8, MAX_UDP_PAYLOAD & 0xff, 0, 0, 0, 0, 0, 0]);
/** The same with the DO bit, copied from a query that set it (RFC 3225 §3). */
const OPT_WIRE_DO = Buffer.from([0, 0, 41, MAX_UDP_PAYLOAD >> 8, MAX_UDP_PAYLOAD & 0xff, 0, 0, 0x80, 0, 0, 0]);
/** EDNS0 options the general path decodes (dns-packet reads their contents and may refuse them): ECS, KEEPALIVE, KEY-TAG. */
const DECODED_OPTIONS = new Set([8, 11, 14]);

/**
 * The reply from the zones' wire form for the common questions, or null to take the general path.
 * The query must be a plain one: opcode QUERY, one question, no answer or authority records, at
 * most an OPT of version 0 with options that are well-formed, nothing after it. Exported for the
 * tests that check which questions it answers.
 */
export function quickAnswer(zones: ZoneSet, msg: Buffer, ctx: QueryContext): Buffer | null {
  const flags = msg.readUInt16BE(2);
  if (flags & 0xf800 || msg.readUInt16BE(4) !== 1 || msg.readUInt32BE(6) !== 0) return null;
  const arcount = msg.readUInt16BE(10);
  if (arcount > 1) return null;
  const q = parseQuestion(msg);
  if (!q || !q.writable || q.qclass !== 1) return null;
  const qtype = q.qtype;
  if (qtype === 41 || qtype === 251 || qtype === 252 || qtype === T.ANY || qtype === T.DS) return null;
  const end = 12 + q.raw.length;
  let advertised = -1;
  let dnssecOk = false;
  if (arcount === 1) {
    // OPT: root owner, TYPE 41, CLASS = payload size, TTL = extended rcode, version, flags.
    if (end + 11 > msg.length || msg[end] !== 0 || msg.readUInt16BE(end + 1) !== 41 || msg[end + 6] !== 0) return null;
    const stop = end + 11 + msg.readUInt16BE(end + 9);
    if (stop !== msg.length) return null;
    let p = end + 11;
    while (p < stop) {
      if (p + 4 > stop || DECODED_OPTIONS.has(msg.readUInt16BE(p))) return null;
      p += 4 + msg.readUInt16BE(p + 2);
    }
    if (p !== stop) return null;
    advertised = msg.readUInt16BE(end + 3);
    dnssecOk = (msg[end + 7] & 0x80) !== 0;
  } else if (end !== msg.length) return null;

  let rcode: number = RCODE.NOERROR;
  let aa = AA;
  let answer: string | undefined;
  let authority: string | undefined;
  let nsCount = 1;
  const zone = zones.find(q.key);
  // A signed zone asked with DO: answers get their RRSIGs, denials and wildcards their NSEC proofs
  // (denials.ts), copied from the wire form as the general path would give them.
  const signed = dnssecOk && zone?.signer != null;
  // RRSIG and NSEC are kept in the signer's form (signed-form.ts): asked for, the general path writes them out.
  if (zone?.signer != null && (qtype === T.RRSIG || qtype === T.NSEC)) return null;
  let sigs = '';
  let sigCount = 0;
  if (!zone) {
    rcode = RCODE.REFUSED;
    aa = 0;
  } else {
    if (zone.cuts.size && findCut(zone, q.key)) return null; // a referral
    let sets = zone.nodes.get(q.key);
    /** With DO: the owners whose NSEC records prove the denial, and one listed before the SOA. */
    let proofs: string[] | undefined;
    let wildcardProof: string | undefined;
    if (sets === undefined && !zone.exists(q.key)) {
      // RFC 4592 §3.3.1: the source of synthesis is "*." + the closest encloser; its records are
      // written with the owner as asked, which the pointer to the question is.
      let encloser = q.key.slice(q.key.indexOf('.') + 1);
      while (!zone.exists(encloser)) encloser = encloser.slice(encloser.indexOf('.') + 1);
      const source = `*.${encloser}`;
      sets = zone.nodes.get(source);
      if (sets === undefined) {
        rcode = RCODE.NXDOMAIN;
        // RFC 4035 §3.1.3.2: no such name, and no wildcard that could have made it.
        if (signed) proofs = [zone.signer!.covering(q.key), zone.signer!.covering(source)];
      } else if (signed) {
        // RFC 4035 §3.1.3.3 (answer) and §3.1.3.4 (NODATA): the name itself does not exist.
        wildcardProof = zone.signer!.covering(q.key);
        proofs = [source];
      }
    } else if (signed) proofs = [sets === undefined ? zone.signer!.covering(q.key) : q.key];
    if (sets !== undefined) {
      answer = pickSet(sets, qtype);
      if (answer === undefined && pickSet(sets, T.CNAME) !== undefined) return null; // a chain
    }
    if (answer === undefined) {
      if (signed) {
        const denial = signedDenial(zone, proofs!, wildcardProof);
        if (denial === null) return null;
        ({ wire: authority, count: nsCount } = denial);
      } else authority = zone.negativeSoaWire;
    } else if (signed) {
      ({ wire: sigs, count: sigCount } = zone.signer!.sigsOver(sets!, qtype, ttlOf(answer)));
      if (wildcardProof !== undefined) {
        const proof = nsecProof(zone, wildcardProof);
        if (proof === null) return null;
        ({ wire: authority, count: nsCount } = proof);
      }
    }
  }

  const optLength = advertised >= 0 ? OPT_WIRE.length : 0;
  const size = end + (answer?.length ?? 0) + sigs.length + (authority?.length ?? 0) + optLength;
  if (size > sizeLimit(ctx, advertised)) return null; // truncation: the general path
  const out = Buffer.allocUnsafe(size);
  out.writeUInt16BE(msg.readUInt16BE(0), 0);
  out.writeUInt16BE(QR | aa | (flags & (RD | CD)) | rcode, 2);
  out.writeUInt16BE(1, 4);
  out.writeUInt16BE(answer === undefined ? 0 : setCount(answer) + sigCount, 6);
  out.writeUInt16BE(authority === undefined ? 0 : nsCount, 8);
  out.writeUInt16BE(optLength ? 1 : 0, 10);
  q.raw.copy(out, 12);
  let p = end;
  if (answer !== undefined) p += out.write(answer, p, 'latin1');
  if (sigCount) p += out.write(sigs, p, 'latin1');
  if (authority !== undefined) p += out.write(authority, p, 'latin1');
  if (optLength) (dnssecOk ? OPT_WIRE_DO : OPT_WIRE).copy(out, p);
  return out;
}
