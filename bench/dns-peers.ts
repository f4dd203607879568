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
// 2. Change → first answer in the 10k-record zone: hostplane `serve`, POST /dns-records until its
//    DNS server answers; PowerDNS with every cache off, a PATCH of the zone's rrsets through its
//    REST API until it answers; in turns of 10 changes, after 10 untimed each.
// 3. BENCH_PEERS_RECORDS in the store (about 996 zones at 1M): each server alone, start → serving
//    (spawn → the first right answer from the last zone), and RSS (VmRSS of the largest process of
//    the server's tree, /proc) once serving and after 5 s of queries.
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
// BENCH_PEERS_POLL_MS [2] (the DNS poll of step 2), BENCH_PEERS_SERVERS [nsd-secondary,nsd,powerdns,hostplane-dgram]
// (the peers; hostplane always runs), BENCH_PEERS_KEEP=1 (keep the temporary directory and its
// logs), BENCH_LOG_LEVEL [info] (hostplane's log level; its log goes to a file), BENCH_JSON=1.
//
// Only 127.0.0.1 ports 41000-41199 are listened on (the first free ones); files go to
// /tmp/hp-peers-*; every process started here is stopped by its PID, also on an error or Ctrl-C.
// test/helpers/secondaries.ts gives the TSIG key; its startSecondary is not used because it takes
// a port the system picks and does not pin NSD to a core.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import dgram from 'node:dgram';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import type { DecodedPacket } from 'dns-packet';
import { benchConfig } from './store.js';
import { benchHeader, fmt, loadAverage, markdownTable, pct, sleep, ACCEPT, JSONAPI, LOG_LEVEL } from './report.js';
import { DnsClient, Filler, bulkRecords, insertRecords, recordCount, txtOf, type BulkTarget } from './dns-zones.js';
import { openStore } from '../src/db/index.js';
import { migrate } from '../src/db/migrate.js';
import { nowIso } from '../src/db/time.js';
import { buildAdmin } from '../src/admin/index.js';
import { serviceDeps } from '../src/resources/service-deps.js';
import { loadDemoData, type DemoCustomer } from '../src/admin/demo.js';
import { nsdConf, testKey } from '../test/helpers/secondaries.js';

const num = (name: string, fallback: number) => {
  const v = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(v) || v < 0) throw new Error(`${name}: not a number ≥ 0`);
  return v;
};
const RECORDS = num('BENCH_PEERS_RECORDS', 1_000_000);
const SECONDS = num('BENCH_PEERS_SECONDS', 5);
const RUNS = Math.max(1, num('BENCH_PEERS_RUNS', 3));
const WARMUP_S = num('BENCH_PEERS_WARMUP_S', 2);
const RATE = num('BENCH_PEERS_RATE', 5000);
const RATE_SECONDS = num('BENCH_PEERS_RATE_SECONDS', 5);
const OUTSTANDING = num('BENCH_PEERS_OUTSTANDING', 100);
const CHANGES = num('BENCH_PEERS_CHANGES', 100);
const POLL_MS = num('BENCH_PEERS_POLL_MS', 2);
/** The peers to run; hostplane always runs (its zones and answers are the reference). */
const SERVERS = new Set((process.env.BENCH_PEERS_SERVERS ?? 'nsd-secondary,nsd,powerdns,hostplane-dgram').split(',').map((s) => s.trim()));
const KEEP = process.env.BENCH_PEERS_KEEP === '1';
/** Seconds of load between the two RSS readings of the big store. */
const RSS_LOAD_S = 5;

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PORT_RANGE = [41000, 41199] as const;
const SERVER_CORE = 0;
const CLIENT_CORE = 1;
const ZONE100 = 'zone100.example';
const ZONE10K = 'zone10k.example';
const MIX_LINES = 10_000;
/** Questions of each mix asked of every server one by one, and compared with hostplane's answers. */
const CHECKED = 300;
const PDNS_SCHEMAS = ['/usr/share/doc/pdns-backend-sqlite3/schema.sqlite3.sql', '/usr/share/pdns-backend-sqlite3/schema/schema.sqlite3.sql'];

// ---- programs ----------------------------------------------------------------------------------

