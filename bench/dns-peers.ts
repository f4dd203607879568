// hostplane's DNS server side by side with PowerDNS and NSD (docs/performance.md "DNS side by
// side with NSD and PowerDNS"). Every server runs as a process of its own pinned to core 0
// (`taskset -c 0`), dnsperf pinned to core 1, all on the same zone content:
//
//   - hostplane: `hostplane dns` (node dist/main.js dns, built at the start) on a SQLite store filled here:
//     the demo dataset, zone100.example with 100 records and zone10k.example with 10 000 (created
//     as an operator creates them, then topped up), later bulk zones of 1000 records
//     (bench/dns-zones.ts). For change → answer, `hostplane serve` (API, worker and DNS server in
//     one process).
//   - the peers get the zones as hostplane serves them: AXFR with TSIG (dig) from hostplane, with
//     the key of a secondary registered by `hostplane admin dns-secondary add`. NSD 4.6 reads them
//     as zone files; PowerDNS 4.7 gets them through its own zone2sql into a fresh gsqlite3 database.
//     300 questions of the mixes are asked of every server: their answers must equal hostplane's.
//   - an NSD secondary of hostplane (that registered secondary; AXFR/IXFR with TSIG), measured once
//     it serves every zone at hostplane's serial.
//   - hostplane with node's dgram (DNS_UDP_BATCH=off): the baseline of the native batch reader
//     (docs/decisions/0015-dns-udp-in-batches.md), in the same rounds; the main hostplane must
//     read in batches (the bench stops if its log says otherwise, unless it is the one asked for).
//
// 1. Queries: the four servers run at once (idle but for the one under load); BENCH_PEERS_RUNS
//    rounds, each giving every server in turn a full-speed dnsperf run on the mix of each zone
//    (60% A, 20% TXT, 20% NXDOMAIN), then each a run at a steady 5,000 q/s (dnsperf -Q -v; p50/p99
//    from the per-query latencies dnsperf prints). Medians over the rounds.
//    Then the signed round (bench/peers/signed.ts, docs/decisions/0032-dnssec.md): hostplane unsigned,
//    hostplane with DNS_DNSSEC=on asked with DO (dnsperf -D), Knot serving zone10k.example as hostplane
//    signed it (AXFR; dnssec-signing off, one worker of each kind), the same rounds on the 10k mix;
//    DO answers compared with Knot's, RRSIG bytes included.
// 2. Change → first answer in the 10k-record zone: hostplane `serve`, POST /dns-records until its
//    DNS server answers; PowerDNS with every cache off, a PATCH of the zone's rrsets through its
//    REST API until it answers; in turns of 10 changes, after 10 untimed each.
// 3. BENCH_PEERS_RECORDS in the store (about 996 zones at 1M): each server alone, start → serving
//    (spawn → the first right answer from the last zone), and RSS (VmRSS of the largest process of
//    the server's tree, /proc) once serving and after 5 s of queries; hostplane also with every zone
//    signed (DNS_DNSSEC=on; its queries with DO).
// Ratios are hostplane's figure divided by the peer's.
//
//   npm run bench:dns:peers                              # alone
//   BENCH_PEERS_RECORDS=20000 BENCH_PEERS_RUNS=1 npm run bench:dns:peers    # a quick try
//   npm run bench:dns                                    # runs it after the in-process DNS bench
//       when nsd, pdns_server and dnsperf are all installed, unless BENCH_DNS_PEERS=0;
//       BENCH_DNS_PEERS=1 runs it even when some are missing (a missing one is skipped with a line)
//
// Settings (environment): BENCH_PEERS_RECORDS [1000000] (0 skips step 3), BENCH_PEERS_RUNS [3],
// BENCH_PEERS_SECONDS [5] (each full-speed run; the first round after BENCH_PEERS_WARMUP_S [2]
// untimed), BENCH_PEERS_RATE [5000] (0 skips the steady runs), BENCH_PEERS_RATE_SECONDS [5],
// BENCH_PEERS_OUTSTANDING [100] (dnsperf -q), BENCH_PEERS_CHANGES [100] (0 skips step 2),
// BENCH_PEERS_POLL_MS [2] (the DNS poll of step 2), BENCH_PEERS_SERVERS
// [nsd-secondary,nsd,powerdns,hostplane-dgram,knot] (the peers; hostplane always runs; knot is the
// signed round's), BENCH_PEERS_SIGNED [1] (0 skips the signed round), BENCH_PEERS_KEEP=1 (keep the
// temporary directory and its logs), BENCH_LOG_LEVEL [info] (hostplane's log level; its log goes to a
// file), BENCH_JSON=1.
//
// Only 127.0.0.1 ports 41000-41199 are listened on (the first free ones); files go to
// /tmp/hp-peers-*; every process started here is stopped by its PID, also on an error or Ctrl-C.
// test/helpers/secondaries.ts gives the TSIG key; its startSecondary is not used because it takes
// a port the system picks and does not pin NSD to a core.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { buildAdmin } from '../src/admin/index.js';
import { loadDemoData } from '../src/admin/demo.js';
import { openStore } from '../src/db/index.js';
import { migrate } from '../src/db/migrate.js';
import { nowIso } from '../src/db/time.js';
import { serviceDeps } from '../src/resources/service-deps.js';
import { testKey } from '../test/helpers/secondaries.js';
import { Filler, bulkRecords, insertRecords, recordCount, type BulkTarget } from './dns-zones.js';
import { changeSummary, hostplaneChanges, pdnsChanges } from './peers/changes.js';
import { killAllNow, memoryOf, noteChildren, peerPrograms, ports, procs, run, signalled, stopProc, which, type Proc } from './peers/processes.js';
import { answersOf, dnsperf, questionMix, type PerfRun, type Question } from './peers/queries.js';
import { report, type ServerName, type ServerResult } from './peers/report.js';
import { bigSigned, knotSkip, signedReport, signedResult, signedRound, type SignedResult } from './peers/signed.js';
import { addSecondary, exportZones, pdnsDatabase, removeSecondary, serving, startHostplane, startNsd, startPdns, transferred, udpKindOf, zonesOf, type Ctx } from './peers/servers.js';
import { CHANGES, CHECKED, KEEP, RATE, RATE_SECONDS, RECORDS, RSS_LOAD_S, RUNS, SECONDS, SERVERS, SIGNED, WARMUP_S, ZONE100, ZONE10K, CLIENT_CORE } from './peers/settings.js';
import { benchConfig } from './store.js';
import { benchHeader, fmt, loadAverage, pct } from './report.js';

