// DNS settings and listening (issue 3 item 3; docs/decisions/0003-dns-propagation.md): the DNS_* settings
// with their defaults and every problem reported together, and a server listening on IPv6 whose SOA
// RNAME keeps a dotted local part as one label on the wire.
import crypto from 'node:crypto';
import dgram from 'node:dgram';
import dnsPacket from 'dns-packet';
import { describe, expect, it } from 'vitest';
import { freshStore, testConfig } from '../../helpers/app.js';
import { addDomain, customer, query, udp } from '../../helpers/dns.js';
import { DnsServer } from '../../../src/provisioning/dns/server.js';

describe('DNS settings and listening', () => {
  it('DNS_* settings: defaults, an e-mail hostmaster, and every problem reported', () => {
    expect(testConfig({ DNS_LISTEN: '127.0.0.1:5300' }).dns).toEqual({
      nameservers: ['ns1.hostplane.test', 'ns2.hostplane.test'], hostmaster: 'hostmaster.hostplane.test', pollMs: 100, heartbeatMs: 1000, serverStaleMs: 5000, secondaryTimeoutMs: 60000,
      catalogZone: 'catalog.hostplane.invalid',
    });
    expect(testConfig({ DNS_CATALOG_ZONE: 'OFF' }).dns.catalogZone).toBe(null);
    expect(testConfig({ DNS_CATALOG_ZONE: 'Zones.Example.NET.' }).dns.catalogZone).toBe('zones.example.net');
    expect(testConfig({ DNS_NAMESERVERS: 'A.Example.NET., b.example.net', DNS_HOSTMASTER: 'dns.admin@example.net' }).dns).toMatchObject({
      nameservers: ['a.example.net', 'b.example.net'], hostmaster: 'dns\\.admin.example.net',
    });
    expect(() => testConfig({ DNS_NAMESERVERS: 'bad..name', DNS_HOSTMASTER: 'a b', DNS_HEARTBEAT_MS: '3000', DNS_CATALOG_ZONE: 'catalog' })).toThrow(
      /DNS_NAMESERVERS: "bad\.\.name" is not a host name\n  - DNS_HOSTMASTER: "a b" is not a mailbox name or address\n  - DNS_CATALOG_ZONE: "catalog" is not a zone name \(at least two labels\) or off\n  - DNS_SERVER_STALE_MS: must be at least twice DNS_HEARTBEAT_MS/,
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

  it('the catalog zone lists every zone (RFC 9432); a domain named like the catalog is not served in its place', async () => {
    const ts = await freshStore('sqlite');
    const c = await customer(ts.store);
    await addDomain(ts.store, c, 'one.example');
    await addDomain(ts.store, c, 'catalog.zones.example');
    const dns = await DnsServer.start({ store: ts.store, config: testConfig({ DNS_CATALOG_ZONE: 'catalog.zones.example' }), listen: '127.0.0.1:0' });
    try {
      const ask = (name: string, type: string) => udp(dns.port!, query(name, type)).then((r) => dnsPacket.decode(r!));
      const soa = await ask('catalog.zones.example', 'SOA');
      expect(soa.answers[0].data).toMatchObject({ mname: 'invalid' });
      expect((await ask('version.catalog.zones.example', 'TXT')).answers.map((a) => Buffer.concat(a.data).toString())).toEqual(['2']);
      // The zones it lists: one.example, not the domain that has the catalog's name.
      const id = crypto.createHash('sha1').update('one.example').digest('hex');
      expect((await ask(`${id}.zones.catalog.zones.example`, 'PTR')).answers.map((a) => a.data)).toEqual(['one.example']);
      const other = crypto.createHash('sha1').update('catalog.zones.example').digest('hex');
      expect((await ask(`${other}.zones.catalog.zones.example`, 'PTR')).rcode).toBe('NXDOMAIN');
    } finally {
      await dns.stop();
      await ts.drop();
    }
  });
});
