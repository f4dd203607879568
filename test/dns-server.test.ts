// The authoritative DNS server (issue 3 item 3; docs/decisions/0003-dns-propagation.md): packets
// over UDP and TCP checked with dns-packet, the same answers through the real `dig`, propagation
// between the store and several DNS processes, and fuzzing of the packet path.
//
// Records are written straight into the store (plus recordChange), independent of the API.
import { requirable } from './helpers/required.js';
import dgram from 'node:dgram';
import net from 'node:net';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import dnsPacket, { type Answer, type DecodedPacket } from 'dns-packet';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, freshStore, testConfig, type TestStore } from './helpers/app.js';
import type { Store } from '../src/db/index.js';
import { DnsServer } from '../src/provisioning/dns/server.js';
import { isApplied, recordChange } from '../src/provisioning/dns/propagation.js';
import { answerQuery } from '../src/provisioning/dns/query.js';
import { Zone, ZoneSet } from '../src/provisioning/dns/zone.js';
import { parseCaaValue, parseName, splitTxt, toAnswer } from '../src/provisioning/dns/rdata.js';

const run = promisify(execFile);

const ENV = {
  DNS_NAMESERVERS: 'ns1.dns.test,ns2.dns.test',
  DNS_HEARTBEAT_MS: '200',
  DNS_SERVER_STALE_MS: '1000',
  DNS_POLL_MS: '100',
};
const SOA_DATA = { mname: 'ns1.dns.test', rname: 'hostmaster.dns.test', refresh: 3600, retry: 600, expire: 1209600, minimum: 300 };
const HEX32 = 'AB'.repeat(32);
const HEX32B = 'CD'.repeat(32);
const LONG_TXT = `${'a'.repeat(250)}ü${'b'.repeat(300)}€end`;

type Row = [name: string, type: string, data: string, opts?: { ttl?: number; state?: 'pending' | 'active' | 'deleting' }];

const ZONE: Row[] = [
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
  ...Array.from({ length: 20 }, (_, i): Row => ['some', 'A', `10.0.0.${i + 1}`]),
  ...Array.from({ length: 60 }, (_, i): Row => ['many', 'A', `10.0.1.${i + 1}`]),
];
const OTHER: Row[] = [
  ['*', 'A', '192.0.2.200'],
  ['www', 'A', '192.0.2.201'],
];
const CHILD: Row[] = [['www', 'A', '192.0.2.210']];

// ---- store fixtures ---------------------------------------------------------------------------

async function customer(store: Store): Promise<number> {
  const { id } = await store.db
    .insertInto('customers')
    .values({ reseller_id: null, is_reseller: 0, organization: 'DNS test', is_login_disabled: 0, external_customer_id: null, legacy_password_hash: null, created_at: new Date().toISOString() })
    .returning('id')
    .executeTakeFirstOrThrow();
  return id;
}

