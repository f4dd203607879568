// One DNS message in, one out (RFC 1035 §4, RFC 6891 EDNS0, RFC 2181 §9 truncation): the
// transport-independent half of the DNS server (issue 3 item 3). Pure and total: any bytes give a
// reply or null (drop), never an exception.
//
// The question section is copied from the query byte for byte, so the client sees its name exactly
// as asked (case included) even where dns-packet would re-encode it differently.
import dnsPacket, { type Answer, type DecodedPacket } from 'dns-packet';
import { RCODE, resolve, type Resolution, type ZoneSet } from './zone.js';
import { typeName } from './rdata.js';

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
  /** The name as asked, or null when it has bytes dns-packet cannot write back. */
  asked: string | null;
  qtype: number;
  qclass: number;
  /** The raw question section (name, type, class). */
  raw: Buffer;
}

/**
 * The first question of `msg` read directly from the bytes (no compression: a pointer in the
 * first name can only point into the header, which is malformed). Null when malformed.
 */
export function parseQuestion(msg: Buffer, offset = 12): ParsedQuestion | null {
  let p = offset;
  const lower: string[] = [];
  let writable = true;
  let dotInLabel = false;
  let total = 0;
  for (;;) {
    if (p >= msg.length) return null;
    const len = msg[p++];
    if (len === 0) break;
    if (len > 63 || p + len > msg.length) return null;
    total += len + 1;
    if (total > 254) return null;
    let label = '';
    for (let i = p; i < p + len; i++) {
      let c = msg[i];
      // Printable ASCII without '.', '\\' and space is what dns-packet writes back unchanged.
      if (c <= 0x20 || c >= 0x7f || c === 0x2e || c === 0x5c) writable = false;
      if (c === 0x2e) dotInLabel = true;
      if (c >= 0x41 && c <= 0x5a) c += 0x20;
      label += String.fromCharCode(c);
    }
    lower.push(label);
    p += len;
  }
  if (p + 4 > msg.length) return null;
  const raw = msg.subarray(offset, p + 4);
  return {
    // A label containing a dot could pass for two labels: such a name gets a key no zone has.
    key: dotInLabel ? `\0${lower.join('\0')}` : lower.join('.'),
    asked: writable ? readAsked(msg, offset) : null,
    qtype: msg.readUInt16BE(p),
    qclass: msg.readUInt16BE(p + 2),
    raw,
  };
}

function readAsked(msg: Buffer, offset: number): string {
  const labels: string[] = [];
  let p = offset;
  for (let len = msg[p++]; len !== 0; len = msg[p++]) {
    labels.push(msg.toString('latin1', p, p + len));
    p += len;
  }
  return labels.join('.');
}

export interface QueryContext {
  transport: 'udp' | 'tcp';
  /** Bytes a UDP reply must leave free (a TSIG record added after; server.ts). */
  reserve?: number;
}

/**
 * The reply to `msg` from `zones`, or null when nothing should be sent (too short to carry an
 * id, or itself a response). `answerQuery(zones, udpPayload, { transport: 'udp' })`.
 */
export function answerQuery(zones: ZoneSet, msg: Buffer, ctx: QueryContext): Buffer | null {
  if (msg.length < 12) return null;
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
  const qtype = question.qtype === 255 ? 'ANY' : typeName(question.qtype);
  const res = resolve(zones, question.key, question.asked, qtype);
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
    ? [{ type: 'OPT', name: '.', udpPayloadSize: MAX_UDP_PAYLOAD, extendedRcode: p.rcode >> 4, ednsVersion: 0, flags: 0, options: [] }]
    : [];
  const header = (extra: number) => ({
    type: 'response' as const,
    id: p.id,
    flags: (p.opcode << 11) | p.flags | extra | (p.rcode & 0xf),
  });
  const qlen = p.question?.raw.length ?? 0;
  let limit = 65535;
  if (p.ctx.transport === 'udp') {
    const advertised = p.opt ? Math.max(p.opt.udpPayloadSize ?? 0, CLASSIC_UDP_PAYLOAD) : CLASSIC_UDP_PAYLOAD;
    limit = Math.min(advertised, MAX_UDP_PAYLOAD) - (p.ctx.reserve ?? 0);
  }
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