export { peerPrograms, peersWanted } from './peers/processes.js';

async function compare(res: ServerResult, c: Ctx, port: number) {
  const got = await answersOf(port, c.sample);
  const examples: string[] = [];
  let count = 0;
  got.forEach((g, i) => {
    if (g === c.reference[i]) return;
    count++;
    if (examples.length < 3) examples.push(`${c.sample[i].name} ${c.sample[i].type}: hostplane "${c.reference[i]}", ${res.server} "${g}"`);
  });
  res.differ = { checked: got.length, count, examples };
  c.log(`  ${res.server}: ${count ? `${count} of ${got.length} answers DIFFER from hostplane's, e.g. ${examples.join('; ')}` : `the same answers as hostplane to ${got.length} questions`}`);
}


// ---- the run -----------------------------------------------------------------------------------


async function setup(dir: string, log: (s: string) => void): Promise<Ctx> {
  const db = path.join(dir, 'hostplane.db');
  const store = await openStore(db);
  await migrate(store);
  const config = benchConfig(db, 'http://127.0.0.1');
  const admin = buildAdmin(serviceDeps(store, config));
  const { data } = await loadDemoData(admin, config.publicBaseUrl);
  const owner = data.customers.find((c) => c.role === 'end-customer')!;
  const target: BulkTarget = { engine: 'sqlite', store };
  // The two measured zones, created as an operator creates them (base records, DKIM key), then topped up.
  for (const [zone, size] of [[ZONE100, 100], [ZONE10K, 10_000]] as const) {
    await admin.domains.createDomain({ name: zone, customerId: Number(owner.id), packageId: Number(owner.package_id) });
    const have = Number((await store.db.selectFrom('dns_records').select((eb) => eb.fn.countAll<number>().as('n')).where('domain', '=', zone).executeTakeFirstOrThrow()).n);
    await insertRecords(target, bulkRecords(zone, 0, size - have, nowIso()));
  }
  const names = async (zone: string, type: string) =>
    (await store.db.selectFrom('dns_records').select('name').where('domain', '=', zone).where('record_type', '=', type).execute()).map((r) => r.name).filter((n) => /^h\d+$/.test(n));
  const mixes = { zone100: path.join(dir, 'mix-zone100.txt'), zone10k: path.join(dir, 'mix-zone10k.txt') };
  const sample: Question[] = [];
  for (const [zone, file, seed] of [[ZONE100, mixes.zone100, 100], [ZONE10K, mixes.zone10k, 10_000]] as const) {
    const mix = questionMix(zone, await names(zone, 'A'), await names(zone, 'TXT'), seed);
    fs.writeFileSync(file, mix.map((q) => `${q.name} ${q.type}`).join('\n') + '\n');
    const seen = new Set<string>();
    for (const q of mix) {
      if (seen.size >= CHECKED / 2) break;
      const k = `${q.name} ${q.type}`;
      if (!seen.has(k)) {
        seen.add(k);
        sample.push(q);
      }
    }
  }
  const key = testKey('hp-peers-nsd');
  const keyFile = path.join(dir, 'tsig.key');
  fs.writeFileSync(keyFile, key.bindFile, { mode: 0o600 });
  const [hpDns, hpHttp, nsd, secondary, pdns, pdnsApi, hpDgram, hpSigned, knot] = await ports(9);
  const c: Ctx = { dir, db, ports: { hpDns, hpHttp, nsd, secondary, pdns, pdnsApi, hpDgram, hpSigned, knot }, key, keyFile, owner, mixes, sample, reference: [], log };
  log(`store ${db}: ${await recordCount(target)} records; ports ${JSON.stringify(c.ports)}`);
  await store.close();
  return c;
}

const probeSmall: Question = { name: `h0.${ZONE10K}`, type: 'A' };


interface Running {
  res: ServerResult;
  proc: Proc;
  port: number;
}

/**
 * RUNS rounds; in each, every server in turn gets the full-speed runs on both mixes (the first
 * round after an untimed warm-up), then every server the steady-rate run. The servers all run at
 * once, idle but for the one under load: what else the machine does falls on all of them alike.
 */
async function queryRounds(servers: Running[], c: Ctx) {
  for (let round = 1; round <= RUNS; round++) {
    for (const { res, port } of servers) {
      for (const [key, label, file] of [['qps100', `${ZONE100} mix`, c.mixes.zone100], ['qps10k', `${ZONE10K} mix`, c.mixes.zone10k]] as const) {
        if (round === 1 && WARMUP_S > 0) await dnsperf(res.server, 'warm-up', port, file, WARMUP_S);
        const r = await dnsperf(res.server, label, port, file, SECONDS);
        r.round = round;
        res[key].push(r);
        c.log(`  round ${round}, ${res.server}: ${label}: ${fmt(r.qps)} q/s (${r.rcodes}; lost ${r.lost})`);
      }
    }
    if (!RATE) continue;
    for (const { res, port } of servers) {
      if (res.server === 'NSD secondary') continue;
      const r = await dnsperf(res.server, `${ZONE100} mix at ${RATE} q/s`, port, c.mixes.zone100, RATE_SECONDS, RATE);
      r.round = round;
      res.steady.push(r);
      c.log(`  round ${round}, ${res.server}: at ${RATE} q/s: p50 ${fmt(r.p50Ms!, 3)} ms, p99 ${fmt(r.p99Ms!, 3)} ms (lost ${r.lost})`);
    }
  }
}

/** What the three steps share: the context, the results filled in, which peers run. */
interface Run {
  c: Ctx;
  servers: Record<'hp' | 'pdns' | 'nsd' | 'sec' | 'dgram', ServerResult>;
  /** The signed round's results (bench/peers/signed.ts). */
  signed: SignedResult;
  has: (server: string) => boolean;
  perf: boolean;
  zoneDir: string;
  pdnsDb: string;
  log: (s: string) => void;
}

/** 1. Queries: every server started, then rounds of load, one server at a time. */
async function queriesStep(r: Run, zones: string[]) {
  const { hp, pdns, nsd, sec, dgram } = r.servers;
  const { c, has, perf, zoneDir, pdnsDb, log } = r;
  await addSecondary(c);
  {
    const running: Running[] = [];
    try {
      const t0 = performance.now();
      const p = startHostplane(c, 'dns', 'hostplane-dns.log');
      hp.startS = await serving(p, c.ports.hpDns, probeSmall, t0, 120);
      hp.memory = memoryOf(p.pid);
      c.reference = await answersOf(c.ports.hpDns, c.sample);
      running.push({ res: hp, proc: p, port: c.ports.hpDns });
      const udp = udpKindOf(p);
      log(`hostplane dns (pid ${p.pid}) serves ${zones.length} zones after ${fmt(hp.startS, 2)} s, RSS ${fmt(hp.memory.rssMb)} MB, UDP read by ${udp}`);
      if (udp !== 'batch' && process.env.DNS_UDP_BATCH !== 'off') throw new Error(`hostplane reads UDP by ${udp}, not in batches: is the native reader built (npm run build:native)?`);
      if (!dgram.skipped) {
        const t1 = performance.now();
        const pg = startHostplane(c, 'dns', 'hostplane-dgram.log', { DNS_LISTEN: `127.0.0.1:${c.ports.hpDgram}`, DNS_UDP_BATCH: 'off' });
        dgram.startS = await serving(pg, c.ports.hpDgram, probeSmall, t1, 120);
        dgram.memory = memoryOf(pg.pid);
        running.push({ res: dgram, proc: pg, port: c.ports.hpDgram });
        log(`hostplane dns with dgram (pid ${pg.pid}) serves after ${fmt(dgram.startS, 2)} s, UDP read by ${udpKindOf(pg)}`);
      }
      if (has('nsd') || has('powerdns')) {
        const n = await exportZones(c, zones, zoneDir);
        log(`  ${zones.length} zones, ${n} records transferred out of hostplane by AXFR (dig, TSIG) for NSD and PowerDNS`);
      }
      if (has('nsd-secondary')) {
        const t1 = performance.now();
        const ns = startNsd(c, 'nsd-secondary', c.ports.secondary, zones.map((z) => ({ name: z, file: path.join(c.dir, 'nsd-secondary', `${z}.zone`) })), { primaryPort: c.ports.hpDns, key: c.key });
        await serving(ns, c.ports.secondary, probeSmall, t1, 120);
        await transferred(c, zones);
        sec.transferS = (performance.now() - t1) / 1000;
        noteChildren(ns);
        sec.memory = memoryOf(ns.pid);
        running.push({ res: sec, proc: ns, port: c.ports.secondary });
        log(`NSD secondary (pid ${ns.pid}) serves every zone at hostplane's serial ${fmt(sec.transferS, 2)} s after its start`);
      }
      if (has('nsd')) {
        const t1 = performance.now();
        const ns = startNsd(c, 'nsd', c.ports.nsd, zones.map((z) => ({ name: z, file: path.join(zoneDir, `${z}.zone`) })));
        nsd.startS = await serving(ns, c.ports.nsd, probeSmall, t1, 120);
        noteChildren(ns);
        nsd.memory = memoryOf(ns.pid);
        running.push({ res: nsd, proc: ns, port: c.ports.nsd });
        log(`NSD (pid ${ns.pid}) serves after ${fmt(nsd.startS, 2)} s`);
      }
      if (has('powerdns')) {
        await pdnsDatabase(c, zones, zoneDir, pdnsDb);
        const t1 = performance.now();
        const pd = startPdns(c, 'pdns', pdnsDb, true);
        pdns.startS = await serving(pd, c.ports.pdns, probeSmall, t1, 120);
        pdns.memory = memoryOf(pd.pid);
        running.push({ res: pdns, proc: pd, port: c.ports.pdns });
        log(`PowerDNS (pid ${pd.pid}) serves after ${fmt(pdns.startS, 2)} s`);
      }
      for (const r of running) if (r.res !== hp) await compare(r.res, c, r.port);
      if (perf) await queryRounds(running, c);
    } finally {
      for (const r of running.reverse()) await stopProc(r.proc);
    }
  }
  await removeSecondary(c);
}

/** 2. Change → answer: hostplane serve and PowerDNS (caches off) in turns of 10 changes. */
async function changesStep(r: Run) {
  const { hp, pdns } = r.servers;
  const { c, has, pdnsDb, log } = r;
  const running: Proc[] = [];
  try {
    const t0 = performance.now();
    const p = startHostplane(c, 'serve', 'hostplane-serve.log');
    running.push(p);
    await serving(p, c.ports.hpDns, probeSmall, t0, 120);
    let pd: Proc | null = null;
    if (has('powerdns')) {
      const t1 = performance.now();
      pd = startPdns(c, 'pdns-nocache', pdnsDb, false);
      running.push(pd);
      await serving(pd, c.ports.pdns, probeSmall, t1, 120);
    }
    await hostplaneChanges(c, 10, 'warm');
    if (pd) await pdnsChanges(c, 10, 'warm');
    const hpMs: number[] = [];
    const posts: number[] = [];
    const pdMs: number[] = [];
    for (let done = 0; done < CHANGES; done += 10) {
      const n = Math.min(10, CHANGES - done);
      hpMs.push(...(await hostplaneChanges(c, n, `peer${done}x`, posts)));
      if (pd) pdMs.push(...(await pdnsChanges(c, n, `peer${done}x`)));
    }
    hp.change = { ...changeSummary(hpMs), postP50: pct(posts, 50) };
    log(`hostplane serve (pid ${p.pid}): change → answer p50 ${fmt(hp.change.p50, 1)} ms (POST → 202: ${fmt(hp.change.postP50!, 1)}), p99 ${fmt(hp.change.p99, 1)} ms (${hp.change.n} changes)`);
    if (pd) {
      pdns.change = changeSummary(pdMs);
      log(`PowerDNS, caches off (pid ${pd.pid}): change → answer p50 ${fmt(pdns.change.p50, 1)} ms, p99 ${fmt(pdns.change.p99, 1)} ms (${pdns.change.n} changes)`);
    }
  } finally {
    for (const p of running.reverse()) await stopProc(p);
  }

}

/** 3. The big store: start → serving and RSS, one server at a time; answers its records and zones. */
async function bigStoreStep(r: Run): Promise<{ bigRecords: number; bigZones: number }> {
  const { hp, pdns, nsd } = r.servers;
  const { c, has, perf, zoneDir, pdnsDb, log } = r;
  const store = await openStore(c.db);
  const target: BulkTarget = { engine: 'sqlite', store };
  // Bulk zones of 1000 records (BULK_ZONE), owned by the 10k zone's owner.
  const loadS = await new Filler(target, [c.owner]).fill(RECORDS);
  const bigRecords = await recordCount(target);
  await store.close();
  const zones = zonesOf(c.db);
  const bigZones = zones.length;
  log(`store filled to ${bigRecords} records in ${bigZones} zones (${fmt(loadS, 1)} s)`);
  const last = zones.filter((z) => z.startsWith('bulk')).pop() ?? ZONE10K;
  const probe: Question = { name: `h0.${last}`, type: 'A' };
  const big = async (res: ServerResult, p: Proc, port: number, t0: number) => {
    const startS = await serving(p, port, probe, t0, 1800);
    noteChildren(p);
    const servingMem = memoryOf(p.pid);
    let loadRun: PerfRun = { server: res.server, load: 'none', qps: NaN, sent: 0, completed: 0, lost: 0, rcodes: '', avgMs: NaN };
    if (perf) loadRun = await dnsperf(res.server, `${ZONE10K} mix, ${bigRecords} records loaded`, port, c.mixes.zone10k, RSS_LOAD_S);
    noteChildren(p);
    res.big = { records: bigRecords, zones: bigZones, startS, serving: servingMem, afterLoad: memoryOf(p.pid), load: loadRun };
    log(`  ${res.server}: serving ${bigRecords} records after ${fmt(startS, 2)} s; RSS ${fmt(servingMem.rssMb)} MB → ${fmt(res.big.afterLoad.rssMb)} MB after ${RSS_LOAD_S} s of load (${fmt(loadRun.qps)} q/s)`);
  };
  await addSecondary(c);
  {
    const t0 = performance.now();
    const p = startHostplane(c, 'dns', 'hostplane-dns-big.log');
    try {
      await big(hp, p, c.ports.hpDns, t0);
      if (has('nsd') || has('powerdns')) {
        const t1 = performance.now();
        const n = await exportZones(c, zones, zoneDir);
        log(`  ${zones.length} zones, ${n} records transferred out of hostplane by AXFR in ${fmt((performance.now() - t1) / 1000, 1)} s`);
      }
    } finally {
      await stopProc(p);
    }
  }
  await removeSecondary(c);
  if (SIGNED) await bigSigned(c, r.signed, probe, bigRecords, perf, hp.big && { startS: hp.big.startS, rssMb: hp.big.serving.rssMb, afterMb: hp.big.afterLoad.rssMb });
  if (has('nsd')) {
    const t0 = performance.now();
    const p = startNsd(c, 'nsd-big', c.ports.nsd, zones.map((z) => ({ name: z, file: path.join(zoneDir, `${z}.zone`) })));
    try {
      await big(nsd, p, c.ports.nsd, t0);
    } finally {
      await stopProc(p);
    }
  }
  if (has('powerdns')) {
    const t1 = performance.now();
    await pdnsDatabase(c, zones, zoneDir, pdnsDb);
    log(`  PowerDNS database loaded by zone2sql | sqlite3 in ${fmt((performance.now() - t1) / 1000, 1)} s`);
    const t0 = performance.now();
    const p = startPdns(c, 'pdns-big', pdnsDb, true);
    try {
      await big(pdns, p, c.ports.pdns, t0);
    } finally {
      await stopProc(p);
    }
  }
  return { bigRecords, bigZones };
}

export async function runPeers(): Promise<void> {
  const started = Date.now();
  const load0 = os.loadavg();
  const log = (s: string) => console.log(s);
  console.log(`${benchHeader('DNS side-by-side')}, load average ${loadAverage(load0)}`);
  const progs = peerPrograms();
  const missing = (['nsd', 'pdns', 'dnsperf'] as const).filter((p) => !progs[p]);
  for (const p of missing) {
    const what = p === 'dnsperf' ? 'queries/s and p99 are skipped' : p === 'nsd' ? 'NSD and the NSD secondary are skipped' : 'PowerDNS is skipped';
    console.log(`(${p === 'pdns' ? 'pdns_server' : p} is not installed: ${what}; apt-get install ${p === 'pdns' ? 'pdns-server pdns-backend-sqlite3' : p})`);
  }
  if (!which('taskset')) throw new Error('taskset (util-linux) is needed to pin the servers');
  // The servers measured are the build of this checkout, as `npm start` runs it (no tsx in the process).
  execFileSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
  if (!which('dig')) throw new Error('dig (bind9-dnsutils) is needed to transfer the zones out of hostplane');
  if (progs.pdns && !(which('zone2sql') && which('sqlite3'))) throw new Error('PowerDNS needs zone2sql (pdns-server) and sqlite3 to load its database');
  const has = (s: string) => SERVERS.has(s) && Boolean(s.startsWith('nsd') ? progs.nsd : progs.pdns);
  const perf = Boolean(progs.dnsperf);

  // The bench process is a client too (step 2's POSTs and polls): on the client's core, with all its threads.
  const pin = await run('taskset', 'taskset', ['-a', '-p', '-c', String(CLIENT_CORE), String(process.pid)]);
  if (pin.code !== 0) throw new Error(`taskset could not pin the bench to core ${CLIENT_CORE}: ${pin.err}`);
  const dir = fs.mkdtempSync('/tmp/hp-peers-');
  const onSignal = (sig: NodeJS.Signals) => {
    if (signalled.interrupted) return;
    signalled.interrupted = true;
    console.error(`${sig}: stopping every process started by the bench …`);
    void Promise.all([...procs].map((p) => stopProc(p, 3000))).finally(() => {
      if (!KEEP) fs.rmSync(dir, { recursive: true, force: true });
      process.exit(130);
    });
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('exit', killAllNow);

  const fresh = (server: ServerName, how: string, skipped?: string): ServerResult => ({ server, how, qps100: [], qps10k: [], steady: [], skipped });
  const skipReason = (s: string) => (has(s) ? undefined : SERVERS.has(s) ? `${s === 'powerdns' ? 'pdns_server' : 'nsd'} is not installed` : 'not in BENCH_PEERS_SERVERS');
  const hp = fresh('hostplane', '`hostplane dns`; `hostplane serve` for change → answer');
  const pdns = fresh('PowerDNS', 'pdns_server, gsqlite3; default caches, all off for change → answer', skipReason('powerdns'));
  const nsd = fresh('NSD', 'nsd -d, zone files, server-count 1', skipReason('nsd'));
  const sec = fresh('NSD secondary', 'nsd -d, request-xfr from hostplane (TSIG)', skipReason('nsd-secondary'));
  const dgram = fresh('hostplane (dgram)', '`hostplane dns`, DNS_UDP_BATCH=off', SERVERS.has('hostplane-dgram') ? undefined : 'not in BENCH_PEERS_SERVERS');
  const results = [hp, pdns, nsd, sec, dgram];
  const signed = signedResult(knotSkip(SERVERS.has('knot')));
  let bigZones = 0;
  let bigRecords = 0;
  try {
    const c = await setup(dir, log);
    const r: Run = { c, servers: { hp, pdns, nsd, sec, dgram }, signed, has, perf, zoneDir: path.join(dir, 'zones'), pdnsDb: path.join(dir, 'pdns.sqlite3'), log };
    await queriesStep(r, zonesOf(c.db));
    if (SIGNED) await signedRound(c, signed, perf, c.sample.filter((q) => q.name.endsWith(ZONE10K)));
    if (CHANGES > 0) await changesStep(r);
    if (RECORDS > 0) ({ bigRecords, bigZones } = await bigStoreStep(r));
  } finally {
    for (const p of [...procs]) await stopProc(p);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.off('exit', killAllNow);
    if (KEEP) console.log(`(kept ${dir})`);
    else fs.rmSync(dir, { recursive: true, force: true });
  }
  report(results, load0, perf, bigRecords, bigZones);
  if (SIGNED) signedReport(signed, perf);
  if (SIGNED && process.env.BENCH_JSON) console.log(JSON.stringify({ signed }, null, 1));
  console.log(`total ${fmt((Date.now() - started) / 1000, 1)} s`);
}



// `npm run bench:dns:peers`; bench/dns.bench.ts imports runPeers instead.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  runPeers().catch((err) => {
    // After a signal the handler exits once everything is stopped; what failed meanwhile is its consequence.
    if (signalled.interrupted) return;
    console.error(err);
    process.exitCode = 1;
  });
}