async function addDomain(store: Store, customerId: number, name: string, presence = true) {
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
async function addRecords(store: Store, domain: string, rows: Row[]): Promise<number> {
  return store.db.transaction().execute(async (trx) => {
    const now = new Date().toISOString();
    for (const [name, record_type, data, o] of rows) {
      await trx
        .insertInto('dns_records')
        .values({ domain, name, record_type, data, ttl: o?.ttl ?? 3600, tag: 'custom', state: o?.state ?? 'active', created_at: now, updated_at: now })
        .execute();
    }
    return recordChange(trx, domain);
  });
}

async function change(store: Store, domain: string, fn: (db: Store['db']) => Promise<unknown>): Promise<number> {
  return store.db.transaction().execute(async (trx) => {
    await fn(trx);
    return recordChange(trx, domain);
  });
}

// ---- DNS clients ------------------------------------------------------------------------------

interface Q {
  id?: number;
  rd?: boolean;
  /** EDNS0 UDP size, or undefined for no OPT. */
  edns?: number;
  klass?: string;
}

let nextId = 1;
function query(name: string, type: string, o: Q = {}): Buffer {
  return dnsPacket.encode({
    type: 'query',
    id: o.id ?? (nextId = (nextId % 65000) + 1),
    flags: o.rd ? dnsPacket.RECURSION_DESIRED : 0,
    questions: [{ name, type, class: o.klass ?? 'IN' }],
    additionals: o.edns ? [{ type: 'OPT', name: '.', udpPayloadSize: o.edns }] : [],
  });
}

function udp(port: number, msg: Buffer, timeoutMs = 1000): Promise<Buffer | null> {
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

/** Sends each message framed over one TCP connection (optionally in tiny pieces); returns the replies. */
function tcp(port: number, msgs: Buffer[], o: { expect?: number; dribble?: boolean; raw?: Buffer; timeoutMs?: number } = {}): Promise<Buffer[]> {
  const want = o.expect ?? msgs.length;
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
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
      if (out.length >= want) {
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

type Transport = 'udp' | 'tcp';
async function ask(port: number, transport: Transport, name: string, type: string, o: Q = {}) {
  const msg = query(name, type, o);
  const raw = transport === 'udp' ? await udp(port, msg) : (await tcp(port, [msg]))[0];
  if (!raw) throw new Error(`no ${transport} reply for ${name} ${type}`);
  return { raw, p: dnsPacket.decode(raw), sent: msg };
}

/** Compact view of a record for whole-section assertions. */
function rr(a: Answer) {
  const v: Record<string, unknown> = { name: a.name, type: a.type, ttl: a.ttl };
  if (a.type === 'TXT') v.data = (a.data as Buffer[]).map((b) => b.toString('utf8'));
  else if (a.type === 'OPT') return { type: 'OPT', udpPayloadSize: a.udpPayloadSize, ednsVersion: a.ednsVersion, extendedRcode: a.extendedRcode };
  else if (a.type === 'DS') v.data = { ...a.data, digest: (a.data.digest as Buffer).toString('hex').toUpperCase() };
  else if (a.type === 'TLSA') v.data = { ...a.data, certificate: (a.data.certificate as Buffer).toString('hex').toUpperCase() };
  else if (a.type === 'CAA') v.data = { flags: a.data.flags, tag: a.data.tag, value: a.data.value };
  else v.data = a.data;
  return v;
}
const head = (p: DecodedPacket) => ({ rcode: p.rcode, aa: p.flag_aa, tc: p.flag_tc, rd: p.flag_rd, ra: p.flag_ra, qr: p.flag_qr, opcode: p.opcode });
const soa = (zone: string, serial: number, ttl = 300) => ({ name: zone, type: 'SOA', ttl, data: { ...SOA_DATA, serial } });
const OPT = { type: 'OPT', udpPayloadSize: 1232, ednsVersion: 0, extendedRcode: 0 };

async function until(check: () => Promise<boolean> | boolean, ms = 3000): Promise<number> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > ms) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return Date.now() - start;
}

let digMissing: string | null = null;
try {
  execFileSync('dig', ['-v'], { stdio: 'ignore' });
} catch {
  digMissing = 'dig is not installed (apt-get install dnsutils; .ci/run does it): the dig tests are skipped';
  console.warn(digMissing);
}

describe.each(ENGINES)('DNS server on %s', (engine) => {
  let ts: TestStore;
  let dns: DnsServer;
  let port: number;
  let cust: number;
  let serial: number;
  const config = testConfig(ENV);

  beforeAll(async () => {
    ts = await freshStore(engine);
    cust = await customer(ts.store);
    await addDomain(ts.store, cust, 'zone.example');
    await addDomain(ts.store, cust, 'other.example');
    await addDomain(ts.store, cust, 'child.zone.example');
    await addDomain(ts.store, cust, 'nopresence.example', false);
    await addRecords(ts.store, 'zone.example', ZONE);
    await addRecords(ts.store, 'other.example', OTHER);
    await addRecords(ts.store, 'child.zone.example', CHILD);
    await addRecords(ts.store, 'nopresence.example', [['', 'A', '192.0.2.9']]);
    serial = (await ts.store.db.selectFrom('domains').select('dns_serial').where('name', '=', 'zone.example').executeTakeFirstOrThrow()).dns_serial;
    dns = await DnsServer.start({ store: ts.store, config, listen: '127.0.0.1:0' });
    port = dns.port!;
  });
  afterAll(async () => {
    await dns?.stop();
    await ts?.drop();
  });

  describe.each(['udp', 'tcp'] as const)('over %s', (transport) => {
    it('SOA at the apex: authoritative, serial = domains.dns_serial, names from DNS_NAMESERVERS / DNS_HOSTMASTER', async () => {
      const { p } = await ask(port, transport, 'zone.example', 'SOA');
      expect(serial).toBe(2); // 1 at creation, +1 for the change that added the records
      expect(head(p)).toEqual({ rcode: 'NOERROR', aa: true, tc: false, rd: false, ra: false, qr: true, opcode: 'QUERY' });
      expect(p.answers.map(rr)).toEqual([{ ...soa('zone.example', serial, 3600) }]);
      expect(p.authorities).toEqual([]);
      expect(p.additionals).toEqual([]);
    });

    it('NS at the apex of every zone come from the settings', async () => {
      for (const zone of ['zone.example', 'other.example', 'child.zone.example']) {
        const { p } = await ask(port, transport, zone, 'NS');
        expect(head(p).aa).toBe(true);
        expect(p.answers.map(rr)).toEqual([
          { name: zone, type: 'NS', ttl: 3600, data: 'ns1.dns.test' },
          { name: zone, type: 'NS', ttl: 3600, data: 'ns2.dns.test' },
        ]);
      }
    });

    it('A, AAAA, MX, TXT, CAA at the apex; SRV, TLSA below it; record TTLs kept', async () => {
      const cases: Array<[string, string, unknown[]]> = [
        ['zone.example', 'A', [{ name: 'zone.example', type: 'A', ttl: 3600, data: '192.0.2.1' }]],
        ['zone.example', 'AAAA', [{ name: 'zone.example', type: 'AAAA', ttl: 3600, data: '2001:db8::1' }]],
        ['zone.example', 'MX', [
          { name: 'zone.example', type: 'MX', ttl: 3600, data: { preference: 10, exchange: 'mail.zone.example' } },
          { name: 'zone.example', type: 'MX', ttl: 3600, data: { preference: 20, exchange: 'mail2.zone.example' } },
        ]],
        ['zone.example', 'TXT', [{ name: 'zone.example', type: 'TXT', ttl: 3600, data: ['v=spf1 mx -all'] }]],
        ['zone.example', 'CAA', [{ name: 'zone.example', type: 'CAA', ttl: 3600, data: { flags: 0, tag: 'issue', value: 'letsencrypt.org' } }]],
        ['_sip._tcp.zone.example', 'SRV', [{ name: '_sip._tcp.zone.example', type: 'SRV', ttl: 3600, data: { priority: 0, weight: 5, port: 5060, target: 'sip.zone.example' } }]],
        ['_443._tcp.www2.zone.example', 'TLSA', [{ name: '_443._tcp.www2.zone.example', type: 'TLSA', ttl: 3600, data: { usage: 3, selector: 1, matchingType: 1, certificate: HEX32 } }]],
        ['mail.zone.example', 'A', [{ name: 'mail.zone.example', type: 'A', ttl: 600, data: '192.0.2.25' }]],
        ['_acme-challenge.zone.example', 'TXT', [{ name: '_acme-challenge.zone.example', type: 'TXT', ttl: 3600, data: ['token-value'] }]],
      ];
      for (const [name, type, answers] of cases) {
        const { p } = await ask(port, transport, name, type);
        expect({ name, type, ...head(p), answers: p.answers.map(rr), authorities: p.authorities }).toEqual({
          name, type, rcode: 'NOERROR', aa: true, tc: false, rd: false, ra: false, qr: true, opcode: 'QUERY', answers, authorities: [],
        });
      }
    });

    it('a TXT value longer than 255 bytes goes out as 255-byte strings (UTF-8 bytes, not characters)', async () => {
      const { p } = await ask(port, transport, 'long.zone.example', 'TXT', { edns: 1232 });
      const strings = p.answers[0].data as Buffer[];
      expect(strings.map((b) => b.length)).toEqual([255, 255, Buffer.byteLength(LONG_TXT) - 510]);
      expect(Buffer.concat(strings).toString('utf8')).toBe(LONG_TXT);
    });

    it('CNAME: answered at its name and followed within our zones (same zone, another zone)', async () => {
      const w = await ask(port, transport, 'www.zone.example', 'A');
      expect({ ...head(w.p), answers: w.p.answers.map(rr) }).toMatchObject({
        rcode: 'NOERROR', aa: true,
        answers: [
          { name: 'www.zone.example', type: 'CNAME', ttl: 3600, data: 'zone.example' },
          { name: 'zone.example', type: 'A', ttl: 3600, data: '192.0.2.1' },
        ],
      });
      const asCname = await ask(port, transport, 'www.zone.example', 'CNAME');
      expect(asCname.p.answers.map(rr)).toEqual([{ name: 'www.zone.example', type: 'CNAME', ttl: 3600, data: 'zone.example' }]);
      const cross = await ask(port, transport, 'cross.zone.example', 'A');
      expect(cross.p.answers.map(rr)).toEqual([
        { name: 'cross.zone.example', type: 'CNAME', ttl: 3600, data: 'www.other.example' },
        { name: 'www.other.example', type: 'A', ttl: 3600, data: '192.0.2.201' },
      ]);
    });

    it('CNAME out of our zones stops at the CNAME; to a missing name gives NXDOMAIN (RFC 6604); loops end', async () => {
      const ext = await ask(port, transport, 'ext.zone.example', 'A');
      expect({ ...head(ext.p), answers: ext.p.answers.map(rr), authorities: ext.p.authorities }).toMatchObject({
        rcode: 'NOERROR', aa: true, answers: [{ name: 'ext.zone.example', type: 'CNAME', ttl: 3600, data: 'target.elsewhere.example' }], authorities: [],
      });
      const dangling = await ask(port, transport, 'dangling.zone.example', 'A');
      expect({ ...head(dangling.p), answers: dangling.p.answers.map(rr), authorities: dangling.p.authorities.map(rr) }).toMatchObject({
        rcode: 'NXDOMAIN', aa: true,
        answers: [{ name: 'dangling.zone.example', type: 'CNAME', ttl: 3600, data: 'missing.zone.example' }],
        authorities: [soa('zone.example', serial)],
      });
      const loop = await ask(port, transport, 'loop1.zone.example', 'A');
      expect(loop.p.rcode).toBe('NOERROR');
      expect(loop.p.answers.map(rr)).toEqual([
        { name: 'loop1.zone.example', type: 'CNAME', ttl: 3600, data: 'loop2.zone.example' },
        { name: 'loop2.zone.example', type: 'CNAME', ttl: 3600, data: 'loop1.zone.example' },
      ]);
    });

    it('wildcards (RFC 4592): synthesis at any depth, not for existing names, NODATA for other types, CNAME wildcards', async () => {
      const one = await ask(port, transport, 'x.wild.zone.example', 'A');
      expect({ ...head(one.p), answers: one.p.answers.map(rr) }).toMatchObject({
        rcode: 'NOERROR', aa: true, answers: [{ name: 'x.wild.zone.example', type: 'A', ttl: 3600, data: '192.0.2.99' }],
      });
      const deep = await ask(port, transport, 'y.x.wild.zone.example', 'TXT');
      expect(deep.p.answers.map(rr)).toEqual([{ name: 'y.x.wild.zone.example', type: 'TXT', ttl: 3600, data: ['wildcard'] }]);
      const real = await ask(port, transport, 'real.wild.zone.example', 'A');
      expect(real.p.answers.map(rr)).toEqual([{ name: 'real.wild.zone.example', type: 'A', ttl: 3600, data: '192.0.2.100' }]);
      // An existing name never falls back to the wildcard, not even for a type it lacks.
      const realTxt = await ask(port, transport, 'real.wild.zone.example', 'TXT');
      expect({ rcode: realTxt.p.rcode, answers: realTxt.p.answers, authorities: realTxt.p.authorities.map(rr) }).toEqual({
        rcode: 'NOERROR', answers: [], authorities: [soa('zone.example', serial)],
      });
      const noType = await ask(port, transport, 'x.wild.zone.example', 'MX');
      expect({ rcode: noType.p.rcode, aa: noType.p.flag_aa, answers: noType.p.answers, authorities: noType.p.authorities.map(rr) }).toEqual({
        rcode: 'NOERROR', aa: true, answers: [], authorities: [soa('zone.example', serial)],
      });
      const cw = await ask(port, transport, 'anything.cw.zone.example', 'A');
      expect(cw.p.answers.map(rr)).toEqual([
        { name: 'anything.cw.zone.example', type: 'CNAME', ttl: 3600, data: 'mail.zone.example' },
        { name: 'mail.zone.example', type: 'A', ttl: 600, data: '192.0.2.25' },
      ]);
      // A wildcard at the apex answers every missing name of its zone.
      const apexWild = await ask(port, transport, 'nothing.other.example', 'A');
      expect(apexWild.p.answers.map(rr)).toEqual([{ name: 'nothing.other.example', type: 'A', ttl: 3600, data: '192.0.2.200' }]);
    });

    it('NXDOMAIN vs NODATA: both authoritative with the SOA (TTL = MINIMUM) in the authority section', async () => {
      const nx = await ask(port, transport, 'nope.zone.example', 'A');
      expect({ ...head(nx.p), answers: nx.p.answers, authorities: nx.p.authorities.map(rr) }).toEqual({
        rcode: 'NXDOMAIN', aa: true, tc: false, rd: false, ra: false, qr: true, opcode: 'QUERY', answers: [], authorities: [soa('zone.example', serial)],
      });
      const nodata = await ask(port, transport, 'mail.zone.example', 'AAAA');
      expect({ ...head(nodata.p), answers: nodata.p.answers, authorities: nodata.p.authorities.map(rr) }).toEqual({
        rcode: 'NOERROR', aa: true, tc: false, rd: false, ra: false, qr: true, opcode: 'QUERY', answers: [], authorities: [soa('zone.example', serial)],
      });
      // Empty non-terminals exist: b.c and c (from a.b.c) are NODATA, not NXDOMAIN; the wildcard's parent too.
      for (const ent of ['b.c.zone.example', 'c.zone.example', 'wild.zone.example']) {
        const r = await ask(port, transport, ent, 'A');
        expect({ ent, rcode: r.p.rcode, answers: r.p.answers, authorities: r.p.authorities.map(rr) }).toEqual({
          ent, rcode: 'NOERROR', answers: [], authorities: [soa('zone.example', serial)],
        });
      }
    });

    it('only active and deleting records are served; a record whose data does not parse is left out', async () => {
      const pending = await ask(port, transport, 'pending.zone.example', 'A');
      expect(pending.p.rcode).toBe('NXDOMAIN');
      const going = await ask(port, transport, 'going.zone.example', 'A');
      expect(going.p.answers.map(rr)).toEqual([{ name: 'going.zone.example', type: 'A', ttl: 3600, data: '192.0.2.78' }]);
      const bad = await ask(port, transport, 'bad.zone.example', 'A');
      expect({ rcode: bad.p.rcode, answers: bad.p.answers }).toEqual({ rcode: 'NXDOMAIN', answers: [] });
    });

    it('NS below the apex is a delegation: a referral without AA, with glue; DS at the cut is ours', async () => {
      for (const [name, type] of [['host.sub.zone.example', 'A'], ['sub.zone.example', 'NS'], ['sub.zone.example', 'A'], ['ns1.sub.zone.example', 'A']]) {
        const r = await ask(port, transport, name, type);
        expect({ name, ...head(r.p), answers: r.p.answers, authorities: r.p.authorities.map(rr), additionals: r.p.additionals.map(rr) }).toEqual({
          name, rcode: 'NOERROR', aa: false, tc: false, rd: false, ra: false, qr: true, opcode: 'QUERY', answers: [],
          authorities: [
            { name: 'sub.zone.example', type: 'NS', ttl: 3600, data: 'ns1.sub.zone.example' },
            { name: 'sub.zone.example', type: 'NS', ttl: 3600, data: 'ns.elsewhere.example' },
          ],
          additionals: [{ name: 'ns1.sub.zone.example', type: 'A', ttl: 3600, data: '192.0.2.53' }],
        });
      }
      const ds = await ask(port, transport, 'sub.zone.example', 'DS');
      expect({ ...head(ds.p), answers: ds.p.answers.map(rr) }).toMatchObject({
        rcode: 'NOERROR', aa: true, answers: [{ name: 'sub.zone.example', type: 'DS', ttl: 3600, data: { keyTag: 12345, algorithm: 13, digestType: 2, digest: HEX32B } }],
      });
    });

    it('a zone inside another zone of ours answers for itself; DS at its apex comes from the parent side', async () => {
      const www = await ask(port, transport, 'www.child.zone.example', 'A');
      expect(www.p.answers.map(rr)).toEqual([{ name: 'www.child.zone.example', type: 'A', ttl: 3600, data: '192.0.2.210' }]);
      const childSoa = await ask(port, transport, 'nope.child.zone.example', 'A');
      expect(childSoa.p.authorities.map(rr)).toEqual([soa('child.zone.example', 2)]);
      const ds = await ask(port, transport, 'child.zone.example', 'DS');
      expect({ rcode: ds.p.rcode, aa: ds.p.flag_aa, authorities: ds.p.authorities.map(rr) }).toEqual({
        rcode: 'NOERROR', aa: true, authorities: [soa('zone.example', serial)],
      });
    });

    it('REFUSED, without AA, for names outside our zones (and for domains without presence)', async () => {
      for (const name of ['example.org', 'nopresence.example', 'www.nopresence.example', 'example', '.', 'zone.example.org']) {
        const r = await ask(port, transport, name, 'A');
        expect({ name, ...head(r.p), answers: r.p.answers, authorities: r.p.authorities }).toEqual({
          name, rcode: 'REFUSED', aa: false, tc: false, rd: false, ra: false, qr: true, opcode: 'QUERY', answers: [], authorities: [],
        });
      }
    });

    it('names match ignoring case; the question is echoed exactly as asked', async () => {
      const { p, raw, sent } = await ask(port, transport, 'WwW.ZoNe.ExAmPlE', 'A');
      expect(p.questions).toEqual([{ name: 'WwW.ZoNe.ExAmPlE', type: 'A', class: 'IN' }]);
      expect(raw.subarray(12, sent.length)).toEqual(sent.subarray(12));
      expect(p.answers.map(rr)).toEqual([
        { name: 'WwW.ZoNe.ExAmPlE', type: 'CNAME', ttl: 3600, data: 'zone.example' },
        { name: 'zone.example', type: 'A', ttl: 3600, data: '192.0.2.1' },
      ]);
      expect(p.id).toBe(dnsPacket.decode(sent).id);
    });

    it('RD set: answered normally, RD copied, RA stays 0', async () => {
      const { p } = await ask(port, transport, 'zone.example', 'A', { rd: true });
      expect(head(p)).toEqual({ rcode: 'NOERROR', aa: true, tc: false, rd: true, ra: false, qr: true, opcode: 'QUERY' });
      expect(p.answers.map(rr)).toEqual([{ name: 'zone.example', type: 'A', ttl: 3600, data: '192.0.2.1' }]);
    });

    it('ANY answers every record set at the name', async () => {
      const { p } = await ask(port, transport, 'zone.example', 'ANY', { edns: 1232 });
      expect(p.flag_aa).toBe(true);
      expect(p.answers.map((a) => a.type)).toEqual(['SOA', 'NS', 'NS', 'A', 'AAAA', 'MX', 'MX', 'TXT', 'CAA']);
    });

    it('EDNS0: OPT in the reply only when asked with one; version > 0 gets BADVERS', async () => {
      const plain = await ask(port, transport, 'zone.example', 'A');
      expect(plain.p.additionals).toEqual([]);
      const edns = await ask(port, transport, 'zone.example', 'A', { edns: 4096 });
      expect(edns.p.additionals.map(rr)).toEqual([OPT]);
      const twoOpts = dnsPacket.encode({ type: 'query', id: 78, questions: [{ name: 'zone.example', type: 'A' }], additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232 }, { type: 'OPT', name: '.', udpPayloadSize: 1232 }] });
      const two = dnsPacket.decode((transport === 'udp' ? await udp(port, twoOpts) : (await tcp(port, [twoOpts]))[0])!);
      expect({ id: two.id, rcode: two.rcode, answers: two.answers }).toEqual({ id: 78, rcode: 'FORMERR', answers: [] });
      const v1 = dnsPacket.encode({ type: 'query', id: 77, questions: [{ name: 'zone.example', type: 'A' }], additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232, ednsVersion: 1 }] });
      const raw = transport === 'udp' ? await udp(port, v1) : (await tcp(port, [v1]))[0];
      const p = dnsPacket.decode(raw!);
      // BADVERS = 16: the upper bits in the OPT, 0 in the header.
      expect({ ...head(p), answers: p.answers, opt: p.additionals.map(rr) }).toEqual({
        rcode: 'NOERROR', aa: false, tc: false, rd: false, ra: false, qr: true, opcode: 'QUERY', answers: [], opt: [{ ...OPT, extendedRcode: 1 }],
      });
    });
  });

  describe('truncation', () => {
    const count = (p: DecodedPacket) => p.answers.length;
    it('without EDNS a UDP reply over 512 bytes is truncated: TC, no records; TCP gives the whole answer', async () => {
      const u = await ask(port, 'udp', 'some.zone.example', 'A');
      expect({ ...head(u.p), answers: u.p.answers, authorities: u.p.authorities, additionals: u.p.additionals }).toEqual({
        rcode: 'NOERROR', aa: true, tc: true, rd: false, ra: false, qr: true, opcode: 'QUERY', answers: [], authorities: [], additionals: [],
      });
      expect(u.raw.length).toBeLessThanOrEqual(512);
      const t = await ask(port, 'tcp', 'some.zone.example', 'A');
      expect({ tc: t.p.flag_tc, n: count(t.p) }).toEqual({ tc: false, n: 20 });
    });

    it('with EDNS the advertised size is respected (at least 512, at most 1232)', async () => {
      const fits = await ask(port, 'udp', 'some.zone.example', 'A', { edns: 1232 });
      expect({ tc: fits.p.flag_tc, n: count(fits.p), opt: fits.p.additionals.map(rr) }).toEqual({ tc: false, n: 20, opt: [OPT] });
      const small = await ask(port, 'udp', 'some.zone.example', 'A', { edns: 600 });
      expect({ tc: small.p.flag_tc, n: count(small.p), opt: small.p.additionals.map(rr) }).toEqual({ tc: true, n: 0, opt: [OPT] });
      const tiny = await ask(port, 'udp', 'mail.zone.example', 'A', { edns: 100 });
      expect({ tc: tiny.p.flag_tc, n: count(tiny.p) }).toEqual({ tc: false, n: 1 });
      // Larger than we ever send over UDP: still truncated at 1232, whatever 4096 says.
      const big = await ask(port, 'udp', 'many.zone.example', 'A', { edns: 4096 });
      expect({ tc: big.p.flag_tc, n: count(big.p), len: big.raw.length <= 1232 }).toEqual({ tc: true, n: 0, len: true });
      const overTcp = await ask(port, 'tcp', 'many.zone.example', 'A', { edns: 4096 });
      expect({ tc: overTcp.p.flag_tc, n: count(overTcp.p) }).toEqual({ tc: false, n: 60 });
    });
  });

  describe('malformed and unusual messages', () => {
    const header = (id: number, flags: number, qd: number, an = 0, ns = 0, ar = 0) => {
      const b = Buffer.alloc(12);
      b.writeUInt16BE(id, 0);
      b.writeUInt16BE(flags, 2);
      b.writeUInt16BE(qd, 4);
      b.writeUInt16BE(an, 6);
      b.writeUInt16BE(ns, 8);
      b.writeUInt16BE(ar, 10);
      return b;
    };
    const question = query('zone.example', 'A').subarray(12);

    it('FORMERR for no question, two questions, a cut-off question, trailing garbage in counted sections', async () => {
      const cases: Array<[string, Buffer]> = [
        ['no question', header(1, 0, 0)],
        ['two questions', Buffer.concat([header(2, 0, 2), question, question])],
        ['cut-off question', Buffer.concat([header(3, 0, 1), question.subarray(0, 5)])],
        ['answer count without answers', Buffer.concat([header(4, 0, 1, 3), question])],
        ['label longer than 63', Buffer.concat([header(5, 0, 1), Buffer.from([64]), Buffer.alloc(64, 97), Buffer.from([0, 0, 1, 0, 1])])],
      ];
      for (const [what, msg] of cases) {
        for (const transport of ['udp', 'tcp'] as const) {
          const raw = transport === 'udp' ? await udp(port, msg) : (await tcp(port, [msg]))[0];
          expect(raw, `${what} over ${transport}`).toBeTruthy();
          const p = dnsPacket.decode(raw!);
          expect({ what, id: p.id, rcode: p.rcode, qr: p.flag_qr, aa: p.flag_aa, answers: p.answers }).toEqual({
            what, id: msg.readUInt16BE(0), rcode: 'FORMERR', qr: true, aa: false, answers: [],
          });
        }
      }
    });

    it('NOTIMP for opcodes other than QUERY (NOTIFY, UPDATE, IQUERY), opcode echoed', async () => {
      for (const opcode of [1, 4, 5]) {
        const msg = Buffer.concat([header(90 + opcode, opcode << 11, 1), question]);
        const p = dnsPacket.decode((await udp(port, msg))!);
        expect({ opcode: (p.flags >> 11) & 0xf, rcode: p.rcode, qr: p.flag_qr, answers: p.answers, questions: p.questions }).toEqual({
          opcode, rcode: 'NOTIMP', qr: true, answers: [], questions: [{ name: 'zone.example', type: 'A', class: 'IN' }],
        });
      }
    });

    it('no reply to responses or to fragments shorter than a header; other classes and zone transfers are refused', async () => {
      expect(await udp(port, Buffer.concat([header(7, 0x8000, 1), question]), 300)).toBeNull();
      expect(await udp(port, Buffer.from([1, 2, 3]), 300)).toBeNull();
      for (const [name, type, klass] of [['zone.example', 'A', 'CH'], ['zone.example', 'AXFR', 'IN'], ['zone.example', 'IXFR', 'IN']]) {
        const { p } = await ask(port, 'tcp', name, type, { klass });
        expect({ type, klass, rcode: p.rcode, aa: p.flag_aa, answers: p.answers }).toEqual({ type, klass, rcode: 'REFUSED', aa: false, answers: [] });
      }
    });

    it('TCP: several queries on one connection, also when the bytes arrive one at a time', async () => {
      const msgs = [query('zone.example', 'A', { id: 11 }), query('mail.zone.example', 'A', { id: 12 }), query('nope.zone.example', 'A', { id: 13 })];
      for (const dribble of [false, true]) {
        const replies = (await tcp(port, msgs, { dribble })).map((r) => dnsPacket.decode(r));
        expect(replies.map((p) => [p.id, p.rcode, p.answers.length])).toEqual([[11, 'NOERROR', 1], [12, 'NOERROR', 1], [13, 'NXDOMAIN', 0]]);
      }
    });

    it('garbage over UDP and TCP never stops the server (fast-check)', async () => {
      // Many packets at once (replies are not awaited one by one); the pure path is fuzzed harder below.
      const packets = fc.sample(fc.uint8Array({ minLength: 0, maxLength: 300 }), 400).map((b) => Buffer.from(b));
      const sock = dgram.createSocket('udp4');
      await Promise.all(packets.map((b) => new Promise((r) => sock.send(b, port, '127.0.0.1', r))));
      sock.close();
      const frames = fc.sample(fc.uint8Array({ minLength: 0, maxLength: 200 }), 50).map((bytes) => Buffer.from(bytes));
      await Promise.all(frames.map((b) => tcp(port, [], { raw: Buffer.concat([Buffer.from([b.length >> 8, b.length & 0xff]), b]), expect: 1, timeoutMs: 200 })));
      // A frame announcing more than it sends, then closing: nothing to answer, nothing breaks.
      await tcp(port, [], { raw: Buffer.from([0x01, 0x00, 0x12, 0x34]), timeoutMs: 100 });
      const after = await ask(port, 'udp', 'zone.example', 'A');
      expect(after.p.answers.map(rr)).toEqual([{ name: 'zone.example', type: 'A', ttl: 3600, data: '192.0.2.1' }]);
    });
  });

  describe('propagation (docs/decisions/0003-dns-propagation.md)', () => {
    it('a change is answered and isApplied turns true within a bounded time, with two DNS servers on one store', async () => {
      const second = await DnsServer.start({ store: ts.store, config, listen: '127.0.0.1:0' });
      try {
        const servers = await ts.store.db.selectFrom('dns_servers').select(['id']).orderBy('id').execute();
        expect(servers.map((s) => s.id).sort()).toEqual([dns.id, second.id].sort());
        const before = (await ask(port, 'udp', 'zone.example', 'SOA')).p.answers[0].data.serial as number;
        const started = Date.now();
        const changeId = await addRecords(ts.store, 'zone.example', [['fresh', 'A', '192.0.2.150']]);
        await until(() => isApplied(ts.store, changeId), 2000);
        const elapsed = Date.now() - started;
        // Both servers answer it now (isApplied promised it) and the serial grew.
        for (const p of [port, second.port!]) {
          const r = await ask(p, 'udp', 'fresh.zone.example', 'A');
          expect(r.p.answers.map(rr)).toEqual([{ name: 'fresh.zone.example', type: 'A', ttl: 3600, data: '192.0.2.150' }]);
          const s = await ask(p, 'udp', 'zone.example', 'SOA');
          expect(s.p.answers[0].data.serial).toBe(before + 1);
        }
        expect(elapsed).toBeLessThan(2000);
        const rows = await ts.store.db.selectFrom('dns_servers').select(['id', 'applied_change_id']).execute();
        expect(rows.every((r) => r.applied_change_id >= changeId)).toBe(true);
      } finally {
        await second.stop();
      }
      // A clean stop removes the row: nobody waits for a server that is gone.
      const left = await ts.store.db.selectFrom('dns_servers').select('id').execute();
      expect(left.map((r) => r.id)).toEqual([dns.id]);
    });

    it('deleting: served while deleting, gone after the row is deleted; presence removed → REFUSED, added → served', async () => {
      const id = await change(ts.store, 'zone.example', (db) =>
        db.updateTable('dns_records').set({ state: 'deleting' }).where('domain', '=', 'zone.example').where('name', '=', 'fresh').execute(),
      );
      await until(() => isApplied(ts.store, id));
      expect((await ask(port, 'udp', 'fresh.zone.example', 'A')).p.answers.length).toBe(1);
      const gone = await change(ts.store, 'zone.example', (db) =>
        db.deleteFrom('dns_records').where('domain', '=', 'zone.example').where('name', '=', 'fresh').execute(),
      );
      await until(() => isApplied(ts.store, gone));
      expect((await ask(port, 'udp', 'fresh.zone.example', 'A')).p.rcode).toBe('NXDOMAIN');

      await addDomain(ts.store, cust, 'new.example');
      const added = await addRecords(ts.store, 'new.example', [['', 'A', '192.0.2.160']]);
      await until(() => isApplied(ts.store, added));
      expect((await ask(port, 'udp', 'new.example', 'A')).p.answers.map(rr)).toEqual([{ name: 'new.example', type: 'A', ttl: 3600, data: '192.0.2.160' }]);
      const removed = await change(ts.store, 'new.example', (db) => db.updateTable('domains').set({ has_presence: 0 }).where('name', '=', 'new.example').execute());
      await until(() => isApplied(ts.store, removed));
      expect((await ask(port, 'udp', 'new.example', 'A')).p.rcode).toBe('REFUSED');
    });

    it('signals make changes visible without waiting for the poll (in-process on SQLite, NOTIFY on PostgreSQL)', async () => {
      const slow = await DnsServer.start({ store: ts.store, config: testConfig({ ...ENV, DNS_POLL_MS: '600000' }), listen: '127.0.0.1:0' });
      try {
        const id = await addRecords(ts.store, 'zone.example', [['signal', 'TXT', 'fast']]);
        const ms = await until(() => slow.appliedChangeId >= id, 1500);
        expect(ms).toBeLessThan(1500);
        expect((await ask(slow.port!, 'udp', 'signal.zone.example', 'TXT')).p.answers.map(rr)).toEqual([
          { name: 'signal.zone.example', type: 'TXT', ttl: 3600, data: ['fast'] },
        ]);
      } finally {
        await slow.stop();
      }
    });

    it('polling alone finds a change nobody signalled', async () => {
      const { id } = await ts.store.db.transaction().execute(async (trx) => {
        const now = new Date().toISOString();
        await trx.insertInto('dns_records').values({ domain: 'zone.example', name: 'polled', record_type: 'A', data: '192.0.2.170', ttl: 3600, tag: 'custom', state: 'active', created_at: now, updated_at: now }).execute();
        // What recordChange does, minus the signals.
        return trx.insertInto('dns_changes').values({ domain: 'zone.example', created_at: now }).returning('id').executeTakeFirstOrThrow();
      });
      await until(() => dns.appliedChangeId >= id, 2000);
      expect((await ask(port, 'udp', 'polled.zone.example', 'A')).p.answers.length).toBe(1);
    });

    it('a stale server (no heartbeat within DNS_SERVER_STALE_MS) is ignored; one live but behind is waited for', async () => {
      const last = dns.appliedChangeId;
      await ts.store.db.insertInto('dns_servers').values({ id: 'stale-one', applied_change_id: 0, heartbeat_at: new Date(Date.now() - 60_000).toISOString(), started_at: new Date(Date.now() - 120_000).toISOString() }).execute();
      expect(await isApplied(ts.store, last)).toBe(true);
      await ts.store.db.insertInto('dns_servers').values({ id: 'live-behind', applied_change_id: 0, heartbeat_at: new Date(Date.now() + 60_000).toISOString(), started_at: new Date().toISOString() }).execute();
      expect(await isApplied(ts.store, last)).toBe(false);
      await ts.store.db.deleteFrom('dns_servers').where('id', 'in', ['stale-one', 'live-behind']).execute();
      expect(await isApplied(ts.store, last)).toBe(true);
      expect(await isApplied(ts.store, last + 1000)).toBe(false);
    });

    it('no live server → false, even for change 0', async () => {
      const other = await freshStore(engine);
      try {
        expect(await isApplied(other.store, 0)).toBe(false);
        await other.store.db.insertInto('dns_servers').values({ id: 'old', applied_change_id: 99, heartbeat_at: new Date(Date.now() - 10_000).toISOString(), started_at: new Date().toISOString() }).execute();
        expect(await isApplied(other.store, 1)).toBe(false);
        expect(await isApplied(other.store, 1, { staleMs: 60_000 })).toBe(true);
      } finally {
        await other.drop();
      }
    });

    it('a server that loaded its zones replays only what came after (applied id = newest change at start)', async () => {
      const last = (await ts.store.db.selectFrom('dns_changes').select((eb) => eb.fn.max('id').as('id')).executeTakeFirstOrThrow()).id;
      const late = await DnsServer.start({ store: ts.store, config, listen: '127.0.0.1:0' });
      try {
        expect(late.appliedChangeId).toBe(Number(last));
        expect((await ask(late.port!, 'tcp', 'signal.zone.example', 'TXT')).p.answers.length).toBe(1);
      } finally {
        await late.stop();
      }
    });

    it.runIf(engine === 'postgres')('PostgreSQL: concurrent changes are all applied, none skipped (ids commit in order)', async () => {
      // Without the order lock in recordChange this fails: a reader sees a later id commit first.
      for (let round = 0; round < 3; round++) {
        const names = Array.from({ length: 40 }, (_, i) => `par${round}-${i}`);
        const ids = await Promise.all(names.map((n, i) => addRecords(ts.store, 'zone.example', [[n, 'A', `192.0.3.${i + 1}`]])));
        await until(() => isApplied(ts.store, Math.max(...ids)), 3000);
        for (const n of names) expect((await ask(port, 'udp', `${n}.zone.example`, 'A')).p.answers.length, n).toBe(1);
      }
    });
  });

  requirable(digMissing)('with the real dig', () => {
    const dig = async (...args: string[]) => (await run('dig', ['@127.0.0.1', '-p', String(port), '+time=2', '+tries=1', ...args])).stdout;
    const status = (out: string) => /status: ([A-Z]+)/.exec(out)?.[1];
    const flags = (out: string) => /;; flags: ([a-z ]+);/.exec(out)?.[1].trim().split(' ').sort().join(' ');
    const section = (out: string, name: string) => {
      const m = new RegExp(`;; ${name} SECTION:\\n([\\s\\S]*?)(?:\\n\\n|$)`).exec(out);
      return m ? m[1].split('\n').map((l) => l.split(/\s+/).join(' ')) : [];
    };

    it('answers A with aa, and the +short forms of every type', async () => {
      const out = await dig('zone.example', 'A', '+norecurse');
      expect({ status: status(out), flags: flags(out), answer: section(out, 'ANSWER') }).toEqual({
        status: 'NOERROR', flags: 'aa qr', answer: ['zone.example. 3600 IN A 192.0.2.1'],
      });
      const short = async (name: string, type: string) => (await dig(name, type, '+norecurse', '+short')).trim().split('\n');
      expect(await short('zone.example', 'MX')).toEqual(['10 mail.zone.example.', '20 mail2.zone.example.']);
      expect(await short('zone.example', 'CAA')).toEqual(['0 issue "letsencrypt.org"']);
      expect(await short('zone.example', 'SOA')).toEqual([expect.stringMatching(/^ns1\.dns\.test\. hostmaster\.dns\.test\. \d+ 3600 600 1209600 300$/)]);
      expect(await short('_sip._tcp.zone.example', 'SRV')).toEqual(['0 5 5060 sip.zone.example.']);
      expect(await short('sub.zone.example', 'DS')).toEqual([`12345 13 2 ${HEX32B.slice(0, 56)} ${HEX32B.slice(56)}`]);
      expect(await short('_443._tcp.www2.zone.example', 'TLSA')).toEqual([`3 1 1 ${HEX32.slice(0, 56)} ${HEX32.slice(56)}`]);
      expect(await short('zone.example', 'AAAA')).toEqual(['2001:db8::1']);
      expect(await short('www.zone.example', 'A')).toEqual(['zone.example.', '192.0.2.1']);
      expect(await short('x.wild.zone.example', 'A')).toEqual(['192.0.2.99']);
    });

    it('long TXT is split into 255-byte strings', async () => {
      const out = (await dig('_acme-challenge.zone.example', 'TXT', '+norecurse', '+short')).trim();
      expect(out).toBe('"token-value"');
      const long = (await dig('long.zone.example', 'TXT', '+norecurse', '+short')).trim();
      const strings = long.match(/"[^"]*"/g)!;
      expect(strings).toHaveLength(3);
      expect(strings[0]).toBe(`"${'a'.repeat(250)}\\195\\188${'b'.repeat(3)}"`);
    });

    it('NXDOMAIN and NODATA with the SOA in AUTHORITY; REFUSED outside our zones', async () => {
      const nx = await dig('nope.zone.example', 'A', '+norecurse');
      expect({ status: status(nx), flags: flags(nx), authority: section(nx, 'AUTHORITY') }).toEqual({
        status: 'NXDOMAIN', flags: 'aa qr', authority: [expect.stringMatching(/^zone\.example\. 300 IN SOA ns1\.dns\.test\. hostmaster\.dns\.test\. \d+ 3600 600 1209600 300$/)],
      });
      const nodata = await dig('mail.zone.example', 'AAAA', '+norecurse');
      expect({ status: status(nodata), answer: section(nodata, 'ANSWER'), authority: section(nodata, 'AUTHORITY').length }).toEqual({ status: 'NOERROR', answer: [], authority: 1 });
      const refused = await dig('example.org', 'A', '+norecurse');
      expect({ status: status(refused), flags: flags(refused) }).toEqual({ status: 'REFUSED', flags: 'qr' });
    });

    it('a referral for a delegated name; RD set is answered (dig notes that recursion is not available)', async () => {
      const ref = await dig('host.sub.zone.example', 'A', '+norecurse');
      expect({ status: status(ref), flags: flags(ref), authority: section(ref, 'AUTHORITY'), additional: section(ref, 'ADDITIONAL').filter((l) => !l.startsWith(';')) }).toEqual({
        status: 'NOERROR', flags: 'qr',
        authority: ['sub.zone.example. 3600 IN NS ns1.sub.zone.example.', 'sub.zone.example. 3600 IN NS ns.elsewhere.example.'],
        additional: ['ns1.sub.zone.example. 3600 IN A 192.0.2.53'],
      });
      const rd = await dig('zone.example', 'A');
      expect({ status: status(rd), flags: flags(rd), warns: rd.includes('recursion requested but not available') }).toEqual({ status: 'NOERROR', flags: 'aa qr rd', warns: true });
    });

    it('truncation: +ignore shows TC; dig retries over TCP by itself and gets everything; +tcp directly', async () => {
      const tc = await dig('some.zone.example', 'A', '+norecurse', '+noedns', '+ignore');
      expect(flags(tc)).toBe('aa qr tc');
      const retried = await dig('some.zone.example', 'A', '+norecurse', '+noedns');
      expect(retried).toContain('Truncated, retrying in TCP mode');
      expect(section(retried, 'ANSWER')).toHaveLength(20);
      const viaTcp = await dig('many.zone.example', 'A', '+norecurse', '+tcp');
      expect(section(viaTcp, 'ANSWER')).toHaveLength(60);
      const edns = await dig('some.zone.example', 'A', '+norecurse', '+bufsize=1232');
      expect({ flags: flags(edns), n: section(edns, 'ANSWER').length, opt: /EDNS: version: 0, flags:; udp: 1232/.test(edns) }).toEqual({ flags: 'aa qr', n: 20, opt: true });
    });

    it('a record created in the store is answered by dig within a second of isApplied', async () => {
      const id = await addRecords(ts.store, 'zone.example', [['_acme-challenge.www', 'TXT', 'dig-sees-this']]);
      await until(() => isApplied(ts.store, id), 1000);
      expect((await dig('_acme-challenge.www.zone.example', 'TXT', '+norecurse', '+short')).trim()).toBe('"dig-sees-this"');
    });
  });
});

