// Talking DNS in tests (docs/decisions/0003-dns-propagation.md): queries over UDP
// and TCP encoded and decoded with dns-packet, compact views of replies, the real `dig`, and a test
// zone written straight into a fresh store (plus recordChange) and served by a DnsServer on loopback.
import dgram from 'node:dgram';
import net from 'node:net';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import dnsPacket, { type Answer, type DecodedPacket } from 'dns-packet';
import { afterAll, beforeAll } from 'vitest';
import type { Store } from '../../src/db/index.js';
import { DnsServer } from '../../src/dns/server.js';
import { recordChange } from '../../src/provisioning/dns/propagation.js';
import { freshStore, testConfig, type EngineName, type TestStore } from './app.js';

/** Settings of the test DNS servers: fast heartbeats and polls. */
export const ENV = {
  DNS_NAMESERVERS: 'ns1.dns.test,ns2.dns.test',
  DNS_HEARTBEAT_MS: '200',
  DNS_SERVER_STALE_MS: '1000',
  DNS_POLL_MS: '100',
};
const SOA_DATA = { mname: 'ns1.dns.test', rname: 'hostmaster.dns.test', refresh: 3600, retry: 600, expire: 1209600, minimum: 300 };
export const HEX32 = 'AB'.repeat(32);
export const HEX32B = 'CD'.repeat(32);
export const LONG_TXT = `${'a'.repeat(250)}ü${'b'.repeat(300)}€end`;

export type Row = [name: string, type: string, data: string, opts?: { ttl?: number; state?: 'pending' | 'active' | 'deleting' }];

/** The records of zone.example: every type, CNAME chains and loops, wildcards, a delegation, bad data, large sets. */
export const ZONE: Row[] = [
  ['', 'A', '192.0.2.1'],
  ['', 'AAAA', '2001:db8::1'],
  ['', 'MX', '10 mail.zone.example'],
  ['', 'MX', '20 mail2.zone.example'],
  ['', 'TXT', 'v=spf1 mx -all'],
  ['', 'CAA', '0 issue "letsencrypt.org"'],
  ['www', 'CNAME', 'zone.example.'],
  ['ext', 'CNAME', 'target.elsewhere.example'],
  ['dangling', 'CNAME', 'missing.zone.example'],
  ['loop1', 'CNAME', 'loop2.zone.example'],
  ['loop2', 'CNAME', 'loop1.zone.example'],
  ['cross', 'CNAME', 'www.other.example'],
  ['mail', 'A', '192.0.2.25', { ttl: 600 }],
  ['_sip._tcp', 'SRV', '0 5 5060 sip.zone.example'],
  ['_443._tcp.www2', 'TLSA', `3 1 1 ${HEX32}`],
  ['*.wild', 'A', '192.0.2.99'],
  ['*.wild', 'TXT', 'wildcard'],
  ['real.wild', 'A', '192.0.2.100'],
  ['*.cw', 'CNAME', 'mail.zone.example'],
  ['a.b.c', 'A', '192.0.2.3'],
  ['sub', 'NS', 'ns1.sub.zone.example'],
  ['sub', 'NS', 'ns.elsewhere.example'],
  ['ns1.sub', 'A', '192.0.2.53'],
  ['sub', 'DS', `12345 13 2 ${HEX32B}`],
  ['long', 'TXT', LONG_TXT],
  ['_acme-challenge', 'TXT', 'token-value'],
  ['bad', 'A', '999.1.1.1'],
  ['bad', 'MX', 'nonsense'],
  ['pending', 'A', '192.0.2.77', { state: 'pending' }],
  ['going', 'A', '192.0.2.78', { state: 'deleting' }],
  ...Array.from({ length: 40 }, (_, i): Row => ['some', 'A', `10.0.0.${i + 1}`]),
  ...Array.from({ length: 100 }, (_, i): Row => ['many', 'A', `10.0.1.${i + 1}`]),
];
const OTHER: Row[] = [
  ['*', 'A', '192.0.2.200'],
  ['www', 'A', '192.0.2.201'],
];
const CHILD: Row[] = [['www', 'A', '192.0.2.210']];

// ---- store fixtures ---------------------------------------------------------------------------

export async function customer(store: Store): Promise<number> {
  const { id } = await store.db
    .insertInto('customers')
    .values({ reseller_id: null, is_reseller: 0, organization: 'DNS test', is_login_disabled: 0, external_customer_id: null, legacy_password_hash: null, created_at: new Date().toISOString() })
    .returning('id')
    .executeTakeFirstOrThrow();
  return id;
}

export async function addDomain(store: Store, customerId: number, name: string, presence = true) {
  await store.db
    .insertInto('domains')
    .values({
      name, name_unicode: name, customer_id: customerId, package_id: null, is_registered: 0, registration_created_at: null,
      registration_expires_at: null, registration_status: null, has_presence: presence ? 1 : 0, dns_update_lock: 0,
      dns_migration_mode: 0, created_at: new Date().toISOString(),
    })
    .execute();
}