function which(name: string): string | null {
  for (const dir of [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/usr/bin', '/sbin']) {
    const p = path.join(dir || '.', name);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {}
  }
  return null;
}

/** The peers' programs; `null` when missing. */
export function peerPrograms() {
  return { nsd: which('nsd'), pdns: which('pdns_server'), dnsperf: which('dnsperf') };
}

/** BENCH_DNS_PEERS: `0` never, `1` always, unset when nsd, pdns_server and dnsperf are all installed. */
export function peersWanted(env = process.env): boolean {
  if (env.BENCH_DNS_PEERS === '0') return false;
  if (env.BENCH_DNS_PEERS === '1') return true;
  const p = peerPrograms();
  return Boolean(p.nsd && p.pdns && p.dnsperf);
}

// ---- processes ---------------------------------------------------------------------------------

/** A process's start time (field 22 of /proc/<pid>/stat): tells a live process from a reused PID. */
function startTime(pid: number): string | null {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return s.slice(s.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/** Every process below `pid` (children, grandchildren …), read from /proc. */
function descendants(pid: number): number[] {
  const parent = new Map<number, number>();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const s = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      parent.set(Number(d), Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {}
  }
  const out: number[] = [];
  for (let frontier = [pid]; frontier.length; ) {
    const next = [...parent].filter(([, pp]) => frontier.includes(pp)).map(([p]) => p);
    out.push(...next);
    frontier = next;
  }
  return out;
}

const statusKb = (pid: number, field: string): number => {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : NaN;
  } catch {
    return NaN;
  }
};
const pssKb = (pid: number): number => {
  try {
    const m = /^Pss:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return m ? Number(m[1]) : NaN;
  } catch {
    return NaN;
  }
};

interface Memory {
  /** VmRSS of the largest process of the server's tree, MB. */
  rssMb: number;
  /** Which process that is (its name in /proc). */
  process: string;
  /** Processes in the tree, and the sum of their proportional set sizes (shared pages split), MB. */
  processes: number;
  pssMb: number;
}

function memoryOf(pid: number): Memory {
  const pids = [pid, ...descendants(pid)];
  let best = { rss: -1, name: '' };
  let pss = 0;
  for (const p of pids) {
    const rss = statusKb(p, 'VmRSS');
    if (rss > best.rss) {
      let name = '?';
      try {
        name = fs.readFileSync(`/proc/${p}/comm`, 'utf8').trim();
      } catch {}
      best = { rss, name };
    }
    const x = pssKb(p);
    if (Number.isFinite(x)) pss += x;
  }
  return { rssMb: best.rss / 1024, process: best.name, processes: pids.length, pssMb: pss / 1024 };
}

interface Proc {
  name: string;
  pid: number;
  child: ChildProcess;
  exited: Promise<number | null>;
  log: string;
  /** Processes seen below it (NSD forks), with their start times, so none outlives the stop. */
  known: Map<number, string>;
}

const procs = new Set<Proc>();
/** Set by SIGINT/SIGTERM: the bench stops what it started and exits 130. */
let interrupted = false;

/**
 * Starts `cmd args` in its own process group (a Ctrl-C reaches only the bench, which then stops
 * it by PID), pinned to `core` when given, output appended to `log`.
 */
function startProc(name: string, cmd: string, args: string[], o: { log: string; core?: number; env?: NodeJS.ProcessEnv; cwd?: string }): Proc {
  const [file, argv] = o.core === undefined ? [cmd, args] : ['taskset', ['-c', String(o.core), cmd, ...args]];
  const fd = fs.openSync(o.log, 'a');
  const child = spawn(file, argv, { cwd: o.cwd ?? REPO, env: o.env ?? process.env, stdio: ['ignore', fd, fd], detached: true });
  fs.closeSync(fd);
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.once('error', () => resolve(-1));
  });
  const p: Proc = { name, pid: child.pid ?? -1, child, exited, log: o.log, known: new Map() };
  if (p.pid < 0) throw new Error(`${name}: could not start ${file}`);
  procs.add(p);
  return p;
}

const alive = (pid: number, start: string | undefined) => start !== undefined && startTime(pid) === start;

/** Remembers the processes below `p` (call while it runs: NSD's server processes are its grandchildren). */
function noteChildren(p: Proc) {
  for (const c of descendants(p.pid)) {
    const st = startTime(c);
    if (st) p.known.set(c, st);
  }
}

/** SIGTERM to the PID, SIGKILL after `graceMs`; then the same for any process it left behind. */
async function stopProc(p: Proc, graceMs = 10_000): Promise<void> {
  if (!procs.has(p)) return;
  noteChildren(p);
  if (p.child.exitCode === null && p.child.signalCode === null) {
    try {
      process.kill(p.pid, 'SIGTERM');
    } catch {}
    const t = setTimeout(() => {
      try {
        process.kill(p.pid, 'SIGKILL');
      } catch {}
    }, graceMs);
    await p.exited;
    clearTimeout(t);
  }
  for (const [pid, st] of p.known) {
    for (let i = 0; i < 50 && alive(pid, st); i++) await sleep(100);
    if (alive(pid, st)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
    }
  }
  procs.delete(p);
}

/** At exit, whatever is still running: SIGKILL by PID (synchronous, for process.on('exit')). */
function killAllNow() {
  const kill = (pid: number) => {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  };
  for (const p of procs) {
    if (p.child.exitCode === null && p.child.signalCode === null) kill(p.pid);
    for (const [pid, st] of p.known) if (alive(pid, st)) kill(pid);
  }
  procs.clear();
}

/** Runs a command to its end: its exit code and output (stdout to `stdoutFile` when given). */
async function run(name: string, cmd: string, args: string[], o: { core?: number; env?: NodeJS.ProcessEnv; stdoutFile?: string; timeoutMs?: number } = {}): Promise<{ code: number | null; out: string; err: string }> {
  const [file, argv] = o.core === undefined ? [cmd, args] : ['taskset', ['-c', String(o.core), cmd, ...args]];
  const outFd = o.stdoutFile ? fs.openSync(o.stdoutFile, 'w') : null;
  const child = spawn(file, argv, { cwd: REPO, env: o.env ?? process.env, stdio: ['ignore', outFd ?? 'pipe', 'pipe'], detached: true });
  if (outFd !== null) fs.closeSync(outFd);
  const p: Proc = { name, pid: child.pid ?? -1, child, exited: Promise.resolve(null), log: '', known: new Map() };
  let out = '';
  let err = '';
  child.stdout?.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  p.exited = new Promise((resolve) => {
    child.once('close', (code) => resolve(code));
    child.once('error', (e) => {
      err += String(e);
      resolve(-1);
    });
  });
  if (p.pid > 0) procs.add(p);
  const timer = o.timeoutMs ? setTimeout(() => void stopProc(p, 2000), o.timeoutMs) : null;
  const code = await p.exited;
  if (timer) clearTimeout(timer);
  procs.delete(p);
  return { code, out, err };
}

