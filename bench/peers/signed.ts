// The signed round of the DNS side-by-side bench (docs/decisions/0032-dnssec.md, docs/performance.md
// "DNS side by side"): hostplane serving zone10k.example signed (DNS_DNSSEC=on) asked with the DO bit
// (dnsperf -D), against the same hostplane unsigned and against Knot serving the zone exactly as
// hostplane signed it (taken by AXFR, loaded from a file, dnssec-signing off: no signature of Knot's),
// all three running at once, each pinned to the server core, Knot with one worker of each kind. Then,
// on the big store, hostplane with every zone signed: start → serving and RSS against unsigned.
import dgram from 'node:dgram';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import dnsPacket, { type DecodedPacket } from 'dns-packet';
import { fmt, loadAverage, markdownTable } from '../report.js';
import { memoryOf, startProc, stopProc, which, type Memory, type Proc } from './processes.js';
import { dnsperf, type PerfRun, type Question } from './queries.js';
import { median } from './report.js';
import { addSecondary, exportZones, removeSecondary, serving, startHostplane, type Ctx } from './servers.js';
import { RATE, RATE_SECONDS, RSS_LOAD_S, RUNS, SECONDS, SERVER_CORE, WARMUP_S, ZONE10K } from './settings.js';

/** Targets of the signed round (docs/performance.md "Signed zones (DNSSEC)"; decision 0032). */
export const SIGNED_TARGETS = { qpsVsUnsigned: 0.8, qpsVsKnot: 0.8, rssVsUnsigned: 2.5 } as const;

export const KNOTD = '/usr/sbin/knotd';

interface Side {
  label: string;
  startS?: number;
  memory?: Memory;
  qps: PerfRun[];
  steady: PerfRun[];
  skipped?: string;
}

export interface SignedResult {
  unsigned: Side;
  signed: Side;
  knot: Side;
  /** Questions asked with DO of Knot and of hostplane signed, and how many answers differ (records, TTLs, RRSIG bytes). */
  differ?: { checked: number; count: number; examples: string[] };
  big?: { records: number; startS: number; serving: Memory; afterLoad: Memory; load: PerfRun; unsigned?: { startS: number; rssMb: number; afterMb: number } };
}

export const signedResult = (knotSkipped?: string): SignedResult => ({
  unsigned: { label: 'hostplane, unsigned (no DO)', qps: [], steady: [] },
  signed: { label: 'hostplane, signed (DO)', qps: [], steady: [] },
  knot: { label: 'Knot, the same signed zone (DO)', qps: [], steady: [], skipped: knotSkipped },
});

/** Knot DNS serving `zone` from `file` as it is (no signing, no journal), one UDP, TCP and background worker. */
function knotConf(dir: string, port: number, zone: string, file: string): string {
  return `server:
    rundir: "${dir}"
    listen: 127.0.0.1@${port}
    udp-workers: 1
    tcp-workers: 1
    background-workers: 1
control:
    listen: "${dir}/knot.sock"
log:
  - target: "${dir}/knot.log"
    any: info
database:
    storage: "${dir}"
template:
  - id: default
    storage: "${dir}"
    zonefile-sync: -1
    zonefile-load: whole
    journal-content: none
    dnssec-signing: off
zone:
  - domain: ${zone}
    file: "${file}"
`;
}

function startKnot(c: Ctx, file: string): Proc {
  const dir = path.join(c.dir, 'knot');
  fs.mkdirSync(dir, { recursive: true });
  const conf = path.join(dir, 'knot.conf');
  fs.writeFileSync(conf, knotConf(dir, c.ports.knot, ZONE10K, file));
  return startProc('knot', KNOTD, ['-c', conf], { log: path.join(dir, 'stdout.log'), core: SERVER_CORE });
}

/** An answer to a query with DO reduced to what must agree: rcode, answer and authority records (RRSIG bytes included). */
function doSignature(p: DecodedPacket): string {
  const data = (d: unknown) => JSON.stringify(d, (_k, v: { type?: string; data?: number[] }) => (v && v.type === 'Buffer' && Array.isArray(v.data) ? Buffer.from(v.data).toString('base64') : v));
  const rr = (a: DecodedPacket['answers'][number]) => `${a.name.toLowerCase()} ${a.ttl} ${a.type} ${data((a as { data?: unknown }).data)}`;
  return `${p.rcode} | ${p.answers.map(rr).sort().join(' ; ')} | ${(p.authorities ?? []).map(rr).sort().join(' ; ')}`;
}