/** Inserts records (state active unless said) and records one change; returns the change id. */
export async function addRecords(store: Store, domain: string, rows: Row[]): Promise<number> {
  return store.db.transaction().execute(async (trx) => {
    const now = new Date().toISOString();
    for (const [name, record_type, data, o] of rows) {
      await trx
        .insertInto('dns_records')
        .values({ domain, name, record_type, data, ttl: o?.ttl ?? 3600, tag: 'custom', state: o?.state ?? 'active', created_at: now, updated_at: now })
        .execute();
    }
    // Naming the owners, as the API's jobs do: the DNS servers reload just those.
    return recordChange(trx, store.signals, domain, rows.map(([name]) => name));
  });
}

/**
 * Runs `fn` and records one change of `domain` in the same transaction (of the whole zone, unless
 * `owners` names the relative names it touched); returns the change id.
 */
export async function change(store: Store, domain: string, fn: (db: Store['db']) => Promise<unknown>, owners?: string[]): Promise<number> {
  return store.db.transaction().execute(async (trx) => {
    await fn(trx);
    return recordChange(trx, store.signals, domain, owners);
  });
}

export interface ZoneServer {
  ts: TestStore;
  dns: DnsServer;
  port: number;
  /** The customer owning the test zones. */
  cust: number;
  /** zone.example's dns_serial once the records are in. */
  serial: number;
  stop(): Promise<void>;
}

/**
 * A fresh store with zone.example (ZONE), other.example, child.zone.example and a domain without
 * presence, served on 127.0.0.1 by a DnsServer with the ENV settings: `s = await startZoneServer(engine)`.
 */
export async function startZoneServer(engine: EngineName): Promise<ZoneServer> {
  const ts = await freshStore(engine);
  const cust = await customer(ts.store);
  await addDomain(ts.store, cust, 'zone.example');
  await addDomain(ts.store, cust, 'other.example');
  await addDomain(ts.store, cust, 'child.zone.example');
  await addDomain(ts.store, cust, 'nopresence.example', false);
  await addRecords(ts.store, 'zone.example', ZONE);
  await addRecords(ts.store, 'other.example', OTHER);
  await addRecords(ts.store, 'child.zone.example', CHILD);
  await addRecords(ts.store, 'nopresence.example', [['', 'A', '192.0.2.9']]);
  const serial = (await ts.store.db.selectFrom('domains').select('dns_serial').where('name', '=', 'zone.example').executeTakeFirstOrThrow()).dns_serial;
  const dns = await DnsServer.start({ store: ts.store, config: testConfig(ENV), listen: '127.0.0.1:0' });
  return {
    ts,
    dns,
    port: dns.port!,
    cust,
    serial,
    async stop() {
      await dns.stop();
      await ts.drop();
    },
  };
}

/**
 * Serves the test zones to the tests of the enclosing describe: started in its beforeAll, stopped in
 * its afterAll; `use` gets the server once started: `serveTestZones(engine, (s) => ({ port } = s))`.
 */
export function serveTestZones(engine: EngineName, use: (s: ZoneServer) => void): void {
  let s: ZoneServer | undefined;
  beforeAll(async () => {
    s = await startZoneServer(engine);
    use(s);
  });
  afterAll(() => s?.stop());
}

// ---- DNS clients ------------------------------------------------------------------------------

export interface Q {
  id?: number;
  rd?: boolean;
  /** EDNS0 UDP size, or undefined for no OPT. */
  edns?: number;
  klass?: string;
}

let nextId = 1;
/** One question as a query message: `query('zone.example', 'A', { edns: 1232 })`. */
export function query(name: string, type: string, o: Q = {}): Buffer {
  return dnsPacket.encode({
    type: 'query',
    id: o.id ?? (nextId = (nextId % 65000) + 1),
    flags: o.rd ? dnsPacket.RECURSION_DESIRED : 0,
    questions: [{ name, type, class: o.klass ?? 'IN' }],
    additionals: o.edns ? [{ type: 'OPT', name: '.', udpPayloadSize: o.edns }] : [],
  });
}

/** Sends one datagram to 127.0.0.1:`port`; the reply, or null after `timeoutMs`. */
export function udp(port: number, msg: Buffer, timeoutMs = 1000): Promise<Buffer | null> {
  return new Promise((resolve) => {
    const sock = dgram.createSocket('udp4');
    const done = (v: Buffer | null) => {
      clearTimeout(timer);
      sock.close();
      resolve(v);
    };
    const timer = setTimeout(() => done(null), timeoutMs);
    sock.on('message', (m) => done(m));
    sock.send(msg, port, '127.0.0.1');
  });
}

/**
 * Sends each message framed over one TCP connection (optionally in tiny pieces, from
 * `localAddress`); returns the replies once `expect` of them (default: one per message) came, or
 * once `until(replies)` holds (a zone transfer's last message).
 */
