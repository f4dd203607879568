// NOTIFY (RFC 1996) to the secondaries (docs/decisions/0013-dns-secondaries.md):
// after a DNS server applies a change, it tells every registered secondary that the zone has a new
// serial, signed with the secondary's TSIG key; the secondary then asks for the SOA and transfers.
//
// Every listening hostplane DNS process sends its own NOTIFY for each change it applies, so with
// several processes a secondary hears of a change more than once. That is harmless: NOTIFY only
// makes the secondary check the serial (RFC 1996 §3.7), and it transfers only when the serial grew.
//
// A NOTIFY without an answer is sent again (RFC 1996 §3.6), up to RETRIES times with a growing
// pause; a newer NOTIFY for the same zone and secondary replaces one still being retried. The
// answer is matched by id and source; its TSIG is not checked (the answer changes nothing here).
import crypto from 'node:crypto';
import dgram from 'node:dgram';
import net from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import { nameWire } from '../dns-wire.js';
import type { Secondary } from '../provisioning/dns/secondaries.repository.js';
import { signRequest } from './tsig.js';
import { soaWire } from './transfer-messages.js';
import type { Zone } from './zone.js';

const RETRIES = 5;
const FIRST_WAIT_MS = 1000;

interface Pending {
  timer: NodeJS.Timeout;
  id: number;
  host: string;
  port: number;
}

export class Notifier {
  private sockets = new Map<'udp4' | 'udp6', dgram.Socket>();
  /** By `zone secondary`: the NOTIFY being retried. */
  private pending = new Map<string, Pending>();
  private stopped = false;

  constructor(private readonly log: FastifyBaseLogger, private readonly opts: { firstWaitMs?: number; retries?: number } = {}) {}

  /** Sends a NOTIFY for `zone` (its current serial) to every secondary. */
  notify(zone: Zone, secondaries: Secondary[]): void {
    for (const s of secondaries) this.send(zone, s);
  }

  private socket(host: string): dgram.Socket {
    const family = net.isIPv6(host) ? 'udp6' : 'udp4';
    let sock = this.sockets.get(family);
    if (!sock) {
      sock = dgram.createSocket(family);
      sock.on('error', (err) => this.log.warn({ err }, 'DNS NOTIFY socket error'));
      sock.on('message', (msg, rinfo) => this.answered(msg, rinfo));
      sock.unref();
      this.sockets.set(family, sock);
    }
    return sock;
  }

  private answered(msg: Buffer, rinfo: dgram.RemoteInfo) {
    if (msg.length < 12 || !(msg.readUInt16BE(2) & 0x8000)) return;
    const id = msg.readUInt16BE(0);
    const from = rinfo.address.replace(/^::ffff:/, '');
    for (const [k, p] of this.pending) {
      if (p.id === id && p.host === from && p.port === rinfo.port) {
        clearTimeout(p.timer);
        this.pending.delete(k);
        return;
      }
    }
  }

  private send(zone: Zone, s: Secondary) {
    if (this.stopped) return;
    const k = `${zone.name} ${s.name}`;
    const old = this.pending.get(k);
    if (old) clearTimeout(old.timer);
    const id = crypto.randomInt(0, 65536);
    const retries = this.opts.retries ?? RETRIES;
    let attempt = 0;
    const fire = () => {
      if (this.stopped) return;
      if (attempt > retries) {
        this.pending.delete(k);
        this.log.warn({ zone: zone.name, serial: zone.serial, secondary: s.name, address: `${s.host}:${s.port}` }, 'DNS secondary did not answer NOTIFY');
        return;
      }
      const { message } = signRequest(notifyMessage(id, zone), s.key);
      this.socket(s.host).send(message, s.port, s.host, (err) => {
        if (err) this.log.warn({ err, secondary: s.name }, 'DNS NOTIFY could not be sent');
      });
      const wait = (this.opts.firstWaitMs ?? FIRST_WAIT_MS) * 2 ** attempt++;
      const p = { timer: setTimeout(fire, wait), id, host: s.host, port: s.port };
      p.timer.unref();
      this.pending.set(k, p);
    };
    fire();
  }

  stop(): void {
    this.stopped = true;
    for (const p of this.pending.values()) clearTimeout(p.timer);
    this.pending.clear();
    for (const s of this.sockets.values()) s.close();
    this.sockets.clear();
  }
}

/** RFC 1996 §3.7: opcode NOTIFY, AA, the zone's SOA as the question and its new SOA as the answer. */
export function notifyMessage(id: number, zone: Zone): Buffer {
  const header = Buffer.alloc(12);
  header.writeUInt16BE(id, 0);
  header.writeUInt16BE((4 << 11) | 0x0400, 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(1, 6);
  const q = Buffer.concat([nameWire(zone.name), Buffer.from([0, 6, 0, 1])]);
  return Buffer.concat([header, q, soaWire(zone)]);
}
