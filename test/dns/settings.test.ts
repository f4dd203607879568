// DNS settings and listening (docs/decisions/0003-dns-propagation.md): the DNS_* settings
// with their defaults and every problem reported together, and a server listening on IPv6 whose SOA
// RNAME keeps a dotted local part as one label on the wire; DNS_LISTEN naming a host, and a forged
// datagram from port 0 that cannot be answered.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import dgram from 'node:dgram';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import dnsPacket from 'dns-packet';
import { describe, expect, it } from 'vitest';
import { freshStore, testConfig } from '../helpers/app.js';
import { addDomain, addRecords, customer, query, tcp, udp } from '../helpers/dns.js';
import { requirable } from '../helpers/required.js';
import { DnsServer } from '../../src/dns/server.js';
import { signRequest, verifyResponses } from '../../src/dns/tsig.js';
import type { TsigKey } from '../../src/dns-wire.js';
import { UDP_BATCH_ADDON, bindUdp, udpBatchAddon } from '../../src/dns/udp.js';
import { DnsSecondariesService } from '../../src/admin/dns-secondaries.service.js';
import type { Store } from '../../src/db/index.js';
import { testKey } from '../helpers/secondaries.js';
import { pollUntil } from '../helpers/wait.js';

/** Sends one UDP datagram from 127.0.0.1 port 0 to argv[1] with argv[2] (hex) as payload, through a raw socket. */
const RAW_UDP_FROM_PORT_0 = `
import socket, struct, sys
port, payload = int(sys.argv[1]), bytes.fromhex(sys.argv[2])
udp = struct.pack('!HHHH', 0, port, 8 + len(payload), 0) + payload
ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(udp), 1, 0, 64, socket.IPPROTO_UDP, 0, socket.inet_aton('127.0.0.1'), socket.inet_aton('127.0.0.1'))
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
s.sendto(ip + udp, ('127.0.0.1', 0))
`;
const rootRaw = requirable(process.getuid?.() === 0 ? null : 'sending a forged datagram needs a raw socket (root)');