// ---- pure parts (no store) ---------------------------------------------------------------------

describe('DNS settings and listening', () => {
  it('DNS_* settings: defaults, an e-mail hostmaster, and every problem reported', () => {
    expect(testConfig({ DNS_LISTEN: '127.0.0.1:5300' }).dns).toEqual({
      nameservers: ['ns1.hostplane.test', 'ns2.hostplane.test'], hostmaster: 'hostmaster.hostplane.test', pollMs: 100, heartbeatMs: 1000, serverStaleMs: 5000,
    });
    expect(testConfig({ DNS_NAMESERVERS: 'A.Example.NET., b.example.net', DNS_HOSTMASTER: 'dns.admin@example.net' }).dns).toMatchObject({
      nameservers: ['a.example.net', 'b.example.net'], hostmaster: 'dns\\.admin.example.net',
    });
    expect(() => testConfig({ DNS_NAMESERVERS: 'bad..name', DNS_HOSTMASTER: 'a b', DNS_HEARTBEAT_MS: '3000' })).toThrow(
      /DNS_NAMESERVERS: "bad\.\.name" is not a host name\n  - DNS_HOSTMASTER: "a b" is not a mailbox name or address\n  - DNS_SERVER_STALE_MS: must be at least twice DNS_HEARTBEAT_MS/,
    );
  });

  it('listens on IPv6 too; SOA RNAME with a dotted local part goes out as one label', async () => {
    const ts = await freshStore('sqlite');
    const c = await customer(ts.store);
    await addDomain(ts.store, c, 'v6.example');
    const dns = await DnsServer.start({ store: ts.store, config: testConfig({ DNS_HOSTMASTER: 'dns.admin@example.net' }), listen: '[::1]:0' });
    try {
      const reply = await new Promise<Buffer>((resolve) => {
        const sock = dgram.createSocket('udp6');
        sock.on('message', (m) => {
          sock.close();
          resolve(m);
        });
        sock.send(query('v6.example', 'SOA'), dns.port!, '::1');
      });
      expect(dnsPacket.decode(reply).answers[0].data).toMatchObject({ mname: 'ns1.hostplane.test', rname: 'dns\\.admin.example.net' });
      // On the wire: the first label is "dns.admin" (9 bytes), not "dns" + "admin".
      expect(reply.includes(Buffer.from('\x09dns.admin\x07example\x03net\x00', 'latin1'))).toBe(true);
    } finally {
      await dns.stop();
      await ts.drop();
    }
  });
});

