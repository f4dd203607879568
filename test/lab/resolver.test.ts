// The lab's resolver (decision 0018 "The lab"), its script run on loopback without root: names
// under lab.test answered from plan.ts, authoritatively; every other name relayed to the upstream
// server (hostplane's DNS in the lab, a fake one here) over the client's transport, SERVFAIL when
// the upstream stays silent. The lab test checks it again on the bridge address.
import { spawn, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import net from 'node:net';
import dnsPacket from 'dns-packet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostsOf, labNames } from '../../src/lab/plan.js';
import { RESOLVER_SCRIPT } from '../../src/lab/resolver.js';
import { ask, head, query, rr, tcp, udp, type Transport } from '../helpers/dns.js';
import { freePort } from '../helpers/ports.js';

const TIMEOUT_MS = 400;
const SOA = { name: 'lab.test', type: 'SOA', ttl: 60, data: { mname: 'ns1.lab.test', rname: 'hostmaster.lab.test', serial: 1, refresh: 3600, retry: 600, expire: 86400, minimum: 60 } };

const ZONE_SOA = { name: 'customer.example', type: 'SOA', ttl: 300, data: { mname: 'ns1.lab.test', rname: 'hostmaster.customer.example', serial: 7, refresh: 3600, retry: 600, expire: 86400, minimum: 300 } } as const;

/**
 * The upstream, as hostplane's DNS server (authoritative only): customer.example has an address,
 * autoconfig.customer.example is a CNAME to the API host, a name in no zone is REFUSED,
 * silent.example never answers.
 */
function upstreamAnswer(q: Buffer): Buffer | null {
  const p = dnsPacket.decode(q);
  const name = p.questions?.[0].name;
  const answer = (answers: Parameters<typeof dnsPacket.encode>[0]['answers']) =>
    dnsPacket.encode({ type: 'response', id: p.id, flags: dnsPacket.AUTHORITATIVE_ANSWER, questions: p.questions, answers, authorities: [ZONE_SOA] });
  if (name === 'customer.example') return answer([{ name: 'customer.example', type: 'A', ttl: 300, data: '192.0.2.7' }]);
  if (name === 'autoconfig.customer.example') return answer([{ name: 'autoconfig.customer.example', type: 'CNAME', ttl: 300, data: 'api.lab.test' }]);
  // REFUSED: rcode 5 in the flags' low bits.
  if (name === '2.0.0.127.zen.spamhaus.org') return dnsPacket.encode({ type: 'response', id: p.id, flags: dnsPacket.RECURSION_DESIRED | 5, questions: p.questions });
  return null;
}

describe('the lab resolver (decision 0018 "The lab")', () => {
  let port: number;
  let resolver: ChildProcess;
  const asked: Array<{ transport: Transport; q: Buffer }> = [];
  const up = dgram.createSocket('udp4');
  const upTcp = net.createServer((c) => {
    c.on('data', (d) => {
      const q = d.subarray(2, 2 + d.readUInt16BE(0));
      asked.push({ transport: 'tcp', q });
      const a = upstreamAnswer(q);
      if (a) c.end(Buffer.concat([Buffer.from([a.length >> 8, a.length & 0xff]), a]));
    });
  });

  beforeAll(async () => {
    const upPort = await freePort();
    up.on('message', (q, r) => {
      asked.push({ transport: 'udp', q });
      const a = upstreamAnswer(q);
      if (a) up.send(a, r.port, r.address);
    });
    await new Promise<void>((r) => up.bind(upPort, '127.0.0.1', r));
    await new Promise<void>((r) => upTcp.listen(upPort, '127.0.0.1', r));
    port = await freePort();
    const cfg = { listen: '127.0.0.1', port, zone: 'lab.test', names: labNames(hostsOf('company')), upstream: '127.0.0.1', upstreamPort: upPort, timeoutMs: TIMEOUT_MS };
    resolver = spawn(process.execPath, ['-e', RESOLVER_SCRIPT, JSON.stringify(cfg)], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      resolver.stdout!.on('data', (d) => String(d).includes('resolver listening on') && resolve());
      resolver.on('exit', (code) => reject(new Error(`the resolver ended (exit ${code})`)));
    });
  });

  afterAll(() => {
    resolver?.kill();
    up.close();
    upTcp.close();
  });

  describe.each<Transport>(['udp', 'tcp'])('over %s', (transport) => {
    it('answers the lab\'s names itself, authoritatively, whatever their case', async () => {
      for (const [name, address] of Object.entries({ ...labNames(hostsOf('company')), 'API.Lab.TEST': '198.18.0.10' })) {
        const { p } = await ask(port, transport, name, 'A', { rd: true });
        expect(head(p), name).toMatchObject({ rcode: 'NOERROR', aa: true, qr: true, rd: true });
        expect(p.answers!.map(rr), name).toEqual([{ name, type: 'A', ttl: 60, data: address }]);
      }
      expect(labNames(hostsOf('company'))).toMatchObject({ 'api.lab.test': '198.18.0.10', 'ns1.lab.test': '198.18.0.10', 'acme.lab.test': '198.18.0.1', 'db1.lab.test': '198.18.0.13' });
    });

    it('says NXDOMAIN for a name it does not have and NODATA for a type it does not have, with the SOA', async () => {
      const nx = (await ask(port, transport, 'nope.lab.test', 'A')).p;
      expect(head(nx)).toMatchObject({ rcode: 'NXDOMAIN', aa: true });
      expect(nx.authorities!.map(rr)).toEqual([SOA]);
      for (const [name, type] of [['api.lab.test', 'AAAA'], ['lab.test', 'A'], ['web1.lab.test', 'MX']]) {
        const p = (await ask(port, transport, name, type)).p;
        expect(head(p), `${name} ${type}`).toMatchObject({ rcode: 'NOERROR', aa: true });
        expect(p.answers, `${name} ${type}`).toEqual([]);
        expect(p.authorities!.map(rr)).toEqual([SOA]);
      }
      expect((await ask(port, transport, 'lab.test', 'SOA')).p.answers!.map(rr)).toEqual([SOA]);
      expect(head((await ask(port, transport, 'api.lab.test', 'A', { klass: 'CH' })).p).rcode).toBe('REFUSED');
    });

    it('relays every other name to the upstream, over the same transport, and its answer unchanged', async () => {
      asked.length = 0;
      const { raw, sent } = await ask(port, transport, 'customer.example', 'A', { id: 4242, rd: true, edns: 1232 });
      expect(asked).toEqual([{ transport, q: sent }]);
      expect(raw.equals(upstreamAnswer(sent)!)).toBe(true);
      expect(raw.readUInt16BE(0)).toBe(4242);
    });

    it('says NXDOMAIN for a name in none of the upstream\'s zones (REFUSED there): the name does not exist in the lab', async () => {
      const { p } = await ask(port, transport, '2.0.0.127.zen.spamhaus.org', 'A', { id: 99, rd: true });
      expect({ id: p.id, ...head(p), questions: p.questions, answers: p.answers }).toMatchObject({ id: 99, rcode: 'NXDOMAIN', aa: false, rd: true, questions: [{ name: '2.0.0.127.zen.spamhaus.org', type: 'A' }], answers: [] });
    });

    it('says SERVFAIL, with the query\'s id and question, when the upstream stays silent', async () => {
      const t0 = Date.now();
      const { p } = await ask(port, transport, 'silent.example', 'A', { id: 777 });
      expect(Date.now() - t0).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
      expect(Date.now() - t0).toBeLessThan(TIMEOUT_MS + 1000);
      expect({ id: p.id, ...head(p), questions: p.questions }).toMatchObject({ id: 777, rcode: 'SERVFAIL', aa: false, questions: [{ name: 'silent.example', type: 'A' }] });
    });
  });

  it('answers a malformed query FORMERR and another opcode NOTIMP; never answers a response', async () => {
    const noQuestion = Buffer.from([0x12, 0x34, 0x01, 0x00, 0, 0, 0, 0, 0, 0, 0, 0]);
    expect(head(dnsPacket.decode((await udp(port, noQuestion))!)).rcode).toBe('FORMERR');
    const truncated = query('api.lab.test', 'A').subarray(0, 20);
    expect(head(dnsPacket.decode((await udp(port, truncated))!)).rcode).toBe('FORMERR');
    const notify = Buffer.from(query('api.lab.test', 'SOA'));
    notify[2] |= 4 << 3;
    expect(head(dnsPacket.decode((await udp(port, notify))!)).rcode).toBe('NOTIMP');
    const response = Buffer.from(query('api.lab.test', 'A'));
    response[2] |= 0x80;
    expect(await udp(port, response, 300)).toBeNull();
    // Two queries in one TCP stream: two answers.
    expect((await tcp(port, [query('web1.lab.test', 'A'), query('mx1.lab.test', 'A')])).map((m) => dnsPacket.decode(m).answers![0].data)).toEqual(['198.18.0.11', '198.18.0.12']);
  });
});