/** Each question asked with DO (EDNS0, 1232 bytes), one at a time, up to three tries. */
export async function doAnswersOf(port: number, qs: Question[]): Promise<string[]> {
  const sock = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => sock.bind(0, '127.0.0.1', resolve));
  let waiting: ((p: DecodedPacket) => void) | null = null;
  let id = 0;
  sock.on('message', (msg) => {
    try {
      const p = dnsPacket.decode(msg);
      if (p.id === id) waiting?.(p);
    } catch {}
  });
  try {
    const out: string[] = [];
    for (const q of qs) {
      let answer: DecodedPacket | null = null;
      for (let attempt = 0; attempt < 3 && !answer; attempt++) {
        id = (id + 1) & 0xffff;
        answer = await new Promise<DecodedPacket | null>((resolve) => {
          const t = setTimeout(() => resolve(null), 1000);
          waiting = (p) => {
            clearTimeout(t);
            resolve(p);
          };
          sock.send(dnsPacket.encode({ type: 'query', id, flags: 0, questions: [{ name: q.name, type: q.type as 'A', class: 'IN' }], additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232, flags: dnsPacket.DNSSEC_OK }] }), port, '127.0.0.1');
        });
      }
      out.push(answer ? doSignature(answer) : 'no answer');
    }
    return out;
  } finally {
    sock.close();
  }
}

/**
 * The signed round on the small store: hostplane unsigned, hostplane signed and Knot (when asked for
 * and installed) run at once; RUNS rounds of a full-speed run each on the 10k-record zone's mix, the
 * signed ones with DO; then each at a steady RATE q/s for p99.
 */
