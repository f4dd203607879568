// The processes of the DNS side-by-side bench: programs found on the PATH, processes started
// pinned to a core and stopped by PID (with whatever they forked), their memory read from /proc,
// and free loopback ports in the bench's range.
import { spawn, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { sleep } from '../report.js';
import { PORT_RANGE, REPO } from './settings.js';

// ---- programs ----------------------------------------------------------------------------------

export function which(name: string): string | null {
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
export function startTime(pid: number): string | null {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return s.slice(s.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/** Every process below `pid` (children, grandchildren …), read from /proc. */
export function descendants(pid: number): number[] {
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

export const statusKb = (pid: number, field: string): number => {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : NaN;
  } catch {
    return NaN;
  }
};
export const pssKb = (pid: number): number => {
  try {
    const m = /^Pss:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return m ? Number(m[1]) : NaN;
  } catch {
    return NaN;
  }
};

export interface Memory {
  /** VmRSS of the largest process of the server's tree, MB. */
  rssMb: number;
  /** Which process that is (its name in /proc). */
  process: string;
  /** Processes in the tree, and the sum of their proportional set sizes (shared pages split), MB. */
  processes: number;
  pssMb: number;
}

export function memoryOf(pid: number): Memory {
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

export interface Proc {
  name: string;
  pid: number;
  child: ChildProcess;
  exited: Promise<number | null>;
  log: string;
  /** Processes seen below it (NSD forks), with their start times, so none outlives the stop. */
  known: Map<number, string>;
}

export const procs = new Set<Proc>();
/** Set by SIGINT/SIGTERM: the bench stops what it started and exits 130. */
export const signalled = { interrupted: false };

/**
 * Starts `cmd args` in its own process group (a Ctrl-C reaches only the bench, which then stops
 * it by PID), pinned to `core` when given, output appended to `log`.
 */
export function startProc(name: string, cmd: string, args: string[], o: { log: string; core?: number; env?: NodeJS.ProcessEnv; cwd?: string }): Proc {
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

export const alive = (pid: number, start: string | undefined) => start !== undefined && startTime(pid) === start;

/** Remembers the processes below `p` (call while it runs: NSD's server processes are its grandchildren). */
export function noteChildren(p: Proc) {
  for (const c of descendants(p.pid)) {
    const st = startTime(c);
    if (st) p.known.set(c, st);
  }
}

/** SIGTERM to the PID, SIGKILL after `graceMs`; then the same for any process it left behind. */
export async function stopProc(p: Proc, graceMs = 10_000): Promise<void> {
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
export function killAllNow() {
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
export async function run(name: string, cmd: string, args: string[], o: { core?: number; env?: NodeJS.ProcessEnv; stdoutFile?: string; timeoutMs?: number } = {}): Promise<{ code: number | null; out: string; err: string }> {
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

export function portFree(port: number): Promise<boolean> {
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
export async function ports(n: number): Promise<number[]> {
  const out: number[] = [];
  for (let p = PORT_RANGE[0]; p <= PORT_RANGE[1] && out.length < n; p++) if (await portFree(p)) out.push(p);
  if (out.length < n) throw new Error(`fewer than ${n} free ports in ${PORT_RANGE.join('-')}`);
  return out;
}
