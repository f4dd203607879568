// What a DNS server does for its secondaries (docs/decisions/0013-dns-secondaries.md): zone
// transfers (AXFR/IXFR over TCP) and queries signed with TSIG take this asynchronous path (the
// registered secondaries are read from the store), and after a change is applied every secondary
// is sent NOTIFY (notify-secondaries.ts). Every other query is answered by sockets.ts as before,
// after a check for a TSIG record that costs a walk over the message's record headers when it has
// additional records.
import type { FastifyBaseLogger } from 'fastify';
import type { Store } from '../db/index.js';
import { SecondariesRepository, type Secondary } from '../provisioning/dns/secondaries.repository.js';
import { Notifier } from './notify-secondaries.js';
import { parseQuestion } from './query.js';
import { AXFR, IXFR, axfrMessages, ixfrClientSerial, ixfrMessages, questionType } from './transfer-messages.js';
import { BADTIME, NOTAUTH, ResponseSigner, readTsig, timeOther, unsignedTsigError, verifyRequest, type TsigRecord } from './tsig.js';
import type { ZoneSet } from './zone.js';

/** Signed ordinary queries (a secondary's SOA check) use the secondaries read at most this long ago. */
const SECONDARIES_FRESH_MS = 1000;
const REFUSED = 5;

export interface TransfersOptions {
  /** The zones the server answers from. */
  zones: ZoneSet;
  store: Store;
  log: FastifyBaseLogger;
  /** The server's warning, at most one per interval. */
  warn: (err: unknown, msg: string) => void;
  /** An ordinary query answered from the zones (sockets.ts), for signed queries that are not transfers. */
  answer: (msg: Buffer, transport: 'udp' | 'tcp', reserve?: number) => Buffer | null;
}

/** The signed path and NOTIFY: `transfers.answerSigned(msg, remote, 'tcp')`, `await transfers.announce(zoneNames)`. */
export class Transfers {
  private readonly zones: ZoneSet;
  private readonly log: FastifyBaseLogger;
  private readonly warn: (err: unknown, msg: string) => void;
  private readonly answer: (msg: Buffer, transport: 'udp' | 'tcp', reserve?: number) => Buffer | null;
  private secondaries: Secondary[] = [];
  private secondariesAt = 0;
  private notifier: Notifier | null = null;

  constructor(private readonly opts: TransfersOptions) {
    this.zones = opts.zones;
    this.log = opts.log;
    this.warn = opts.warn;
    this.answer = opts.answer;
  }

  /** The registered secondaries, read again when older than `maxAgeMs`; the last known ones when the store fails. */
  async loadSecondaries(maxAgeMs: number): Promise<Secondary[]> {
    if (Date.now() - this.secondariesAt <= maxAgeMs) return this.secondaries;
    try {
      this.secondaries = await new SecondariesRepository(this.opts.store.db).all();
      this.secondariesAt = Date.now();
    } catch (err) {
      this.warn(err, 'DNS server could not read the secondaries; using the last known');
    }
    return this.secondaries;
  }

  /** From now on, zones announced are sent NOTIFY (a listening server: one that answers transfers). */
  startNotifying(): void {
    this.notifier = new Notifier(this.log);
  }

  /** Sends NOTIFY for each of the zones `names` (their serial moved) to every registered secondary. */
  async announce(names: ReadonlySet<string>): Promise<void> {
    if (this.notifier && names.size) {
      const secondaries = await this.loadSecondaries(0);
      for (const name of names) {
        const zone = this.zones.get(name);
        if (zone) this.notifier.notify(zone, secondaries);
      }
    }
  }