export async function signedRound(c: Ctx, s: SignedResult, perf: boolean, sample: Question[]): Promise<void> {
  const running: { side: Side; proc: Proc; port: number; dnssec: boolean }[] = [];
  const mix = c.mixes.zone10k;
  await addSecondary(c);
  try {
    const probe: Question = { name: `h0.${ZONE10K}`, type: 'A' };
    for (const [side, port, dnssec] of [[s.unsigned, c.ports.hpDns, false], [s.signed, c.ports.hpSigned, true]] as const) {
      const t0 = performance.now();
      const p = startHostplane(c, 'dns', dnssec ? 'hostplane-signed.log' : 'hostplane-unsigned.log', { DNS_LISTEN: `127.0.0.1:${port}`, DNS_DNSSEC: dnssec ? 'on' : 'off' });
      running.push({ side, proc: p, port, dnssec });
      side.startS = await serving(p, port, probe, t0, 600);
      side.memory = memoryOf(p.pid);
      c.log(`${side.label} (pid ${p.pid}) serves after ${fmt(side.startS, 2)} s, RSS ${fmt(side.memory.rssMb)} MB`);
    }
    if (!s.knot.skipped) {
      const zoneDir = path.join(c.dir, 'signed-zones');
      const n = await exportZones(c, [ZONE10K], zoneDir, c.ports.hpSigned);
      c.log(`  ${ZONE10K} signed: ${n} records transferred out of hostplane by AXFR for Knot`);
      const t0 = performance.now();
      const k = startKnot(c, path.join(zoneDir, `${ZONE10K}.zone`));
      running.push({ side: s.knot, proc: k, port: c.ports.knot, dnssec: true });
      s.knot.startS = await serving(k, c.ports.knot, probe, t0, 120);
      s.knot.memory = memoryOf(k.pid);
      c.log(`Knot (pid ${k.pid}) serves the signed zone after ${fmt(s.knot.startS, 2)} s, RSS ${fmt(s.knot.memory.rssMb)} MB`);
      const qs = [...sample, { name: `h1.${ZONE10K}`, type: 'MX' }, { name: ZONE10K, type: 'DNSKEY' }, { name: ZONE10K, type: 'SOA' }, { name: `a.b.h2.${ZONE10K}`, type: 'A' }];
      const [mine, theirs] = [await doAnswersOf(c.ports.hpSigned, qs), await doAnswersOf(c.ports.knot, qs)];
      const examples: string[] = [];
      let count = 0;
      mine.forEach((m, i) => {
        if (m === theirs[i]) return;
        count++;
        if (examples.length < 3) examples.push(`${qs[i].name} ${qs[i].type}: hostplane "${m.slice(0, 300)}", Knot "${theirs[i].slice(0, 300)}"`);
      });
      s.differ = { checked: qs.length, count, examples };
      c.log(`  Knot, with DO: ${count ? `${count} of ${qs.length} answers DIFFER from hostplane's, e.g. ${examples.join('; ')}` : `the same records (RRSIG bytes included) as hostplane to ${qs.length} questions`}`);
    }
    if (!perf) return;
    for (let round = 1; round <= RUNS; round++) {
      for (const { side, port, dnssec } of running) {
        const extra = dnssec ? ['-D'] : [];
        if (round === 1 && WARMUP_S > 0) await dnsperf(side.label, 'warm-up', port, mix, WARMUP_S, undefined, extra);
        const r = await dnsperf(side.label, `${ZONE10K} mix${dnssec ? ', DO' : ''}`, port, mix, SECONDS, undefined, extra);
        r.round = round;
        side.qps.push(r);
        c.log(`  signed round ${round}, ${side.label}: ${fmt(r.qps)} q/s (${r.rcodes}; lost ${r.lost})`);
      }
      if (!RATE) continue;
      for (const { side, port, dnssec } of running) {
        const r = await dnsperf(side.label, `${ZONE10K} mix at ${RATE} q/s${dnssec ? ', DO' : ''}`, port, mix, RATE_SECONDS, RATE, dnssec ? ['-D'] : []);
        r.round = round;
        side.steady.push(r);
        c.log(`  signed round ${round}, ${side.label}: at ${RATE} q/s: p50 ${fmt(r.p50Ms!, 3)} ms, p99 ${fmt(r.p99Ms!, 3)} ms (lost ${r.lost})`);
      }
    }
  } finally {
    for (const r of running.reverse()) await stopProc(r.proc);
    await removeSecondary(c);
  }
}

/**
 * The big store with every zone signed (DNS_DNSSEC=on): spawn → the first right answer from the
 * last zone, RSS once serving and after RSS_LOAD_S of the 10k-record mix with DO.
 */
export async function bigSigned(c: Ctx, s: SignedResult, probe: Question, records: number, perf: boolean, unsigned?: { startS: number; rssMb: number; afterMb: number }) {
  const t0 = performance.now();
  const p = startHostplane(c, 'dns', 'hostplane-signed-big.log', { DNS_DNSSEC: 'on' });
  try {
    const startS = await serving(p, c.ports.hpDns, probe, t0, 3600);
    const servingMem = memoryOf(p.pid);
    let load: PerfRun = { server: 'hostplane, signed', load: 'none', qps: NaN, sent: 0, completed: 0, lost: 0, rcodes: '', avgMs: NaN };
    if (perf) load = await dnsperf('hostplane, signed', `${ZONE10K} mix, DO, ${records} signed records loaded`, c.ports.hpDns, c.mixes.zone10k, RSS_LOAD_S, undefined, ['-D']);
    s.big = { records, startS, serving: servingMem, afterLoad: memoryOf(p.pid), load, unsigned };
    c.log(`  hostplane, every zone signed: serving ${records} records after ${fmt(startS, 2)} s; RSS ${fmt(servingMem.rssMb)} MB → ${fmt(s.big.afterLoad.rssMb)} MB after ${RSS_LOAD_S} s of load with DO (${fmt(load.qps)} q/s)`);
  } finally {
    await stopProc(p);
  }
}

/** The signed round's table: every figure with its target. */
export function signedReport(s: SignedResult, perf: boolean) {
  const ratio = (a: number, b: number) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? a / b : NaN);
  const x = (v: number) => (Number.isFinite(v) ? `${fmt(v, 2)}×` : '–');
  const met = (ok: boolean | null) => (ok === null ? '–' : ok ? 'yes' : '**no**');
  const q = (side: Side) => (side.skipped ? NaN : median(side.qps, (r) => r.qps));
  const p99 = (side: Side) => (side.skipped ? NaN : median(side.steady, (r) => r.p99Ms));
  const rows: string[][] = [];
  if (perf) {
    const [u, sg, k] = [q(s.unsigned), q(s.signed), q(s.knot)];
    rows.push(['queries/s, 10k-record zone mix (A, TXT, NXDOMAIN)', fmt(u), fmt(sg), s.knot.skipped ? 'skipped' : fmt(k), x(ratio(sg, u)), x(ratio(sg, k)), `≥ ${SIGNED_TARGETS.qpsVsUnsigned}× unsigned, ≥ ${SIGNED_TARGETS.qpsVsKnot}× Knot`, `${met(Number.isFinite(u) ? ratio(sg, u) >= SIGNED_TARGETS.qpsVsUnsigned : null)}; ${met(Number.isFinite(k) ? ratio(sg, k) >= SIGNED_TARGETS.qpsVsKnot : null)}`]);
    if (RATE) {
      const [pu, ps, pk] = [p99(s.unsigned), p99(s.signed), p99(s.knot)];
      rows.push([`p99 ms at a steady ${RATE} q/s (same mix)`, fmt(pu, 3), fmt(ps, 3), s.knot.skipped ? 'skipped' : fmt(pk, 3), x(ratio(ps, pu)), x(ratio(ps, pk)), '≤ 1.25× (1 ÷ 0.8) each', `${met(Number.isFinite(pu) ? ratio(ps, pu) <= 1.25 : null)}; ${met(Number.isFinite(pk) ? ratio(ps, pk) <= 1.25 : null)}`]);
    }
  }
  rows.push(['start → serving, small store, s', fmt(s.unsigned.startS ?? NaN, 2), fmt(s.signed.startS ?? NaN, 2), s.knot.skipped ? 'skipped' : fmt(s.knot.startS ?? NaN, 2), '', '', '', '']);
  rows.push(['RSS MB, small store (largest process)', fmt(s.unsigned.memory?.rssMb ?? NaN), fmt(s.signed.memory?.rssMb ?? NaN), s.knot.skipped ? 'skipped' : fmt(s.knot.memory?.rssMb ?? NaN), x(ratio(s.signed.memory?.rssMb ?? NaN, s.unsigned.memory?.rssMb ?? NaN)), '', '', '']);
  if (s.big) {
    const b = s.big;
    const u = b.unsigned;
    rows.push([`start → serving ${b.records} records, s`, fmt(u?.startS ?? NaN, 2), fmt(b.startS, 2), '', x(ratio(b.startS, u?.startS ?? NaN)), '', 'reported', '–']);
    rows.push([`RSS MB serving ${b.records} records, once serving`, fmt(u?.rssMb ?? NaN), fmt(b.serving.rssMb), '', x(ratio(b.serving.rssMb, u?.rssMb ?? NaN)), '', `≤ ${SIGNED_TARGETS.rssVsUnsigned}× unsigned`, met(u ? ratio(b.serving.rssMb, u.rssMb) <= SIGNED_TARGETS.rssVsUnsigned : null)]);
    rows.push([`RSS MB after ${RSS_LOAD_S} s of queries (signed: with DO)`, fmt(u?.afterMb ?? NaN), fmt(b.afterLoad.rssMb), '', x(ratio(b.afterLoad.rssMb, u?.afterMb ?? NaN)), '', `≤ ${SIGNED_TARGETS.rssVsUnsigned}× unsigned`, met(u ? ratio(b.afterLoad.rssMb, u.afterMb) <= SIGNED_TARGETS.rssVsUnsigned : null)]);
  }
  console.log();
  console.log(`Signed round: ${ZONE10K} signed by hostplane (DNS_DNSSEC=on), asked with DO (dnsperf -D); Knot serves it as transferred (dnssec-signing off, one worker of each kind); all pinned to core ${SERVER_CORE}; medians of ${RUNS} round${RUNS === 1 ? '' : 's'}`);
  console.log(markdownTable(['measure', 'hostplane unsigned', 'hostplane signed, DO', 'Knot, DO', 'signed ÷ unsigned', 'signed ÷ Knot', 'target', 'met'], rows, 1));
  if (s.differ) console.log(`answers with DO, Knot against hostplane: ${s.differ.count ? `${s.differ.count} of ${s.differ.checked} differ, e.g. ${s.differ.examples.join('; ')}` : `the same records, RRSIG bytes included, to ${s.differ.checked} questions`}`);
  console.log(`(load average now ${loadAverage()})`);
}

/** Why Knot does not run in the signed round, or undefined. */
export const knotSkip = (wanted: boolean): string | undefined => (!wanted ? 'not in BENCH_PEERS_SERVERS' : which('knotd') || fs.existsSync(KNOTD) ? undefined : 'knotd is not installed (apt-get install knot)');