// ---- ports -------------------------------------------------------------------------------------

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const tcp = net.createServer();
    tcp.once('error', () => resolve(false));
    tcp.listen(port, '127.0.0.1', () => {
      const udp = dgram.createSocket('udp4');
      udp.once('error', () => tcp.close(() => resolve(false)));
      udp.bind(port, '127.0.0.1', () => udp.close(() => tcp.close(() => resolve(true))));
    });
  });
}

/** `n` ports of 41000-41199 free for UDP and TCP on 127.0.0.1 a moment ago. */
async function ports(n: number): Promise<number[]> {
  const out: number[] = [];
  for (let p = PORT_RANGE[0]; p <= PORT_RANGE[1] && out.length < n; p++) if (await portFree(p)) out.push(p);
  if (out.length < n) throw new Error(`fewer than ${n} free ports in ${PORT_RANGE.join('-')}`);
  return out;
}

// ---- zone content and questions ----------------------------------------------------------------

/** mulberry32: the same mixes in every run. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Question {
  name: string;
  type: string;
}

/** 60% A of existing names, 20% TXT of existing names, 20% names that do not exist (NXDOMAIN). */
function questionMix(zone: string, aNames: string[], txtNames: string[], seed: number): Question[] {
  const r = random(seed);
  const pick = (xs: string[]) => xs[Math.floor(r() * xs.length)];
  const out: Question[] = [];
  for (let i = 0; i < MIX_LINES; i++) {
    const x = r();
    if (x < 0.6) out.push({ name: `${pick(aNames)}.${zone}`, type: 'A' });
    else if (x < 0.8) out.push({ name: `${pick(txtNames)}.${zone}`, type: 'TXT' });
    else out.push({ name: `nx${Math.floor(r() * 1e6)}.${zone}`, type: 'A' });
  }
  return out;
}

/** A server's answer reduced to what must agree: rcode and the answer section (names, TTLs, types, data). */
function signature(p: DecodedPacket): string {
  const data = (a: DecodedPacket['answers'][number]) =>
    a.type === 'TXT' ? txtOf({ ...p, answers: [a] }).join('') : typeof a.data === 'object' ? JSON.stringify(a.data) : String(a.data);
  return `${p.rcode} ${p.answers.map((a) => `${a.name.toLowerCase()} ${a.ttl} ${a.type} ${data(a)}`).sort().join(' | ')}`;
}

async function answersOf(port: number, qs: Question[]): Promise<string[]> {
  const client = new DnsClient(port);
  try {
    const out: string[] = [];
    for (const q of qs) out.push(signature(await client.until(q.name, q.type, () => true, 250, 3000)));
    return out;
  } finally {
    client.close();
  }
}

// ---- dnsperf -----------------------------------------------------------------------------------

interface PerfRun {
  server: string;
  load: string;
  /** The round of queryRounds, for the runs of the small store. */
  round?: number;
  qps: number;
  sent: number;
  completed: number;
  lost: number;
  rcodes: string;
  avgMs: number;
  /** From the per-query latencies (-v), steady-rate runs only. */
  p50Ms?: number;
  p99Ms?: number;
  maxMs?: number;
}

async function dnsperf(server: string, load: string, port: number, file: string, seconds: number, rate?: number): Promise<PerfRun> {
  const args = ['-s', '127.0.0.1', '-p', String(port), '-d', file, '-l', String(seconds), '-c', '1', '-T', '1', '-q', String(OUTSTANDING), '-t', '2'];
  if (rate) args.push('-Q', String(rate), '-v');
  const r = await run('dnsperf', which('dnsperf') ?? 'dnsperf', args, { core: CLIENT_CORE, timeoutMs: (seconds + 30) * 1000 });
  const text = r.out + r.err;
  const m = (re: RegExp) => Number(re.exec(text)?.[1] ?? NaN);
  const run1: PerfRun = {
    server,
    load,
    qps: m(/Queries per second:\s+([\d.]+)/),
    sent: m(/Queries sent:\s+(\d+)/),
    completed: m(/Queries completed:\s+(\d+)/),
    lost: m(/Queries lost:\s+(\d+)/),
    rcodes: (/Response codes:\s+(.*)/.exec(text)?.[1] ?? '').trim(),
    avgMs: m(/Average Latency \(s\):\s+([\d.]+)/) * 1000,
  };
  if (r.code !== 0 || !Number.isFinite(run1.qps)) throw new Error(`dnsperf against ${server} failed (${r.code}): ${text.slice(-1500)}`);
  if (rate) {
    const lat: number[] = [];
    for (const m2 of r.out.matchAll(/^> \S+ \S+ \S+ ([\d.]+)$/gm)) lat.push(Number(m2[1]) * 1000);
    lat.sort((a, b) => a - b);
    run1.p50Ms = pct(lat, 50);
    run1.p99Ms = pct(lat, 99);
    run1.maxMs = lat[lat.length - 1];
  }
  return run1;
}