  /**
   * A transfer or a query signed with TSIG (RFC 8945): the replies to send, in order, signed when
   * the request verified. Transfers need a valid TSIG of a registered secondary, from that
   * secondary's address (the ACL); anything else is REFUSED or NOTAUTH.
   */
  async answerSigned(msg: Buffer, remote: string, transport: 'udp' | 'tcp'): Promise<Buffer[]> {
    if (msg.length < 12 || msg.readUInt16BE(2) & 0x8000) return [];
    const qtype = questionType(msg);
    const transfer = qtype === AXFR || qtype === IXFR;
    const tsig = readTsig(msg);
    if (!tsig) {
      // An unsigned transfer (or a malformed TSIG record): refused, the zone's data stays private.
      if (transfer) return [this.errorReply(msg, REFUSED)];
      const out = this.answer(msg, transport);
      return out ? [out] : [];
    }
    const secondaries = await this.loadSecondaries(transfer ? 0 : SECONDARIES_FRESH_MS);
    const from = remote.replace(/^::ffff:/, '').toLowerCase();
    const keys = (name: string) => secondaries.find((s) => s.key.name === name)?.key;
    const v = verifyRequest(msg, tsig, keys);
    const unsigned = this.withoutTsig(msg, tsig);
    if (!v.ok) {
      this.log.info({ key: tsig.keyName, from, error: v.error }, 'DNS request with a bad TSIG refused');
      if (v.error === BADTIME && v.key) {
        return [new ResponseSigner(v.key, tsig.mac, tsig.originalId).sign(this.errorReply(unsigned, NOTAUTH), { error: BADTIME, other: timeOther() })];
      }
      return [unsignedTsigError(this.errorReply(unsigned, NOTAUTH), tsig, v.error)];
    }
    const signer = new ResponseSigner(v.key, tsig.mac, tsig.originalId);
    if (!transfer) {
      // Room for our TSIG record in a UDP reply: the query path truncates before it.
      const out = this.answer(unsigned, transport, 100 + v.key.name.length);
      return out ? [signer.sign(out)] : [];
    }
    // The ACL: the key must be that of a secondary registered at this address.
    if (!secondaries.some((s) => s.key.name === v.key.name && s.host.toLowerCase() === from)) {
      this.log.info({ key: tsig.keyName, from }, 'DNS transfer from an address not registered for its key refused');
      return [signer.sign(this.errorReply(unsigned, REFUSED))];
    }
    const q = parseQuestion(unsigned);
    const zone = q ? this.zones.get(q.key) : undefined;
    if (!q || !zone) return [signer.sign(this.errorReply(unsigned, NOTAUTH))];
    const id = msg.readUInt16BE(0);
    if (qtype === AXFR) {
      // RFC 5936 §4.2: no AXFR over UDP.
      if (transport === 'udp') return [signer.sign(this.errorReply(unsigned, REFUSED))];
      this.log.info({ zone: zone.name, serial: zone.serial, from, key: v.key.name }, 'DNS AXFR');
      return axfrMessages(zone, id, q.raw).map((m) => signer.sign(m));
    }
    const clientSerial = ixfrClientSerial(unsigned, 12 + q.raw.length);
    if (clientSerial === null) return [signer.sign(this.errorReply(unsigned, 1))];
    if (transport === 'udp') {
      // RFC 1995 §4: a UDP reply that would not fit is the current SOA alone (the client then uses TCP).
      const m = ixfrMessages(zone, id, q.raw, clientSerial);
      return [signer.sign(m.kind === 'current' ? m.messages[0] : ixfrMessages(zone, id, q.raw, zone.serial).messages[0])];
    }
    const { kind, messages } = ixfrMessages(zone, id, q.raw, clientSerial);
    this.log.info({ zone: zone.name, serial: zone.serial, clientSerial, kind, from, key: v.key.name }, 'DNS IXFR');
    return messages.map((m) => signer.sign(m));
  }

  /** The message without its TSIG record (ARCOUNT one less). */
  private withoutTsig(msg: Buffer, t: TsigRecord): Buffer {
    const m = Buffer.from(msg.subarray(0, t.start));
    m.writeUInt16BE(msg.readUInt16BE(10) - 1, 10);
    return m;
  }

  /** A reply with `rcode`, the question copied, nothing else. */
  private errorReply(msg: Buffer, rcode: number): Buffer {
    const q = parseQuestion(msg);
    const header = Buffer.alloc(12);
    header.writeUInt16BE(msg.readUInt16BE(0), 0);
    header.writeUInt16BE(0x8000 | (msg.readUInt16BE(2) & 0x7910) | rcode, 2);
    header.writeUInt16BE(q ? 1 : 0, 4);
    return q ? Buffer.concat([header, q.raw]) : header;
  }

  stop(): void {
    this.notifier?.stop();
  }
}
