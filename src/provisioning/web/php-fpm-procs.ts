// What the PHP-FPM supervisor reads about processes and sockets: /proc (is a pid a live php-fpm
// master of a given config, which php-fpm processes hold which unix sockets) and whether a unix
// socket accepts connections. Nothing here starts or signals a process.
import fs from 'node:fs/promises';
import net from 'node:net';

const POLL_MS = 10;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

/** Polls `check` until it is true (→ true) or `timeoutMs` have passed (→ false). */
export async function waitUntil(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > until) return false;
    await sleep(POLL_MS);
  }
}

/** True when a connection to the unix socket `socketPath` is accepted. */
export function accepts(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(socketPath);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => {
      s.destroy();
      resolve(false);
    });
  });
}

/** The state letter of `pid` (R, S, D, Z…) from /proc, or null when there is no such process. */
async function procState(pid: number): Promise<string | null> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (stat === null) return null;
  const end = stat.lastIndexOf(')'); // the command name may contain spaces and parentheses
  return stat.slice(end + 2, end + 3) || null;
}

/**
 * Whether `pid` has ended: no such process, or a zombie (ended, not yet reaped by its parent — the
 * init process, for a daemon). Not the cmdline: it reads empty while a process exits or re-executes.
 */
export async function processGone(pid: number): Promise<boolean> {
  const state = await procState(pid);
  return state === null || state === 'Z' || state === 'X';
}

/** A live process's cmdline with NULs as spaces, or null (gone, or between two program images). */
async function liveCmdline(pid: number): Promise<string | null> {
  if (await processGone(pid)) return null;
  const cmdline = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  const text = cmdline.replace(/\0/g, ' ').trimEnd();
  return text === '' ? null : text;
}

/** Whether `pid` is a live php-fpm master (or one re-executing) of the config `conf`. */
export async function isMasterOf(pid: number, conf: string): Promise<boolean> {
  let cmdline = await liveCmdline(pid);
  // Empty while the process re-executes (a reload someone else asked for) or exits: wait for the end of either.
  for (let i = 0; cmdline === null && i < 200 && !(await processGone(pid)); i++) {
    await sleep(POLL_MS);
    cmdline = await liveCmdline(pid);
  }
  if (cmdline === null || !cmdline.includes('php-fpm')) return false;
  if (cmdline.includes(conf)) return true;
  // The process title replaces argv in place and may be cut short: "php-fpm: master process (/very/lo".
  const m = /^php-fpm: master process \((.{8,})$/.exec(cmdline);
  return m !== null && conf.startsWith(m[1]);
}

/**
 * Calls `found` with each live php-fpm process (other than this one) that holds a unix socket
 * whose path starts with `prefix`, as soon as it is found.
 */
export async function phpFpmHoldingSockets(prefix: string, found: (pid: number) => void): Promise<void> {
  const table = await fs.readFile('/proc/net/unix', 'utf8').catch(() => '');
  const inodes = new Set<string>();
  for (const line of table.split('\n').slice(1)) {
    // Num RefCount Protocol Flags Type St Inode Path
    const f = line.trim().split(/\s+/);
    if (f.length >= 8 && f.slice(7).join(' ').startsWith(prefix)) inodes.add(f[6]);
  }
  if (inodes.size === 0) return;
  for (const entry of await fs.readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    const cmdline = await liveCmdline(pid);
    if (!cmdline?.startsWith('php-fpm')) continue;
    const fds = await fs.readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
    for (const fd of fds) {
      const target = await fs.readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
      const m = /^socket:\[(\d+)\]$/.exec(target);
      if (m && inodes.has(m[1])) {
        found(pid);
        break;
      }
    }
  }
}