// ---- the servers -------------------------------------------------------------------------------

interface Ports {
  hpDns: number;
  /** hostplane with DNS_UDP_BATCH=off */
  hpDgram: number;
  hpHttp: number;
  nsd: number;
  secondary: number;
  /** PowerDNS's HTTP API (its webserver), where changes are made in step 2. */
  pdnsApi: number;
  pdns: number;
}

interface Ctx {
  dir: string;
  db: string;
  ports: Ports;
  key: ReturnType<typeof testKey>;
  keyFile: string;
  owner: DemoCustomer;
  mixes: { zone100: string; zone10k: string };
  sample: Question[];
  reference: string[];
  log: (s: string) => void;
}

const hostplaneEnv = (c: Ctx, extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  ...process.env,
  DATABASE_URL: c.db,
  DNS_LISTEN: `127.0.0.1:${c.ports.hpDns}`,
  HOST: '127.0.0.1',
  PORT: String(c.ports.hpHttp),
  PUBLIC_BASE_URL: `http://127.0.0.1:${c.ports.hpHttp}`,
  DEMO_DATA: 'off',
  RATE_LIMIT_MAX: '1000000000',
  ERROR_BLOCK_MAX: '1000000000',
  LOG_LEVEL,
  ...extra,
});

/** hostplane as `npm start` runs it: the build in dist/ (made afresh at the start of the bench). */
const HOSTPLANE_MAIN = 'dist/main.js';
const hostplaneCli = (c: Ctx, args: string[]) => run('hostplane', process.execPath, [HOSTPLANE_MAIN, ...args], { env: hostplaneEnv(c) });

/** Waits until `port` answers `probe` with an answer of its type; seconds from `t0` (performance.now()). */
async function serving(p: Proc, port: number, probe: Question, t0: number, limitS: number): Promise<number> {
  const client = new DnsClient(port);
  try {
    const end = Date.now() + limitS * 1000;
    for (;;) {
      if (p.child.exitCode !== null || p.child.signalCode !== null) throw new Error(`${p.name} exited (${p.child.exitCode ?? p.child.signalCode}); its log ${p.log}:\n${tail(p.log)}`);
      try {
        await client.until(probe.name, probe.type, (a) => a.rcode === 'NOERROR' && a.answers.some((x) => x.type === probe.type), 20, 1000);
        return (performance.now() - t0) / 1000;
      } catch {
        if (Date.now() > end) throw new Error(`${p.name} does not answer ${probe.name} ${probe.type} after ${limitS} s; its log ${p.log}:\n${tail(p.log)}`);
      }
    }
  } finally {
    client.close();
  }
}

function tail(file: string, lines = 30): string {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

function startNsd(c: Ctx, label: string, port: number, zones: { name: string; file: string }[], secondary?: { primaryPort: number; key: ReturnType<typeof testKey> }): Proc {
  const dir = path.join(c.dir, label);
  fs.mkdirSync(dir, { recursive: true });
  const conf = path.join(dir, 'nsd.conf');
  fs.writeFileSync(conf, nsdConf(dir, port, zones, secondary));
  return startProc(label, which('nsd') ?? 'nsd', ['-d', '-c', conf, '-P', path.join(dir, 'nsd.pid')], { log: path.join(dir, 'stdout.log'), core: SERVER_CORE });
}

function pdnsConf(c: Ctx, dir: string, database: string, caches: boolean): string {
  return [
    'launch=gsqlite3',
    `gsqlite3-database=${database}`,
    'local-address=127.0.0.1',
    `local-port=${c.ports.pdns}`,
    'guardian=no',
    'daemon=no',
    'disable-syslog=yes',
    `socket-dir=${dir}`,
    'write-pid=no',
    'security-poll-suffix=',
    'loglevel=4',
    ...(caches
      ? ['webserver=no', 'api=no']
      : [
          'cache-ttl=0', 'query-cache-ttl=0', 'negquery-cache-ttl=0', 'zone-cache-refresh-interval=0',
          // Changes through its REST API, as hostplane's go through its own (step 2).
          'webserver=yes', 'webserver-address=127.0.0.1', `webserver-port=${c.ports.pdnsApi}`, 'webserver-allow-from=127.0.0.0/8', 'api=yes', `api-key=${PDNS_API_KEY}`,
        ]),
    '',
  ].join('\n');
}

function startPdns(c: Ctx, label: string, database: string, caches: boolean): Proc {
  const dir = path.join(c.dir, label);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'pdns.conf'), pdnsConf(c, dir, database, caches));
  return startProc(label, which('pdns_server') ?? 'pdns_server', [`--config-dir=${dir}`], { log: path.join(dir, 'stdout.log'), core: SERVER_CORE });
}

/** The presence zones of the store, in hostplane's loading order. */
function zonesOf(db: string): string[] {
  const d = new Database(db, { readonly: true });
  try {
    return (d.prepare('select name from domains where has_presence = 1 order by name').all() as { name: string }[]).map((r) => r.name);
  } finally {
    d.close();
  }
}

