// What the DNS side-by-side bench asks: the same question mixes in every run, answers reduced to
// what servers must agree on, and dnsperf runs with their figures.
import type { DecodedPacket } from 'dns-packet';
import { DnsClient, txtOf } from '../dns-zones.js';
import { pct } from '../report.js';
import { run, which } from './processes.js';
import { CLIENT_CORE, MIX_LINES, OUTSTANDING } from './settings.js';

// ---- zone content and questions ----------------------------------------------------------------

/** mulberry32: the same mixes in every run. */
export function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface Question {
  name: string;
  type: string;
}

/** 60% A of existing names, 20% TXT of existing names, 20% names that do not exist (NXDOMAIN). */
export function questionMix(zone: string, aNames: string[], txtNames: string[], seed: number): Question[] {
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
export function signature(p: DecodedPacket): string {
  const data = (a: DecodedPacket['answers'][number]) =>
    a.type === 'TXT' ? txtOf({ ...p, answers: [a] }).join('') : typeof a.data === 'object' ? JSON.stringify(a.data) : String(a.data);
  return `${p.rcode} ${p.answers.map((a) => `${a.name.toLowerCase()} ${a.ttl} ${a.type} ${data(a)}`).sort().join(' | ')}`;
}

export async function answersOf(port: number, qs: Question[]): Promise<string[]> {
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

export interface PerfRun {
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

export async function dnsperf(server: string, load: string, port: number, file: string, seconds: number, rate?: number, extra: string[] = []): Promise<PerfRun> {
  const args = ['-s', '127.0.0.1', '-p', String(port), '-d', file, '-l', String(seconds), '-c', '1', '-T', '1', '-q', String(OUTSTANDING), '-t', '2', ...extra];
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