export function tcp(
  port: number,
  msgs: Buffer[],
  o: { expect?: number; until?: (replies: Buffer[]) => boolean; dribble?: boolean; raw?: Buffer; timeoutMs?: number; localAddress?: string } = {},
): Promise<Buffer[]> {
  const want = o.expect ?? msgs.length;
  const enough = o.until ?? ((out: Buffer[]) => out.length >= want);
  return new Promise((resolve, reject) => {
    const sock = net.connect({ port, host: '127.0.0.1', localAddress: o.localAddress });
    const out: Buffer[] = [];
    let buf = Buffer.alloc(0);
    const timer = setTimeout(() => {
      sock.destroy();
      resolve(out);
    }, o.timeoutMs ?? 2000);
    sock.on('error', reject);
    sock.on('close', () => {
      clearTimeout(timer);
      resolve(out);
    });
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        out.push(buf.subarray(2, 2 + buf.readUInt16BE(0)));
        buf = buf.subarray(2 + buf.readUInt16BE(0));
      }
      if (enough(out)) {
        clearTimeout(timer);
        sock.end();
        resolve(out);
      }
    });
    const framed = o.raw ?? Buffer.concat(msgs.map((m) => Buffer.concat([Buffer.from([m.length >> 8, m.length & 0xff]), m])));
    if (o.dribble) {
      let i = 0;
      const step = () => {
        if (i >= framed.length) return;
        sock.write(framed.subarray(i, i + 1));
        i++;
        setImmediate(step);
      };
      step();
    } else {
      sock.write(framed);
    }
  });
}

export type Transport = 'udp' | 'tcp';

/** One question to 127.0.0.1:`port`: the reply raw and decoded, and the query sent. Throws when nothing answers. */
export async function ask(port: number, transport: Transport, name: string, type: string, o: Q = {}) {
  const msg = query(name, type, o);
  const raw = transport === 'udp' ? await udp(port, msg) : (await tcp(port, [msg]))[0];
  if (!raw) throw new Error(`no ${transport} reply for ${name} ${type}`);
  return { raw, p: dnsPacket.decode(raw), sent: msg };
}

/** Compact view of a record for whole-section assertions. */
export function rr(a: Answer) {
  const v: Record<string, unknown> = { name: a.name, type: a.type, ttl: a.ttl };
  if (a.type === 'TXT') v.data = (a.data as Buffer[]).map((b) => b.toString('utf8'));
  else if (a.type === 'OPT') return { type: 'OPT', udpPayloadSize: a.udpPayloadSize, ednsVersion: a.ednsVersion, extendedRcode: a.extendedRcode };
  else if (a.type === 'DS') v.data = { ...a.data, digest: (a.data.digest as Buffer).toString('hex').toUpperCase() };
  else if (a.type === 'TLSA') v.data = { ...a.data, certificate: (a.data.certificate as Buffer).toString('hex').toUpperCase() };
  else if (a.type === 'CAA') v.data = { flags: a.data.flags, tag: a.data.tag, value: a.data.value };
  else v.data = a.data;
  return v;
}
/** The header flags of a reply. */
export const head = (p: DecodedPacket) => ({ rcode: p.rcode, aa: p.flag_aa, tc: p.flag_tc, rd: p.flag_rd, ra: p.flag_ra, qr: p.flag_qr, opcode: p.opcode });
/** The SOA of a test zone as `rr` shows it (TTL = MINIMUM in negative answers). */
export const soa = (zone: string, serial: number, ttl = 300) => ({ name: zone, type: 'SOA', ttl, data: { ...SOA_DATA, serial } });
/** The OPT record of a reply as `rr` shows it. */
export const OPT = { type: 'OPT', udpPayloadSize: 1232, ednsVersion: 0, extendedRcode: 0 };

// ---- the real dig -------------------------------------------------------------------------------

const run = promisify(execFile);

/** Why the dig tests cannot run here, or null: `requirable(digMissing())('with the real dig', …)` (test/helpers/required.ts). */
export function digMissing(): string | null {
  try {
    execFileSync('dig', ['-v'], { stdio: 'ignore' });
    return null;
  } catch {
    const reason = 'dig is not installed (apt-get install dnsutils; .ci/run does it): the dig tests are skipped';
    console.warn(reason);
    return reason;
  }
}

/** Runs `dig @127.0.0.1 -p <port> … args` and returns its output: `runDig(port, 'zone.example', 'A', '+short')`. */
export const runDig = async (port: number, ...args: string[]) => (await run('dig', ['@127.0.0.1', '-p', String(port), '+time=2', '+tries=1', ...args])).stdout;
/** The status of a dig output (NOERROR, NXDOMAIN …). */
export const status = (out: string) => /status: ([A-Z]+)/.exec(out)?.[1];
/** The header flags of a dig output, sorted: 'aa qr'. */
export const flags = (out: string) => /;; flags: ([a-z ]+);/.exec(out)?.[1].trim().split(' ').sort().join(' ');
/** The lines of one section of a dig output (ANSWER, AUTHORITY, ADDITIONAL), white space folded. */
export const section = (out: string, name: string) => {
  const m = new RegExp(`;; ${name} SECTION:\\n([\\s\\S]*?)(?:\\n\\n|$)`).exec(out);
  return m ? m[1].split('\n').map((l) => l.split(/\s+/).join(' ')) : [];
};