/**
 * Every zone as hostplane serves it, by AXFR with the secondary's TSIG key (dig, 50 zones per
 * call), written as zone files `<dir>/<zone>.zone`; answers the records transferred.
 */
async function exportZones(c: Ctx, zones: string[], dir: string): Promise<number> {
  fs.mkdirSync(dir, { recursive: true });
  let records = 0;
  const out = path.join(c.dir, 'axfr.txt');
  for (let i = 0; i < zones.length; i += 50) {
    const chunk = zones.slice(i, i + 50);
    const args = ['@127.0.0.1', '-p', String(c.ports.hpDns), '-y', `hmac-sha256:${c.key.name}:${c.key.secret}`, '+onesoa', '+nocmd', '+nostats', '+nocomments', '+noquestion', '+time=60', '+tries=1'];
    for (const z of chunk) args.push(z, 'AXFR');
    const r = await run('dig', 'dig', args, { stdoutFile: out, timeoutMs: 600_000 });
    const text = fs.readFileSync(out, 'utf8');
    if (r.code !== 0 || /Transfer failed|communications error|connection refused/i.test(text)) throw new Error(`AXFR from hostplane failed (${r.code}): ${(text + r.err).slice(0, 1500)}`);
    const byZone = new Map<string, string[]>();
    let current: string[] | null = null;
    for (const line of text.split('\n')) {
      if (!line || line.startsWith(';')) continue;
      const f = line.split(/\s+/);
      // dig prints the TSIG record of every signed message: not zone content.
      if (f[3] === 'TSIG') continue;
      if (f[3] === 'SOA') {
        current = [];
        byZone.set(f[0].replace(/\.$/, '').toLowerCase(), current);
      }
      if (!current) throw new Error(`AXFR output does not start with a SOA: ${line}`);
      current.push(line);
    }
    for (const z of chunk) {
      const lines = byZone.get(z);
      if (!lines) throw new Error(`AXFR of ${z} gave nothing: ${text.slice(0, 500)}`);
      fs.writeFileSync(path.join(dir, `${z}.zone`), lines.join('\n') + '\n');
      records += lines.length;
    }
  }
  fs.rmSync(out, { force: true });
  return records;
}

/** A fresh PowerDNS sqlite3 database with `zones` from their zone files, through PowerDNS's own zone2sql. */
async function pdnsDatabase(c: Ctx, zones: string[], zoneDir: string, file: string): Promise<void> {
  fs.rmSync(file, { force: true });
  const schema = PDNS_SCHEMAS.find((s) => fs.existsSync(s));
  if (!schema) throw new Error(`no PowerDNS sqlite3 schema in ${PDNS_SCHEMAS.join(' or ')}`);
  const d = new Database(file);
  d.exec(fs.readFileSync(schema, 'utf8'));
  d.close();
  const named = path.join(c.dir, 'named.conf');
  fs.writeFileSync(named, zones.map((z) => `zone "${z}" { type master; file "${path.join(zoneDir, `${z}.zone`)}"; };\n`).join(''));
  const sqlFile = path.join(c.dir, 'zones.sql');
  const z = await run('zone2sql', which('zone2sql') ?? 'zone2sql', ['--gsqlite', '--transactions', `--named-conf=${named}`], { stdoutFile: sqlFile, timeoutMs: 1_800_000 });
  if (z.code !== 0) throw new Error(`zone2sql failed (${z.code}): ${z.err.slice(-1500)}`);
  const r = await run('sqlite3', 'sh', ['-c', 'exec sqlite3 "$0" < "$1"', file, sqlFile], { timeoutMs: 1_800_000 });
  if (r.code !== 0) throw new Error(`loading the PowerDNS database failed (${r.code}): ${r.err.slice(-1500)}`);
  fs.rmSync(sqlFile, { force: true });
}

// ---- results -----------------------------------------------------------------------------------

type ServerName = 'hostplane' | 'PowerDNS' | 'NSD' | 'NSD secondary' | 'hostplane (dgram)';

interface ServerResult {
  server: ServerName;
  /** How it was started. */
  how: string;
  startS?: number;
  memory?: Memory;
  /** Every round's run: full speed on each mix, and the steady rate. */
  qps100: PerfRun[];
  qps10k: PerfRun[];
  steady: PerfRun[];
  change?: { n: number; p50: number; p99: number; max: number; /** hostplane: POST sent → 202 received, p50. */ postP50?: number };
  /** Questions of the check whose answers differ from hostplane's, and the first few. */
  differ?: { checked: number; count: number; examples: string[] };
  big?: { records: number; zones: number; startS: number; serving: Memory; afterLoad: Memory; load: PerfRun };
  /** NSD secondary: spawn → every zone at hostplane's serial. */
  transferS?: number;
  skipped?: string;
}

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

/**
 * POST /dns-records (TXT) as the zone's owner, then ask hostplane every POLL_MS until it answers;
 * `posts` gets the POST → 202 part of each.
 */
