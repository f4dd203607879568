// The lab's resolver, "the internet's DNS" (decision 0018 "The lab"), on the bridge address port
// 53 (UDP and TCP); the hosts and Pebble resolve through it. Names under lab.test it answers
// itself, authoritatively, from plan.ts; every other name is a customer's, relayed to hostplane's
// DNS server on the api host, SERVFAIL when it does not answer within 2 s. A name in none of
// hostplane's zones does not exist in the lab's world: REFUSED becomes NXDOMAIN (rspamd's DNS
// lists answer "not listed" at once). As a recursive resolver does, it follows a customer's CNAME
// into lab.test (autoconfig.<domain> → the API host) and adds the target's address. A
// self-contained `node -e` script, as the repository server is: it needs nothing from src/, which
// an installed package does not have.
import fs from 'node:fs';
import { serviceLog, startInBridge, waitService } from './bridge.js';
import { BRIDGE_ADDRESS, LAB_ZONE, labNames, type Names } from './plan.js';
import type { ProcRef } from './proc.js';
import { labHosts, type LabState } from './state.js';

export const RESOLVER_PORT = 53;

// argv: one JSON object { listen, port, zone, names: {fqdn: IPv4}, upstream, upstreamPort, timeoutMs }.
// RFC 1035 messages with one question; answers point back at the question's name (offset 12).
export const RESOLVER_SCRIPT = `
const cfg = JSON.parse(process.argv[1]);
const dgram = require('node:dgram'), net = require('node:net');
const names = new Map(Object.entries(cfg.names).map(([k, v]) => [k.toLowerCase(), v]));
const A = 1, SOA = 6, ANY = 255;
const u16 = (n) => { const b = Buffer.alloc(2); b.writeUInt16BE(n); return b; };
const encode = (name) => Buffer.concat([...name.split('.').map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)])), Buffer.from([0])]);
function rr(owner, type, ttl, data) {
  const h = Buffer.alloc(10);
  h.writeUInt16BE(type, 0); h.writeUInt16BE(1, 2); h.writeUInt32BE(ttl, 4); h.writeUInt16BE(data.length, 8);
  return Buffer.concat([owner, h, data]);
}
const times = Buffer.alloc(20);
[1, 3600, 600, 86400, 60].forEach((n, i) => times.writeUInt32BE(n, i * 4));
const soa = rr(encode(cfg.zone), SOA, 60, Buffer.concat([encode('ns1.' + cfg.zone), encode('hostmaster.' + cfg.zone), times]));

// The question (name lower-cased, without the final dot), or null when the message is not one
// query with one uncompressed question.
function question(q) {
  if (q.length < 12 || q.readUInt16BE(4) !== 1) return null;
  const labels = [];
  let i = 12;
  while (q[i] !== 0) {
    const len = q[i];
    if (len === undefined || len > 63 || i + 1 + len >= q.length) return null;
    labels.push(q.toString('latin1', i + 1, i + 1 + len).toLowerCase());
    i += 1 + len;
  }
  if (i + 5 > q.length) return null;
  return { name: labels.join('.'), type: q.readUInt16BE(i + 1), cls: q.readUInt16BE(i + 3), end: i + 5 };
}

// A response to q: its id and RD, QR and RA set, AA when ours; the question as asked.
function reply(q, qEnd, rcode, aa, answers = [], authority = []) {
  const h = Buffer.alloc(12);
  q.copy(h, 0, 0, 4);
  h.writeUInt16BE(0x8000 | (q.readUInt16BE(2) & 0x7900) | (aa ? 0x0400 : 0) | 0x0080 | rcode, 2);
  h.writeUInt16BE(qEnd > 12 ? 1 : 0, 4);
  h.writeUInt16BE(answers.length, 6);
  h.writeUInt16BE(authority.length, 8);
  h.writeUInt16BE(0, 10);
  return Buffer.concat([h, q.subarray(12, qEnd), ...answers, ...authority]);
}

function ours(q, qq) {
  const { name, type } = qq;
  if (qq.cls !== 1 && qq.cls !== ANY) return reply(q, qq.end, 5, false);
  const addr = names.get(name);
  const exists = addr || name === cfg.zone || [...names.keys()].some((k) => k.endsWith('.' + name));
  if (!exists) return reply(q, qq.end, 3, true, [], [soa]);
  const here = Buffer.from([0xc0, 12]);
  if (addr && (type === A || type === ANY)) return reply(q, qq.end, 0, true, [rr(here, A, 60, Buffer.from(addr.split('.').map(Number)))]);
  if (name === cfg.zone && (type === SOA || type === ANY)) return reply(q, qq.end, 0, true, [soa]);
  return reply(q, qq.end, 0, true, [], [soa]);
}

// Relays q to the upstream server over the client's transport; SERVFAIL when it does not answer.
function forward(q, qq, tcp, done) {
  let over = false, sock, buf = Buffer.alloc(0);
  const finish = (answer) => {
    if (over) return;
    over = true;
    clearTimeout(timer);
    if (tcp) sock.destroy(); else sock.close();
    done(answer || reply(q, qq.end, 2, false));
  };
  const timer = setTimeout(finish, cfg.timeoutMs, null);
  const sameId = (m) => m.length >= 12 && m.readUInt16BE(0) === q.readUInt16BE(0);
  if (tcp) {
    sock = net.connect(cfg.upstreamPort, cfg.upstream, () => sock.write(Buffer.concat([u16(q.length), q])));
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        const m = buf.subarray(2, 2 + buf.readUInt16BE(0));
        finish(sameId(m) ? m : null);
      }
    });
    sock.on('close', () => finish(null));
  } else {
    sock = dgram.createSocket('udp4');
    sock.on('message', (m, r) => { if (r.address === cfg.upstream && r.port === cfg.upstreamPort && sameId(m)) finish(m); });
    sock.send(q, cfg.upstreamPort, cfg.upstream);
  }
  sock.on('error', () => finish(null));
}

// A name at off in m (compression pointers followed): { name, end } with end after the name as written.
function readName(m, off) {
  const labels = [];
  let end = -1, hops = 0;
  while (off < m.length && hops < 32) {
    const len = m[off];
    if (len === 0) { if (end < 0) end = off + 1; return { name: labels.join('.').toLowerCase(), end }; }
    if ((len & 0xc0) === 0xc0) { if (end < 0) end = off + 2; off = ((len & 0x3f) << 8) | m[off + 1]; hops++; continue; }
    labels.push(m.toString('latin1', off + 1, off + 1 + len));
    off += 1 + len;
  }
  return null;
}

// An upstream answer whose chain of CNAMEs ends in lab.test without the asked A: the same answer
// with the target's A record after the CNAMEs (authority and additional records left out).
function chase(m, qq) {
  if (m.length >= 12 && (m.readUInt16BE(2) & 0xf) === 5) {
    const nx = Buffer.from(m.subarray(0, qq.end));
    nx.writeUInt16BE((m.readUInt16BE(2) & ~0x040f) | 3, 2);
    nx.writeUInt16BE(0, 6); nx.writeUInt16BE(0, 8); nx.writeUInt16BE(0, 10);
    return nx;
  }
  if (qq.type !== A || m.length < 12 || (m.readUInt16BE(2) & 0xf) !== 0 || m.readUInt16BE(4) !== 1) return m;
  let off = qq.end, target = qq.name;
  const count = m.readUInt16BE(6);
  for (let i = 0; i < count; i++) {
    const owner = readName(m, off);
    if (!owner || owner.end + 10 > m.length) return m;
    const type = m.readUInt16BE(owner.end), len = m.readUInt16BE(owner.end + 8);
    if (type === A) return m;
    if (type === 5 && owner.name === target) target = readName(m, owner.end + 10)?.name ?? target;
    off = owner.end + 10 + len;
  }
  const addr = names.get(target);
  if (target === qq.name || !addr) return m;
  const h = Buffer.from(m.subarray(0, 12));
  h.writeUInt16BE(count + 1, 6); h.writeUInt16BE(0, 8); h.writeUInt16BE(0, 10);
  return Buffer.concat([h, m.subarray(12, off), rr(encode(target), A, 60, Buffer.from(addr.split('.').map(Number)))]);
}

function handle(q, tcp, send) {
  if (q.length < 12 || q[2] & 0x80) return; // not a query: never answer a response
  const qq = question(q);
  if (!qq) return send(reply(q, 12, 1, false));
  if ((q[2] & 0x78) !== 0) return send(reply(q, qq.end, 4, false));
  const z = cfg.zone;
  if (qq.name === z || qq.name.endsWith('.' + z)) return send(ours(q, qq));
  forward(q, qq, tcp, (answer) => send(chase(answer, qq)));
}

const udp = dgram.createSocket('udp4');
udp.on('message', (q, r) => handle(q, false, (a) => udp.send(a, r.port, r.address)));
const tcp = net.createServer((c) => {
  let buf = Buffer.alloc(0);
  c.setTimeout(10000, () => c.destroy());
  c.on('error', () => {});
  c.on('data', (d) => {
    buf = Buffer.concat([buf, d]);
    while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
      const q = buf.subarray(2, 2 + buf.readUInt16BE(0));
      buf = buf.subarray(2 + q.length);
      handle(q, true, (a) => { if (!c.destroyed) c.write(Buffer.concat([u16(a.length), a])); });
    }
  });
});
udp.bind(cfg.port, cfg.listen, () => tcp.listen(cfg.port, cfg.listen, () => console.log('resolver listening on ' + cfg.listen + ':' + cfg.port + ' (udp, tcp)')));
`;

export function startResolver(state: LabState, n: Names): ProcRef {
  // hostplane's DNS server: the first host's, once `node setup --roles …,dns` ran there.
  const hosts = labHosts(state);
  const cfg = { listen: BRIDGE_ADDRESS, port: RESOLVER_PORT, zone: LAB_ZONE, names: labNames(hosts), upstream: hosts[0].address, upstreamPort: 53, timeoutMs: 2000 };
  return startInBridge(state, n, 'resolver', [process.execPath, '-e', RESOLVER_SCRIPT, JSON.stringify(cfg)]);
}

/** Waits until it listens on both transports (it says so once both are bound). */
export async function waitResolver(state: LabState, timeoutMs = 10_000): Promise<void> {
  const log = serviceLog(state.dir, 'resolver');
  await waitService(state, 'resolver', async () => fs.existsSync(log) && fs.readFileSync(log, 'utf8').includes('resolver listening on'), timeoutMs);
}