/** Sends `n` SOA queries (ids 1…n) at once from one socket; the ids of the answers that came back, sorted. */
async function burst(port: number, n: number): Promise<number[]> {
  const sock = dgram.createSocket('udp4');
  const ids: number[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${ids.length} of ${n} answers`)), 5000);
      sock.on('message', (m) => {
        const p = dnsPacket.decode(m);
        if (p.answers?.[0]?.type === 'SOA') ids.push(p.id!);
        if (ids.length === n) {
          clearTimeout(timer);
          resolve();
        }
      });
      sock.bind(0, '127.0.0.1', () => {
        for (let id = 1; id <= n; id++) sock.send(query('burst.example', 'SOA', { id }), port, '127.0.0.1');
      });
    });
  } finally {
    sock.close();
  }
  return ids.sort((a, b) => a - b);
}

/** A DNS server on `listen` over a fresh SQLite store with `domains` (presence), for the duration of `use`. */
async function withServer(domains: string[], env: Record<string, string>, listen: string, use: (dns: DnsServer, store: Store, customerId: number) => Promise<void>, prepare?: (store: Store) => Promise<unknown>) {
  const ts = await freshStore('sqlite');
  const c = await customer(ts.store);
  for (const d of domains) await addDomain(ts.store, c, d);
  await prepare?.(ts.store);
  const dns = await DnsServer.start({ store: ts.store, config: testConfig(env), listen });
  try {
    await use(dns, ts.store, c);
  } finally {
    await dns.stop();
    await ts.drop();
  }
}

describe('DNS settings and listening', () => {
  it('DNS_* settings: defaults, an e-mail hostmaster, and every problem reported', () => {
    expect(testConfig({ DNS_LISTEN: '127.0.0.1:5300' }).dns).toEqual({
      nameservers: ['ns1.hostplane.test', 'ns2.hostplane.test'], hostmaster: 'hostmaster.hostplane.test', pollMs: 100, heartbeatMs: 1000, serverStaleMs: 5000, secondaryTimeoutMs: 60000,
      catalogZone: 'catalog.hostplane.invalid', udpBatch: 'auto', dnssec: {
        default: false, algorithm: 13, validityS: 1209600, refreshS: 604800, parent: [], parentCheckS: 60, propagationS: 3600, dsTtlS: 86400, rolloverDays: 0,
      },
    });
    // The DNSSEC lifecycle (docs/decisions/0032-dnssec.md "Key lifecycle").
    expect(testConfig({ DNS_DNSSEC_PARENT: '192.0.2.53:53, [2001:db8::53]:5353', DNS_DNSSEC_ROLLOVER_DAYS: '90' }).dns.dnssec).toMatchObject({
      parent: [{ host: '192.0.2.53', port: 53 }, { host: '2001:db8::53', port: 5353 }], rolloverDays: 90,
    });
    expect(() => testConfig({ DNS_DNSSEC_PARENT: 'ns.example', DNS_DNSSEC_PROPAGATION_S: '-1' })).toThrow(
      /DNS_DNSSEC_PARENT: "ns\.example" is not host:port\n  - DNS_DNSSEC_PROPAGATION_S: must be 0 or more/,
    );
    expect(testConfig({ DNS_UDP_BATCH: 'off' }).dns.udpBatch).toBe('off');
    expect(() => testConfig({ DNS_UDP_BATCH: 'yes', LOG_LEVEL: 'loud' })).toThrow(
      /DNS_UDP_BATCH: must be one of auto, on, off\n  - LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent$/,
    );
    expect(testConfig({ DNS_CATALOG_ZONE: 'OFF' }).dns.catalogZone).toBe(null);
    expect(testConfig({ DNS_CATALOG_ZONE: 'Zones.Example.NET.' }).dns.catalogZone).toBe('zones.example.net');
    expect(testConfig({ DNS_NAMESERVERS: 'A.Example.NET., b.example.net', DNS_HOSTMASTER: 'dns.admin@example.net' }).dns).toMatchObject({
      nameservers: ['a.example.net', 'b.example.net'], hostmaster: 'dns\\.admin.example.net',
    });
    expect(() => testConfig({ DNS_NAMESERVERS: 'bad..name', DNS_HOSTMASTER: 'a b', DNS_HEARTBEAT_MS: '3000', DNS_CATALOG_ZONE: 'catalog' })).toThrow(
      /DNS_NAMESERVERS: "bad\.\.name" is not a host name\n  - DNS_HOSTMASTER: "a b" is not a mailbox name or address\n  - DNS_CATALOG_ZONE: "catalog" is not a zone name \(at least two labels\) or off\n  - DNS_SERVER_STALE_MS: must be at least twice DNS_HEARTBEAT_MS/,
    );
  });

  // UDP is read by the native batch reader (DNS_UDP_BATCH auto/on) or by node's dgram (off):
  // both must answer alike.
  for (const [setting, kind] of [['on', 'batch'], ['off', 'dgram']] as const) {
    const udpEnv = { DNS_UDP_BATCH: setting };
    const addon = udpBatchAddon();
    requirable(kind === 'batch' && addon instanceof Error ? addon.message : null)(`UDP read by ${kind} (DNS_UDP_BATCH=${setting})`, () => {
    it('listens on IPv6 too; SOA RNAME with a dotted local part goes out as one label', async () => {
      await withServer(['v6.example'], { ...udpEnv, DNS_HOSTMASTER: 'dns.admin@example.net' }, '[::1]:0', async (dns) => {
          expect(dns.udpKind).toBe(kind);
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
      });
    });

    it('DNS_LISTEN may name a host: it is looked up once (IPv4), and answers come from that address over UDP and TCP', async () => {
      await withServer(['named.example'], udpEnv, 'localhost:0', async (dns) => {
        expect(dns.host).toBe('localhost');
        const viaUdp = await udp(dns.port!, query('named.example', 'SOA'));
        expect(dnsPacket.decode(viaUdp!).answers.map((a) => a.type)).toEqual(['SOA']);
        const [viaTcp] = await tcp(dns.port!, [query('named.example', 'SOA')], { expect: 1 });
        expect(dnsPacket.decode(viaTcp).answers.map((a) => a.type)).toEqual(['SOA']);
      });
    });

    rootRaw('a datagram from source port 0', () => {
      it('cannot be answered and does not stop the server (a forged packet)', async () => {
        await withServer(['port0.example'], udpEnv, '127.0.0.1:0', async (dns) => {
          // An IPv4 + UDP packet from 127.0.0.1 port 0, written by a raw socket (root).
          const q = query('port0.example', 'SOA').toString('hex');
          execFileSync('python3', ['-c', RAW_UDP_FROM_PORT_0, String(dns.port), q]);
          await new Promise((r) => setTimeout(r, 200));
          const after = await udp(dns.port!, query('port0.example', 'SOA'));
          expect(dnsPacket.decode(after!).answers.map((a) => a.type)).toEqual(['SOA']);
        });
      });
    });


      it('a signed SOA query (a secondary checking its serial) gets a signed answer, sent when it is made', async () => {
        const key = testKey('udp-key');
        const tkey: TsigKey = { name: key.name, algorithm: 'hmac-sha256', secret: Buffer.from(key.secret, 'base64') };
        const register = (store: Store) => new DnsSecondariesService(store.db).add({ name: 'udp', address: '127.0.0.1:9', keyFileText: key.bindFile });
        await withServer(['signed.example'], udpEnv, '127.0.0.1:0', async (dns) => {
          expect(dns.udpKind).toBe(kind);
          const signed = signRequest(query('signed.example', 'SOA'), tkey);
          const reply = (await udp(dns.port!, signed.message))!;
          expect(verifyResponses([reply], tkey, signed.mac)).toBe(true);
          expect(dnsPacket.decode(reply).answers.map((a) => a.type)).toEqual(['SOA']);
        }, register);
      });

      it('the port is free again as soon as the socket is closed (a restart in the same process binds it)', async () => {
        const errors: unknown[] = [];
        const first = await bindUdp('127.0.0.1', 0, 4, setting, () => null, (e) => errors.push(e));
        expect(first.kind).toBe(kind);
        await first.close();
        // Bound again in the same turn of the loop: the native reader binds synchronously.
        const second = await bindUdp('127.0.0.1', first.port, 4, setting, (msg) => Buffer.from(msg), (e) => errors.push(e));
        try {
          expect(second.port).toBe(first.port);
          expect(await udp(second.port, query('echo.example', 'A', { id: 7 }))).toEqual(query('echo.example', 'A', { id: 7 }));
        } finally {
          await second.close();
        }
        expect(errors).toEqual([]);
      });

      if (kind === 'batch') {
        it('a worker thread that ends with a socket open closes it and the process goes on', async () => {
          const code = `
            const u = require(${JSON.stringify(UDP_BATCH_ADDON)});
            const s = u.open(4, '127.0.0.1', 0, new Uint8Array(u.BATCH * u.IN_SLOT), new Uint8Array(u.BATCH * u.OUT_SLOT), new Int32Array(u.BATCH * 4), () => {});
            require('node:worker_threads').parentPort.postMessage(u.port(s));`;
          const worker = new Worker(code, { eval: true });
          const [port] = (await once(worker, 'message')) as [number];
          await worker.terminate();
          // Not aborted ("uv_loop_close() while having open handles"), and the port is free.
          const again = await bindUdp('127.0.0.1', port, 4, setting, () => null, () => {});
          expect(again.port).toBe(port);
          await again.close();
        });
      }

      it('answers a burst of queries sent at once, each to its own id (several read and sent per system call)', async () => {
        await withServer(['burst.example'], udpEnv, '127.0.0.1:0', async (dns) => {
          expect(dns.udpKind).toBe(kind);
          const ids = await burst(dns.port!, 100);
          expect(ids).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
        });
      });
    });
  }

  it('the catalog zone lists every zone (RFC 9432); a domain named like the catalog is not served in its place', async () => {
    await withServer(['one.example', 'catalog.zones.example'], { DNS_CATALOG_ZONE: 'catalog.zones.example' }, '127.0.0.1:0', async (dns) => {
      const ask = (name: string, type: string) => udp(dns.port!, query(name, type)).then((r) => dnsPacket.decode(r!));
      const soa = await ask('catalog.zones.example', 'SOA');
      expect(soa.answers[0].data).toMatchObject({ mname: 'invalid' });
      expect((await ask('version.catalog.zones.example', 'TXT')).answers.map((a) => Buffer.concat(a.data).toString())).toEqual(['2']);
      // The zones it lists: one.example, not the domain that has the catalog's name.
      const id = crypto.createHash('sha1').update('one.example').digest('hex');
      expect((await ask(`${id}.zones.catalog.zones.example`, 'PTR')).answers.map((a) => a.data)).toEqual(['one.example']);
      const other = crypto.createHash('sha1').update('catalog.zones.example').digest('hex');
      expect((await ask(`${other}.zones.catalog.zones.example`, 'PTR')).rcode).toBe('NXDOMAIN');
    });
  });

  it('the catalog of the first domain has a higher serial than the empty catalog before it, so a secondary that holds the empty one transfers it', async () => {
    await withServer([], {}, '127.0.0.1:0', async (dns, store, c) => {
      const serial = async () => (dnsPacket.decode((await udp(dns.port!, query('catalog.hostplane.invalid', 'SOA')))!).answers[0].data as { serial: number }).serial;
      const empty = await serial();
      // The domain and its first change, as the API's jobs record them.
      await addDomain(store, c, 'first.example');
      await addRecords(store, 'first.example', [['www', 'A', '192.0.2.1']]);
      const id = crypto.createHash('sha1').update('first.example').digest('hex');
      const listed = await pollUntil(() => udp(dns.port!, query(`${id}.zones.catalog.hostplane.invalid`, 'PTR')), (r) => dnsPacket.decode(r!).answers.length === 1, 'the catalog lists first.example', 5000);
      expect(dnsPacket.decode(listed!).answers[0].data).toBe('first.example');
      expect(await serial()).toBeGreaterThan(empty);
    });
  });
});