async function hostplaneChanges(c: Ctx, n: number, label: string, posts: number[] = []): Promise<number[]> {
  const client = new DnsClient(c.ports.hpDns);
  const out: number[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const name = `${label}${i}`;
      const text = `hostplane-peers ${label} ${i}`;
      const t0 = performance.now();
      const res = await fetch(`http://127.0.0.1:${c.ports.hpHttp}/dns-records`, {
        method: 'POST',
        headers: { authorization: `token ${c.owner.token}`, accept: ACCEPT, 'content-type': JSONAPI },
        body: JSON.stringify({ data: { type: 'dns-record', attributes: { domain: ZONE10K, name, record_type: 'TXT', data: text } } }),
      });
      if (res.status !== 202) throw new Error(`POST /dns-records: ${res.status} ${(await res.text()).slice(0, 300)}`);
      posts.push(performance.now() - t0);
      await res.arrayBuffer().catch(() => {});
      await client.until(`${name}.${ZONE10K}`, 'TXT', (p) => txtOf(p).includes(text), POLL_MS, 10_000);
      out.push(performance.now() - t0);
    }
  } finally {
    client.close();
  }
  return out;
}

/** PowerDNS's API key in step 2 (loopback only). */
const PDNS_API_KEY = 'hp-peers-bench';

/**
 * A new TXT RRset through PowerDNS's REST API (PATCH of the zone's rrsets, its caches off: the
 * comparable path to hostplane's POST), then ask it every POLL_MS until it answers.
 */
async function pdnsChanges(c: Ctx, n: number, label: string): Promise<number[]> {
  const client = new DnsClient(c.ports.pdns);
  const out: number[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const name = `${label}${i}.${ZONE10K}`;
      const text = `pdns-peers ${label} ${i}`;
      const t0 = performance.now();
      const res = await fetch(`http://127.0.0.1:${c.ports.pdnsApi}/api/v1/servers/localhost/zones/${ZONE10K}.`, {
        method: 'PATCH',
        headers: { 'x-api-key': PDNS_API_KEY, 'content-type': 'application/json' },
        body: JSON.stringify({ rrsets: [{ name: `${name}.`, type: 'TXT', ttl: 3600, changetype: 'REPLACE', records: [{ content: `"${text}"`, disabled: false }] }] }),
      });
      if (res.status !== 204) throw new Error(`PowerDNS PATCH ${ZONE10K}: ${res.status} ${(await res.text()).slice(0, 300)}`);
      await client.until(name, 'TXT', (p) => txtOf(p).includes(text), POLL_MS, 10_000);
      out.push(performance.now() - t0);
    }
  } finally {
    client.close();
  }
  return out;
}

const changeSummary = (ms: number[]) => ({ n: ms.length, p50: pct(ms, 50), p99: pct(ms, 99), max: Math.max(...ms) });

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
  const [hpDns, hpHttp, nsd, secondary, pdns, pdnsApi, hpDgram] = await ports(7);
  const c: Ctx = { dir, db, ports: { hpDns, hpHttp, nsd, secondary, pdns, pdnsApi, hpDgram }, key, keyFile, owner, mixes, sample, reference: [], log };
  log(`store ${db}: ${await recordCount(target)} records; ports ${JSON.stringify(c.ports)}`);
  await store.close();
  return c;
}

async function addSecondary(c: Ctx) {
  const r = await hostplaneCli(c, ['admin', 'dns-secondary', 'add', '--name', 'nsd-peers', '--address', `127.0.0.1:${c.ports.secondary}`, '--tsig-key-file', c.keyFile]);
  if (r.code !== 0) throw new Error(`dns-secondary add: ${r.out}${r.err}`);
}

async function removeSecondary(c: Ctx) {
  const r = await hostplaneCli(c, ['admin', 'dns-secondary', 'remove', 'nsd-peers']);
  if (r.code !== 0) throw new Error(`dns-secondary remove: ${r.out}${r.err}`);
}

const probeSmall: Question = { name: `h0.${ZONE10K}`, type: 'A' };

/** The median of the runs' `get`; NaN for none. */
const median = (runs: PerfRun[], get: (r: PerfRun) => number | undefined) => pct(runs.map(get).filter((x): x is number => x !== undefined && Number.isFinite(x)), 50);

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

const startHostplane = (c: Ctx, command: 'dns' | 'serve', log: string, env: Record<string, string> = {}) =>
  startProc(`hostplane ${command}`, process.execPath, [HOSTPLANE_MAIN, command], { log: path.join(c.dir, log), core: SERVER_CORE, env: hostplaneEnv(c, env) });

/** How a started hostplane reads UDP, from its 'DNS server ready' log line ('batch' or 'dgram'). */
function udpKindOf(p: Proc): string {
  const m = /"udp":"(\w+)"[^\n]*DNS server ready/.exec(fs.readFileSync(p.log, 'utf8'));
  return m ? m[1] : 'unknown';
}

