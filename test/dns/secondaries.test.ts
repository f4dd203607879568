// Secondaries of hostplane's DNS server (docs/decisions/0013-dns-secondaries.md):
// AXFR and IXFR over TCP with TSIG (dig -y, our own client checking every signature), the ACL and
// refusals, then real NSD and Knot as secondaries: they transfer the zone, follow a change through
// NOTIFY and IXFR, and DNS jobs wait for them and name the one that lags.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import dnsPacket from 'dns-packet';
import type { FastifyBaseLogger } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, freshStore, testConfig, type TestStore } from '../helpers/app.js';
import { ENV, addDomain, addRecords, customer, digMissing, query, tcp, udp } from '../helpers/dns.js';
import { requirable } from '../helpers/required.js';
import { secondaryMissing, startSecondary, testKey, type RunningSecondary, type SecondaryEngine } from '../helpers/secondaries.js';
import { elapsedUntil } from '../helpers/wait.js';
import { DnsServer } from '../../src/dns/server.js';
import { changeLogDnsDriver, soaSerial } from '../../src/provisioning/dns/driver.js';
import { DnsSecondariesService } from '../../src/admin/dns-secondaries.service.js';
import { PermanentJobError } from '../../src/queue/types.js';
import { BADSIG, BADTIME, readTsig, signRequest, verifyResponses } from '../../src/dns/tsig.js';
import type { TsigKey } from '../../src/dns-wire.js';

const run = promisify(execFile);
const BIG = Array.from({ length: 600 }, (_, i): [string, string, string] => [`host${i}`, 'TXT', `record number ${i} of a zone that needs several messages`]);

/** Info lines the DNS server logged (transfers say which kind they were). */
function capturingLog(lines: Array<Record<string, unknown> & { msg: string }>): FastifyBaseLogger {
  const log = {
    info: (o: Record<string, unknown>, msg: string) => lines.push({ ...o, msg }),
    warn() {}, error() {}, debug() {}, fatal() {}, trace() {}, silent() {},
    child: () => log,
    level: 'info',
  };
  return log as unknown as FastifyBaseLogger;
}

/** An AXFR/IXFR over TCP from `localAddress`, signed with `key` (at `time`): the replies. */
async function transfer(port: number, msg: Buffer, o: { key?: TsigKey; time?: number; localAddress?: string } = {}) {
  const signed = o.key ? signRequest(msg, o.key, o.time) : { message: msg, mac: Buffer.alloc(0) };
  // Done at an error, the second SOA (AXFR), or the closing SOA of an IXFR.
  const finished = (out: Buffer[]) => {
    const decoded = out.map((m) => dnsPacket.decode(m));
    const last = decoded[decoded.length - 1];
    const soas = decoded.reduce((n, p) => n + p.answers.filter((a) => a.type === 'SOA').length, 0);
    const ixfr = last.answers.length === 1 && out.length === 1;
    return last.rcode !== 'NOERROR' || (soas >= 2 && last.answers[last.answers.length - 1]?.type === 'SOA') || (ixfr && soas === 1);
  };
  const replies = await tcp(port, [signed.message], { until: finished, timeoutMs: 3000, localAddress: o.localAddress });
  return { replies, decoded: replies.map((r) => dnsPacket.decode(r)), mac: signed.mac };
}

const ixfrQuery = (zone: string, serial: number) =>
  dnsPacket.encode({
    type: 'query',
    id: 4242,
    questions: [{ name: zone, type: 'IXFR', class: 'IN' }],
    authorities: [{ name: zone, type: 'SOA', ttl: 0, data: { mname: 'a.', rname: 'b.', serial, refresh: 0, retry: 0, expire: 0, minimum: 0 } }],
  });

const serialOf = async (ts: TestStore, zone: string) => Number((await ts.store.db.selectFrom('domains').select('dns_serial').where('name', '=', zone).executeTakeFirstOrThrow()).dns_serial);

