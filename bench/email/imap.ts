// The mail bench's IMAP side: a first login after a create, logins under load from many clients,
// and the CPU Dovecot and the directory's reader spend on them (from /proc).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { sleep } from '../report.js';
import { ImapClient } from '../../test/helpers/imap.js';
import { POLL_MS, LOGIN_LIMIT_MS, stacks, checkInterrupted } from './settings.js';
import { type Instance } from './instance.js';

/** One connect + LOGIN (+ LOGOUT, untimed): the tagged status and when it arrived (performance.now()). */
export async function login(imap: string, user: string, password: string): Promise<{ status: string; at: number }> {
  const c = await ImapClient.connect(imap);
  try {
    const r = await c.login(user, password);
    return { status: r.status, at: performance.now() };
  } finally {
    await c.logout();
  }
}

/**
 * Logs in every POLL_MS (from the start of one attempt to the next) until it works: when it did
 * and the number of attempts. A refusal (NO) is "not there yet".
 */
export async function firstLogin(imap: string, user: string, password: string): Promise<{ at: number; attempts: number }> {
  const end = performance.now() + LOGIN_LIMIT_MS;
  for (let attempts = 1; ; attempts++) {
    const started = performance.now();
    const r = await login(imap, user, password);
    if (r.status === 'OK') return { at: r.at, attempts };
    if (r.status !== 'NO') throw new Error(`IMAP LOGIN ${user}: ${r.status}`);
    if (performance.now() > end) throw new Error(`no IMAP login as ${user} within ${LOGIN_LIMIT_MS} ms`);
    checkInterrupted();
    await sleep(Math.max(0, started + POLL_MS - performance.now()));
  }
}

export interface LoadRun {
  /** Mailboxes in the directory (count of mail_users) and the scheme of the addresses logged in to. */
  mailboxes: number;
  scheme: string;
  /** 'A1', 'B', 'A2' (the A/B/A of part 2), or 'cheap'. */
  phase: string;
  clients: number;
  seconds: number;
  ok: number;
  /** LOGIN answered NO, or a connection failed (the first such error's message in `firstError`). */
  failed: number;
  firstError: string | null;
  /** connect → tagged OK of LOGIN, ms. */
  latency: number[];
  /** Event-loop utilisation of this process (the clients and the app Dovecot reports to). */
  elu: number;
  /** CPU seconds of all of Dovecot's processes over the run, and of its `auth` process alone. */
  dovecotCpu: number;
  authCpu: number;
  /** PostgreSQL: CPU seconds of the server processes of Dovecot's and Postfix's connections (NaN on SQLite: the lookups run inside Dovecot). */
  dbCpu: number;
}

/**
 * `clients` concurrent loops of connect, LOGIN, LOGOUT for `seconds`, over `addresses` in turn
 * (all with `password`). Logins/s is the successful cycles over the whole time, the tail included.
 */
export async function loginLoad(
  h: Instance, addresses: string[], password: string, clients: number, seconds: number,
): Promise<Omit<LoadRun, 'mailboxes' | 'scheme' | 'phase'>> {
  let next = 0;
  let ok = 0;
  let failed = 0;
  let firstError: string | null = null;
  const latency: number[] = [];
  const fail = (why: string) => {
    failed++;
    firstError ??= why;
  };
  const elu0 = performance.eventLoopUtilization();
  const cpu0 = dovecotCpu(h.dovecotPid);
  const db0 = await readerCpu(h);
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  const loop = async () => {
    while (performance.now() < end && !stacks.interrupted) {
      const user = addresses[next++ % addresses.length];
      const started = performance.now();
      try {
        const r = await login(h.imap, user, password);
        if (r.status === 'OK') {
          ok++;
          latency.push(r.at - started);
        } else fail(`LOGIN ${user}: ${r.status}`);
      } catch (err) {
        fail((err as Error).message);
      }
    }
  };
  await Promise.all(Array.from({ length: clients }, loop));
  const elapsed = performance.now() - t0;
  const cpu1 = dovecotCpu(h.dovecotPid);
  const db1 = await readerCpu(h);
  checkInterrupted();
  return {
    clients, seconds: elapsed / 1000, ok, failed, firstError, latency, elu: performance.eventLoopUtilization(elu0).utilization,
    dovecotCpu: cpu1.total - cpu0.total, authCpu: cpu1.auth - cpu0.auth, dbCpu: cpuDelta(db0, db1),
  };
}

/** Every address logs in once (`clients` at a time), so its mail home exists; throws on any failure. */
export async function loginEach(imap: string, addresses: string[], password: string, clients: number): Promise<void> {
  let next = 0;
  const loop = async () => {
    while (next < addresses.length) {
      checkInterrupted();
      const user = addresses[next++];
      const r = await login(imap, user, password);
      if (r.status !== 'OK') throw new Error(`IMAP LOGIN ${user} with the directory's shared password: ${r.status}`);
    }
  };
  await Promise.all(Array.from({ length: clients }, loop));
}

/** Clock ticks per second of /proc's CPU times. */
export const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** The fields of /proc/<pid>/stat after the command (field 3, the state, is [0]), or null when it is gone. */
export function procStat(pid: number | string): string[] | null {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return s.slice(s.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/**
 * CPU seconds Dovecot has used so far: its master's children that ended (the master's cutime and
 * cstime: it waits for them) plus those alive now; `auth` is its auth process alone (not the
 * auth workers, `auth -w`), where the passdb runs unless the SQL driver blocks.
 */
export function dovecotCpu(masterPid: number): { total: number; auth: number } {
  const master = procStat(masterPid);
  if (!master) return { total: NaN, auth: NaN };
  // Fields 14-17 (utime, stime, cutime, cstime) are [11]..[14]; the parent pid, field 4, is [1].
  let total = Number(master[13]) + Number(master[14]);
  let auth = 0;
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const st = procStat(pid);
    if (!st || Number(st[1]) !== masterPid) continue;
    const ticks = Number(st[11]) + Number(st[12]);
    total += ticks;
    let cmd = '';
    try {
      cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/[\0\s]+$/, '');
    } catch {
      continue;
    }
    if (/\/auth$/.test(cmd)) auth += ticks;
  }
  return { total: total / CLK_TCK, auth: auth / CLK_TCK };
}

/**
 * CPU seconds so far of each server process of the reader role's connections (PostgreSQL), by pid:
 * /proc/<pid>/schedstat (ns; a lookup takes far less than the 10 ms ticks of /proc/<pid>/stat).
 */
export async function readerCpu(h: Instance): Promise<Map<number, number> | null> {
  if (!h.reader) return null;
  const { rows } = await sql<{ pid: number }>`select pid from pg_stat_activity where usename = ${h.reader}`.execute(h.store.db);
  const out = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      out.set(Number(pid), Number(fs.readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e9);
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}

/** What the connections alive at `b` used since `a` (a connection opened meanwhile counts whole). */
export function cpuDelta(a: Map<number, number> | null, b: Map<number, number> | null): number {
  if (!a || !b) return NaN;
  let sum = 0;
  for (const [pid, s] of b) sum += s - (a.get(pid) ?? 0);
  return sum;
}