/** Waits until the NSD secondary serves every zone at the serial hostplane serves. */
async function transferred(c: Ctx, zones: string[]) {
  const primary = new DnsClient(c.ports.hpDns);
  const secondary = new DnsClient(c.ports.secondary);
  const serialOf = (p: DecodedPacket) => (p.answers.find((a) => a.type === 'SOA')?.data as { serial?: number } | undefined)?.serial;
  try {
    for (const z of zones) {
      const want = serialOf(await primary.until(z, 'SOA', () => true, 250, 3000));
      await secondary.until(z, 'SOA', (a) => serialOf(a) === want, 50, 600_000);
    }
  } finally {
    primary.close();
    secondary.close();
  }
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
    if (interrupted) return;
    interrupted = true;
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
  let bigZones = 0;
  let bigRecords = 0;
  try {
    const c = await setup(dir, log);
    const zoneDir = path.join(dir, 'zones');
    const pdnsDb = path.join(dir, 'pdns.sqlite3');
    let zones = zonesOf(c.db);

    // ---- 1. queries: every server started, then rounds of load, one server at a time
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
          const ns = startNsd(c, 'nsd-secondary', c.ports.secondary, zones.map((z) => ({ name: z, file: path.join(dir, 'nsd-secondary', `${z}.zone`) })), { primaryPort: c.ports.hpDns, key: c.key });
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

    // ---- 2. change → answer: hostplane serve and PowerDNS (caches off) in turns of 10 changes
    if (CHANGES > 0) {
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

    // ---- 3. the big store: start → serving and RSS, one server at a time
    if (RECORDS > 0) {
      const store = await openStore(c.db);
      const target: BulkTarget = { engine: 'sqlite', store };
      // Bulk zones of 1000 records (BULK_ZONE), owned by the 10k zone's owner.
      const loadS = await new Filler(target, [c.owner]).fill(RECORDS);
      bigRecords = await recordCount(target);
      await store.close();
      zones = zonesOf(c.db);
      bigZones = zones.length;
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
    }
  } finally {
    for (const p of [...procs]) await stopProc(p);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.off('exit', killAllNow);
    if (KEEP) console.log(`(kept ${dir})`);
    else fs.rmSync(dir, { recursive: true, force: true });
  }
  report(results, load0, perf, bigRecords, bigZones);
  console.log(`total ${fmt((Date.now() - started) / 1000, 1)} s`);
}

// ---- output ------------------------------------------------------------------------------------

function report(results: ServerResult[], load0: number[], perf: boolean, bigRecords: number, bigZones: number) {
  const [hp, pdns, nsd, sec, dgram] = results;
  const cell = (r: ServerResult, v: number | undefined, digits = 0) => (r.skipped ? 'skipped' : v === undefined || !Number.isFinite(v) ? '–' : fmt(v, digits));
  const ratio = (a: number | undefined, b: number | undefined) => (a !== undefined && b !== undefined && Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${fmt(a / b, 2)}×` : '–');
  type Row = [string, (r: ServerResult) => number | undefined, number];
  const rows: Row[] = [
    ...(perf
      ? ([
          ['queries/s, 100-record zone (A, TXT, NXDOMAIN mix)', (r) => median(r.qps100, (x) => x.qps), 0],
          ['queries/s, 10k-record zone (same mix)', (r) => median(r.qps10k, (x) => x.qps), 0],
          [`p99 ms at a steady ${RATE} q/s (100-record zone mix)`, (r) => median(r.steady, (x) => x.p99Ms), 2],
        ] as Row[])
      : []),
    ['change → first answer in the 10k-record zone, p50 ms', (r) => r.change?.p50, 1],
    ...(bigRecords
      ? ([
          [`RSS MB serving ${bigRecords} records (${bigZones} zones), once serving`, (r) => r.big?.serving.rssMb, 0],
          [`RSS MB after ${RSS_LOAD_S} s of queries`, (r) => r.big?.afterLoad.rssMb, 0],
          [`start → serving ${bigRecords} records, s`, (r) => r.big?.startS, 2],
        ] as Row[])
      : []),
  ];
  const body = rows.map(([label, get, digits]) => [label, cell(hp, get(hp), digits), cell(pdns, get(pdns), digits), cell(nsd, get(nsd), digits), ratio(get(hp), get(pdns)), ratio(get(hp), get(nsd))]);
  if (perf) {
    for (const [label, key] of [['100-record zone', 'qps100'], ['10k-record zone', 'qps10k']] as const) {
      const a = median(hp[key], (x) => x.qps);
      const b = median(sec[key], (x) => x.qps);
      body.push([`queries/s through an NSD secondary fed by hostplane, ${label}`, cell(hp, a), '', cell(sec, b), '', ratio(a, b)]);
    }
  }
  console.log();
  console.log(
    `Side by side: every server pinned to core ${SERVER_CORE}, dnsperf to core ${CLIENT_CORE}; queries/s and p99 are the median of ${RUNS} round${RUNS === 1 ? '' : 's'}; ` +
      `ratios = hostplane's figure ÷ the peer's (q/s: above 1 is faster; ms, MB, s: above 1 is more)`,
  );
  console.log(markdownTable(['measure', 'hostplane', 'PowerDNS', 'NSD', 'hostplane ÷ PowerDNS', 'hostplane ÷ NSD'], body, 1));
  if (perf && !dgram.skipped) {
    console.log();
    console.log("hostplane's UDP read in batches (the native reader) and by node's dgram (DNS_UDP_BATCH=off), in the same rounds");
    const dg = (get: (r: PerfRun) => number | undefined, runs: (r: ServerResult) => PerfRun[], digits: number) => [cell(hp, median(runs(hp), get), digits), cell(dgram, median(runs(dgram), get), digits), ratio(median(runs(hp), get), median(runs(dgram), get))];
    console.log(
      markdownTable(
        ['measure', 'batch', 'dgram', 'batch ÷ dgram'],
        [
          ['queries/s, 100-record zone', ...dg((x) => x.qps, (r) => r.qps100, 0)],
          ['queries/s, 10k-record zone', ...dg((x) => x.qps, (r) => r.qps10k, 0)],
          [`p50 ms at ${RATE} q/s`, ...dg((x) => x.p50Ms, (r) => r.steady, 3)],
          [`p99 ms at ${RATE} q/s`, ...dg((x) => x.p99Ms, (r) => r.steady, 3)],
        ],
        1,
      ),
    );
  }
  for (const r of results) if (r.skipped) console.log(`${r.server}: skipped (${r.skipped})`);
  if (sec.transferS !== undefined) console.log(`NSD secondary: every zone transferred from hostplane (AXFR, TSIG) and served ${fmt(sec.transferS, 2)} s after NSD started`);
  if (!perf) console.log('queries/s and p99: skipped (dnsperf is not installed)');

  const runs = results.flatMap((r) => [...r.qps100, ...r.qps10k, ...r.steady, r.big?.load].filter((x): x is PerfRun => !!x && x.load !== 'none'));
  if (runs.length) {
    console.log();
    console.log(`dnsperf runs (-c 1 -T 1 -q ${OUTSTANDING}; full speed ${SECONDS} s, the first round after ${WARMUP_S} s untimed; steady rate ${RATE_SECONDS} s with -v, p50/p99/max from its per-query latencies)`);
    console.log(
      markdownTable(
        ['server', 'round', 'load', 'q/s', 'sent', 'completed', 'lost', 'avg ms', 'p50 ms', 'p99 ms', 'max ms', 'response codes'],
        runs.map((x) => [x.server, x.round === undefined ? '' : String(x.round), x.load, fmt(x.qps), String(x.sent), String(x.completed), String(x.lost), fmt(x.avgMs, 3), x.p50Ms === undefined ? '' : fmt(x.p50Ms, 3), x.p99Ms === undefined ? '' : fmt(x.p99Ms, 3), x.maxMs === undefined ? '' : fmt(x.maxMs, 2), x.rcodes]),
        3,
      ),
    );
  }
  console.log();
  console.log('Servers: start, memory, answers');
  console.log(
    markdownTable(
      ['server', 'started as', 'start → serving s (small store)', 'RSS MB (small store)', 'processes', 'PSS MB, all processes', 'change → answer p50 / p99 / max ms', 'answers ≠ hostplane\'s'],
      results.map((r) => [
        r.server,
        r.how,
        r.skipped ? 'skipped' : fmt(r.startS ?? r.transferS ?? NaN, 2),
        r.memory ? `${fmt(r.memory.rssMb)} (${r.memory.process})` : '–',
        r.memory ? String(r.memory.processes) : '–',
        r.memory ? fmt(r.memory.pssMb) : '–',
        r.change ? `${fmt(r.change.p50, 1)} / ${fmt(r.change.p99, 1)} / ${fmt(r.change.max, 1)} (${r.change.n}${r.change.postP50 === undefined ? '' : `; POST → 202 p50 ${fmt(r.change.postP50, 1)}`})` : '–',
        r.server === 'hostplane' ? '(reference)' : r.differ ? `${r.differ.count} of ${r.differ.checked}` : '–',
      ]),
      2,
    ),
  );
  if (bigRecords) {
    console.log();
    console.log(`With ${bigRecords} records in ${bigZones} zones`);
    console.log(
      markdownTable(
        ['server', 'start → serving s', 'RSS MB once serving', `RSS MB after ${RSS_LOAD_S} s of queries`, 'largest process', 'processes', 'PSS MB, all processes (after)', `q/s during those ${RSS_LOAD_S} s`],
        results.filter((r) => r.big).map((r) => [r.server, fmt(r.big!.startS, 2), fmt(r.big!.serving.rssMb), fmt(r.big!.afterLoad.rssMb), r.big!.afterLoad.process, String(r.big!.afterLoad.processes), fmt(r.big!.afterLoad.pssMb), fmt(r.big!.load.qps)]),
        1,
      ),
    );
  }
  for (const r of results) if (r.differ?.count) console.log(`${r.server}: ${r.differ.count} answers differ from hostplane's, e.g. ${r.differ.examples.join('; ')}`);
  console.log();
  console.log(`load average: before ${loadAverage(load0)}, after ${loadAverage()} (${os.cpus().length} cores)`);
  if (process.env.BENCH_JSON) {
    const table = body.map(([measure, h, p, n, hp_p, hp_n]) => ({ measure, hostplane: h, PowerDNS: p, NSD: n, 'hostplane/PowerDNS': hp_p, 'hostplane/NSD': hp_n }));
    console.log(JSON.stringify({ loadBefore: load0, loadAfter: os.loadavg(), records: bigRecords, zones: bigZones, table, results }, null, 1));
  }
}

// `npm run bench:dns:peers`; bench/dns.bench.ts imports runPeers instead.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  runPeers().catch((err) => {
    // After a signal the handler exits once everything is stopped; what failed meanwhile is its consequence.
    if (interrupted) return;
    console.error(err);
    process.exitCode = 1;
  });
}