describe.each(ENGINES)('DNS secondaries on %s', (engine) => {
  let ts: TestStore;
  let dns: DnsServer;
  let port: number;
  const logged: Array<Record<string, unknown> & { msg: string }> = [];
  const key = testKey('xfr-key');
  const tkey: TsigKey = { name: key.name, algorithm: 'hmac-sha256', secret: Buffer.from(key.secret, 'base64') };

  beforeAll(async () => {
    ts = await freshStore(engine);
    const cust = await customer(ts.store);
    await addDomain(ts.store, cust, 'zone.example');
    await addDomain(ts.store, cust, 'big.example');
    await addRecords(ts.store, 'zone.example', [['', 'A', '192.0.2.1'], ['www', 'A', '192.0.2.2'], ['', 'MX', '10 mail.zone.example']]);
    await addRecords(ts.store, 'big.example', BIG);
    dns = await DnsServer.start({ store: ts.store, config: testConfig(ENV), listen: '127.0.0.1:0', log: capturingLog(logged) });
    port = dns.port!;
    // A registered secondary at 127.0.0.1 (port 9: nothing answers there; NOTIFYs go unanswered).
    await new DnsSecondariesService(ts.store.db).add({ name: 'dig', address: '127.0.0.1:9', keyFileText: key.bindFile });
  });
  afterAll(async () => {
    await dns?.stop();
    await ts?.drop();
  });

  describe('AXFR and IXFR with TSIG (RFC 5936, RFC 1995, RFC 8945)', () => {
    it('AXFR: SOA first and last, every record, several messages for a big zone, each signed and verifiable', async () => {
      const serial = await serialOf(ts, 'big.example');
      const { replies, decoded, mac } = await transfer(port, query('big.example', 'AXFR'), { key: tkey });
      expect(decoded.length).toBeGreaterThan(1);
      expect(verifyResponses(replies, tkey, mac)).toBe(true);
      const answers = decoded.flatMap((p) => p.answers);
      expect(answers[0]).toMatchObject({ type: 'SOA', data: { serial } });
      expect(answers[answers.length - 1]).toMatchObject({ type: 'SOA', data: { serial } });
      expect(answers.filter((a) => a.type === 'TXT')).toHaveLength(BIG.length);
      expect(answers.filter((a) => a.type === 'NS')).toHaveLength(2);
      expect(decoded.every((p) => p.flag_aa && p.rcode === 'NOERROR')).toBe(true);
    });

    it('dig -y transfers and verifies the signatures; unsigned and wrong keys are refused', async () => {
      if (digMissing()) return;
      const dig = async (...a: string[]) => (await run('dig', ['@127.0.0.1', '-p', String(port), '+time=2', '+tries=1', ...a]).catch((e) => e)).stdout as string;
      const ok = await dig('-y', `hmac-sha256:${key.name}:${key.secret}`, 'big.example', 'AXFR');
      expect(ok).not.toMatch(/Couldn't verify|Transfer failed/);
      expect(ok).toMatch(new RegExp(`XFR size: ${BIG.length + 4} records \\(messages [2-9]`));
      expect(await dig('zone.example', 'AXFR')).toMatch(/Transfer failed/);
      expect(await dig('-y', `hmac-sha256:${key.name}:${Buffer.alloc(32, 1).toString('base64')}`, 'zone.example', 'AXFR')).toMatch(/BADSIG/);
    });

    it('refuses a transfer without TSIG, with a bad MAC, an unknown key, a stale time, or from an address not registered', async () => {
      const plain = await transfer(port, query('zone.example', 'AXFR'));
      expect(plain.decoded[0].rcode).toBe('REFUSED');
      expect(plain.decoded[0].answers).toEqual([]);
      const bad = await transfer(port, query('zone.example', 'AXFR'), { key: { ...tkey, secret: Buffer.alloc(32, 2) } });
      expect(bad.decoded[0].rcode).toBe('NOTAUTH');
      expect(readTsig(bad.replies[0])?.error).toBe(BADSIG);
      const unknown = await transfer(port, query('zone.example', 'AXFR'), { key: { ...tkey, name: 'other-key' } });
      expect(unknown.decoded[0].rcode).toBe('NOTAUTH');
      const stale = await transfer(port, query('zone.example', 'AXFR'), { key: tkey, time: Math.floor(Date.now() / 1000) - 3600 });
      expect(stale.decoded[0].rcode).toBe('NOTAUTH');
      expect(readTsig(stale.replies[0])?.error).toBe(BADTIME);
      expect(verifyResponses(stale.replies, tkey, stale.mac)).toBe(true);
      // Linux answers for all of 127/8: the right key from 127.0.0.2, where no secondary is registered.
      const elsewhere = await transfer(port, query('zone.example', 'AXFR'), { key: tkey, localAddress: '127.0.0.2' });
      expect(elsewhere.decoded[0].rcode).toBe('REFUSED');
      expect(elsewhere.decoded[0].answers).toEqual([]);
      const notOurs = await transfer(port, query('nowhere.example', 'AXFR'), { key: tkey });
      expect(notOurs.decoded[0].rcode).toBe('NOTAUTH');
      // Over UDP without a key: refused as before.
      const u = dnsPacket.decode((await udp(port, query('zone.example', 'AXFR')))!);
      expect(u.rcode).toBe('REFUSED');
    });

    it('IXFR: the changes since the client serial (one applied owner by owner, one zone reloaded whole), the SOA alone when current, the whole zone for an unknown serial', async () => {
      const before = await serialOf(ts, 'zone.example');
      await addRecords(ts.store, 'zone.example', [['new', 'A', '192.0.2.50']]);
      // Served before the next change, so the server keeps two steps (one reload would make one).
      await elapsedUntil(async () => (await soaSerial('127.0.0.1', port, 'zone.example')) === before + 1, 3000);
      await ts.store.db.transaction().execute(async (trx) => {
        await trx.deleteFrom('dns_records').where('domain', '=', 'zone.example').where('name', '=', 'www').execute();
        const { recordChange } = await import('../../src/provisioning/dns/propagation.js');
        await recordChange(trx, ts.store.signals, 'zone.example');
      });
      const now = before + 2;
      await elapsedUntil(async () => (await soaSerial('127.0.0.1', port, 'zone.example')) === now, 3000);

      const inc = await transfer(port, ixfrQuery('zone.example', before), { key: tkey });
      expect(verifyResponses(inc.replies, tkey, inc.mac)).toBe(true);
      const a = inc.decoded.flatMap((p) => p.answers).map((r) => `${r.type} ${r.name} ${r.type === 'SOA' ? r.data.serial : r.data}`);
      expect(a).toEqual([
        `SOA zone.example ${now}`,
        `SOA zone.example ${before}`, `SOA zone.example ${before + 1}`, 'A new.zone.example 192.0.2.50',
        `SOA zone.example ${before + 1}`, 'A www.zone.example 192.0.2.2', `SOA zone.example ${now}`,
        `SOA zone.example ${now}`,
      ]);
      const current = await transfer(port, ixfrQuery('zone.example', now), { key: tkey });
      expect(current.decoded.flatMap((p) => p.answers).map((r) => r.type)).toEqual(['SOA']);
      const full = await transfer(port, ixfrQuery('zone.example', 1), { key: tkey });
      const types = full.decoded.flatMap((p) => p.answers).map((r) => r.type);
      expect(types[0]).toBe('SOA');
      expect(types[types.length - 1]).toBe('SOA');
      expect(types.filter((t) => t === 'SOA')).toHaveLength(2);
      expect(types).toContain('MX');
      // dig's view of the same.
      if (!digMissing()) {
        const out = (await run('dig', ['@127.0.0.1', '-p', String(port), '-y', `hmac-sha256:${key.name}:${key.secret}`, 'zone.example', `IXFR=${before}`])).stdout;
        expect(out).not.toMatch(/Couldn't verify|Transfer failed/);
        expect(out).toMatch(/new\.zone\.example\.\s+3600\s+IN\s+A\s+192\.0\.2\.50/);
      }
    });

    it('a signed SOA query over UDP gets a signed answer', async () => {
      if (digMissing()) return;
      const out = (await run('dig', ['@127.0.0.1', '-p', String(port), '-y', `hmac-sha256:${key.name}:${key.secret}`, 'zone.example', 'SOA'])).stdout;
      expect(out).toMatch(/status: NOERROR/);
      expect(out).toMatch(/TSIG PSEUDOSECTION/);
      expect(out).not.toMatch(/Couldn't verify/);
    });
  });

  for (const secEngine of ['nsd', 'knot'] as SecondaryEngine[]) {
    requirable(secondaryMissing(secEngine))(`${secEngine} as a secondary`, () => {
      let sec: RunningSecondary | undefined;
      const skey = testKey(`${secEngine}-key`);
      const name = `${secEngine}1`;

      beforeAll(async () => {
        // Only real secondaries from here on: the driver would wait for 'dig' (nothing at port 9).
        await new DnsSecondariesService(ts.store.db).remove('dig').catch(() => {});
        const service = new DnsSecondariesService(ts.store.db);
        sec = await startSecondary(secEngine, port, skey, ['zone.example'], async (p) => {
          await service.remove(name).catch(() => {});
          await service.add({ name, address: `127.0.0.1:${p}`, keyFileText: skey.bindFile });
        });
      });
      afterAll(async () => {
        await sec?.stop();
        await new DnsSecondariesService(ts.store.db).remove(name).catch(() => {});
      });

      it('transfers the zone with TSIG and serves it', async () => {
        const serial = await serialOf(ts, 'zone.example');
        await elapsedUntil(async () => (await soaSerial('127.0.0.1', sec!.port, 'zone.example')) === serial, 15_000).catch(() => {
          throw new Error(`${secEngine} did not load the zone: ${sec!.log()}`);
        });
        const r = dnsPacket.decode((await udp(sec!.port, query('zone.example', 'MX')))!);
        expect(r.answers.map((a) => a.data)).toEqual([{ preference: 10, exchange: 'mail.zone.example' }]);
      });

      it('a change reaches it by NOTIFY and IXFR; the DNS driver waits for it', async () => {
        const driver = changeLogDnsDriver(ts.store, { staleMs: 1000, secondaryTimeoutMs: 60_000 });
        const from = logged.length;
        const id = await addRecords(ts.store, 'zone.example', [[`${secEngine}-new`, 'A', '192.0.2.77']]);
        const serial = await serialOf(ts, 'zone.example');
        await elapsedUntil(() => driver.isApplied(id), 5000).catch(() => {
          throw new Error(`${secEngine} did not follow the change: ${sec!.log()}`);
        });
        expect(await soaSerial('127.0.0.1', sec!.port, 'zone.example')).toBe(serial);
        const r = dnsPacket.decode((await udp(sec!.port, query(`${secEngine}-new.zone.example`, 'A')))!);
        expect(r.answers.map((a) => a.data)).toEqual(['192.0.2.77']);
        // Its refresh timer is an hour: it came because of the NOTIFY, and by IXFR.
        expect(logged.slice(from).some((l) => l.msg === 'DNS IXFR' && l.key === skey.name && l.kind === 'incremental')).toBe(true);
      });

      it('a DNS job waits while it lags and then fails naming it', async () => {
        await sec!.stop();
        const driver = changeLogDnsDriver(ts.store, { staleMs: 1000, secondaryTimeoutMs: 1500 });
        const id = await addRecords(ts.store, 'zone.example', [[`${secEngine}-late`, 'A', '192.0.2.78']]);
        await elapsedUntil(async () => (await soaSerial('127.0.0.1', port, 'zone.example')) === (await serialOf(ts, 'zone.example')), 3000);
        expect(await driver.isApplied(id)).toBe(false);
        await new Promise((r) => setTimeout(r, 1600));
        const err = await driver.isApplied(id).then(() => null, (e) => e);
        expect(err).toBeInstanceOf(PermanentJobError);
        expect(err.message).toContain(`"${name}" (127.0.0.1:${sec!.port}) gives no answer`);
        // Without secondaries, as before: done once hostplane's servers answer.
        await new DnsSecondariesService(ts.store.db).remove(name);
        expect(await driver.isApplied(id)).toBe(true);
      });
    });
  }
});
