// The DNS backend as job runs see it (docs/decisions/0004-provisioning-seams.md "Drivers";
// docs/decisions/0003-dns-propagation.md, 0013-dns-secondaries.md): hostplane's own DNS servers
// following the change log, and the registered secondaries fed by zone transfers.
import dgram from 'node:dgram';
import net from 'node:net';
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Store } from '../../db/index.js';
import type { Database } from '../../db/schema.js';
import { PermanentJobError } from '../../errors.js';
import { isApplied, recordChange } from './propagation.js';
import { SecondariesRepository, type Secondary } from './secondaries.repository.js';
import { nameWire, readName, serialGt } from '../../dns-wire.js';
import { ChangeLogRepository } from './change-log.repository.js';

export interface DnsDriver {
  /**
   * Records, in the caller's transaction, that `domain`'s served records changed (at `owners`,
   * relative names, when known); returns the change id to wait for:
   * `const id = await dns.recordChange(trx, 'example.com', ['www'])`.
   */
  recordChange(trx: Kysely<Database>, domain: string, owners?: string[] | null): Promise<number>;
  /**
   * True when the change is answered by every live DNS server (and at least one is live) and
   * every registered secondary serves the change's serial. Throws a PermanentJobError naming the
   * lagging secondaries once the change is older than DNS_SECONDARY_TIMEOUT_MS.
   */
  isApplied(changeId: number): Promise<boolean>;
  close(): Promise<void>;
}

/** How long one SOA query to a secondary may take. */
const SOA_TIMEOUT_MS = 500;

/**
 * The change-log driver: DNS servers (`serve`, `hostplane dns`) tail dns_changes and report what
 * they applied; a server silent for `staleMs` (DNS_SERVER_STALE_MS) is not waited for. Then each
 * registered secondary is asked for the zone's SOA over UDP (docs/decisions/0013-dns-secondaries.md).
 */
export function changeLogDnsDriver(store: Store, opts: { staleMs: number; secondaryTimeoutMs?: number }): DnsDriver {
  return {
    recordChange: (trx, domain, owners) => recordChange(trx, store.signals, domain, owners),
    isApplied: async (changeId) => {
      if (!(await isApplied(store, changeId, opts))) return false;
      const secondaries = await new SecondariesRepository(store.db).all();
      if (!secondaries.length) return true;
      const change = await new ChangeLogRepository(store.db).change(changeId);
      // A purged log entry is a day old; a change of a domain that is gone has no zone to serve.
      if (!change || change.serial === null) return true;
      const zone = await store.db.selectFrom('domains').select('name').where('name', '=', change.domain).where('has_presence', '=', 1).executeTakeFirst();
      if (!zone) return true;
      const serial = Number(change.serial) >>> 0;
      const lagging = await laggingSecondaries(secondaries, change.domain, serial);
      if (!lagging.length) return true;
      const waited = Date.now() - Date.parse(change.created_at);
      if (waited > (opts.secondaryTimeoutMs ?? 60_000)) {
        const which = lagging.map((l) => `"${l.secondary.name}" (${l.secondary.host}:${l.secondary.port}) ${l.state}`).join('; ');
        throw new PermanentJobError(`${change.domain} serial ${serial} is not served by DNS secondary ${which} after ${Math.round(waited / 1000)} s`);
      }
      return false;
    },
    close: async () => {},
  };
}

/** The secondaries that do not serve `serial` (or newer) of `zone` yet, each with what it answered. */
export async function laggingSecondaries(secondaries: Secondary[], zone: string, serial: number): Promise<Array<{ secondary: Secondary; state: string }>> {
  const answers = await Promise.all(secondaries.map((s) => soaSerial(s.host, s.port, zone)));
  const out: Array<{ secondary: Secondary; state: string }> = [];
  secondaries.forEach((s, i) => {
    const a = answers[i];
    if (typeof a === 'number' && (a === serial || serialGt(a, serial))) return;
    out.push({ secondary: s, state: typeof a === 'number' ? `serves serial ${a}` : a });
  });
  return out;
}

/** The SOA serial `host:port` answers for `zone` over UDP, or why there is none ('no answer', 'REFUSED', …). */
export function soaSerial(host: string, port: number, zone: string, timeoutMs = SOA_TIMEOUT_MS): Promise<number | string> {
  return new Promise((resolve) => {
    const id = crypto.randomInt(0, 65536);
    const header = Buffer.alloc(12);
    header.writeUInt16BE(id, 0);
    header.writeUInt16BE(1, 4);
    const query = Buffer.concat([header, nameWire(zone), Buffer.from([0, 6, 0, 1])]);
    const sock = dgram.createSocket(net.isIPv6(host) ? 'udp6' : 'udp4');
    const done = (v: number | string) => {
      clearTimeout(timer);
      sock.close();
      resolve(v);
    };
    const timer = setTimeout(() => done('gives no answer'), timeoutMs);
    sock.on('error', (err) => done(`cannot be asked (${err.message})`));
    sock.on('message', (msg) => {
      if (msg.length < 12 || msg.readUInt16BE(0) !== id) return;
      const rcode = msg.readUInt16BE(2) & 0xf;
      if (rcode !== 0) return done(`answers RCODE ${rcode}`);
      const serial = readAnswerSoaSerial(msg);
      done(serial ?? 'has no SOA for the zone');
    });
    sock.send(query, port, host, (err) => err && done(`cannot be asked (${err.message})`));
  });
}

/** The serial of the first SOA in the answer section, or null. */
function readAnswerSoaSerial(msg: Buffer): number | null {
  if (msg.readUInt16BE(6) < 1) return null;
  let p = 12;
  for (let i = 0; i < msg.readUInt16BE(4); i++) {
    const q = readName(msg, p);
    if (!q) return null;
    p = q.next + 4;
  }
  for (let i = 0; i < msg.readUInt16BE(6); i++) {
    const owner = readName(msg, p);
    if (!owner || owner.next + 10 > msg.length) return null;
    const type = msg.readUInt16BE(owner.next);
    const rdata = owner.next + 10;
    if (type === 6) {
      const mname = readName(msg, rdata);
      const rname = mname && readName(msg, mname.next);
      return rname && rname.next + 4 <= msg.length ? msg.readUInt32BE(rname.next) : null;
    }
    p = rdata + msg.readUInt16BE(owner.next + 8);
  }
  return null;
}