describe('DNS data and packet handling without sockets', () => {
  const settings = { nameservers: ['ns1.dns.test'], hostmaster: 'hostmaster.dns.test', ttl: 3600, refresh: 3600, retry: 600, expire: 1209600, minimum: 300 };
  const zones = new ZoneSet();
  zones.set(Zone.build('zone.example', 5, ZONE.filter((r) => !r[3]?.state || r[3].state !== 'pending').map(([name, record_type, data, o]) => ({ name, record_type, data, ttl: o?.ttl ?? 3600 })), settings));

  it('presentation forms parse as the wire expects', () => {
    expect(toAnswer({ name: '', record_type: 'MX', data: '0 .', ttl: 300 }, 'zone.example')).toEqual({
      type: 'MX', class: 'IN', name: 'zone.example', ttl: 300, data: { preference: 0, exchange: '' },
    });
    expect(toAnswer({ name: '*.Wild', record_type: 'CNAME', data: 'Target.Example.', ttl: 300 }, 'zone.example')).toMatchObject({ name: '*.wild.zone.example', data: 'target.example' });
    expect(parseCaaValue('"a\\"b\\\\c\\065"')).toBe('a"b\\cA');
    expect(parseCaaValue('bare')).toBe('bare');
    expect(splitTxt('').map((b) => b.length)).toEqual([0]);
    expect(splitTxt('x'.repeat(510)).map((b) => b.length)).toEqual([255, 255]);
    expect(parseName('.', { root: true })).toBe('');
    for (const [type, data] of [['A', '1.2.3'], ['A', '01.2.3.4'], ['AAAA', 'fe80::1%eth0'], ['MX', '70000 mx.example'], ['SRV', '1 2 3'], ['CAA', '0 issue "open'], ['DS', '1 2 3 ABC'], ['TLSA', '3 1 1 zz'], ['CNAME', 'a..b'], ['CNAME', 'a b'], ['NS', `${'x'.repeat(64)}.example`], ['HINFO', 'x']]) {
      expect(() => toAnswer({ name: 'x', record_type: type, data, ttl: 300 }, 'zone.example'), `${type} ${data}`).toThrow();
    }
    expect(() => toAnswer({ name: 'a.*', record_type: 'A', data: '192.0.2.1', ttl: 300 }, 'zone.example')).toThrow();
  });

  it('every reply to arbitrary bytes is null or a decodable response with the same id (fast-check)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 512 }), fc.constantFrom('udp' as const, 'tcp' as const), (bytes, transport) => {
        const msg = Buffer.from(bytes);
        const out = answerQuery(zones, msg, { transport });
        if (out === null) return;
        const p = dnsPacket.decode(out);
        expect(p.id).toBe(msg.readUInt16BE(0));
        expect(p.flag_qr).toBe(true);
        if (transport === 'udp') expect(out.length).toBeLessThanOrEqual(1232);
      }),
      { numRuns: 3000 },
    );
  });

  it('mutated valid queries never throw and answer within the limits (fast-check)', () => {
    const seeds = [
      query('zone.example', 'A', { edns: 1232 }),
      query('x.wild.zone.example', 'TXT'),
      query('many.zone.example', 'A'),
      query('host.sub.zone.example', 'A', { rd: true }),
    ];
    fc.assert(
      fc.property(
        fc.constantFrom(...seeds),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 6 }),
        fc.option(fc.nat()),
        (seed, flips, cut) => {
          const msg = Buffer.from(seed);
          for (const [i, v] of flips) msg[i % msg.length] = v;
          const m = cut === null ? msg : msg.subarray(0, cut % (msg.length + 1));
          const out = answerQuery(zones, m, { transport: 'udp' });
          if (out) expect(dnsPacket.decode(out).flag_qr).toBe(true);
        },
      ),
      { numRuns: 3000 },
    );
  });
});
