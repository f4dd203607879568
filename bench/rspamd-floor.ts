// The floor of the submission bench (bench/email-submission.ts): a second rspamd beside the local
// stack's, the same top file and local dir, but reading its antispam settings and DKIM tables from
// local files holding what hostplane served at its start; and switching the stack's Postfix between
// the two milters. Its files go under <stack>/mail/rspamd-floor (down.sh --purge removes them).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { sleep } from './report.js';
import { freePort } from '../test/helpers/ports.js';

/** One milter: where Postfix reaches it, its controller (scan counter), its master pid. */
export interface Milter {
  milter: string;
  controller: string;
  pid: number;
}

const SWITCH_PROBES = 50;

// ---- Postfix's milter ----------------------------------------------------------------------------

function run(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.error?.message ?? r.stderr.trim()}`);
  return r.stdout.trim();
}

/** Reads (or, with `value`, writes into main.cf) a parameter of the stack's Postfix. */
export function postconf(dir: string, name: string, value?: string): string {
  if (value === undefined) return run('postconf', ['-c', dir, '-h', name]);
  return run('postconf', ['-c', dir, '-e', `${name} = ${value}`]);
}

export const reload = (dir: string) => run('postfix', ['-c', dir, 'reload']);

/** Messages the rspamd behind `controller` has scanned so far (its /stat). */
async function scanned(controller: string): Promise<number> {
  const r = await fetch(`${controller}/stat`);
  const n = ((await r.json()) as { scanned?: number }).scanned;
  if (typeof n !== 'number') throw new Error(`${controller}/stat has no "scanned"`);
  return n;
}

/**
 * Points Postfix at `side`'s milter and reloads it; a reload lets busy smtpd processes finish with
 * the old setting, so probe messages go until one was scanned by `side`'s rspamd and none by the
 * other. Answers how many probes it took.
 */
export async function switchMilter<Side extends string>(dir: string, sides: Record<Side, Milter>, side: Side, other: Side, probe: () => Promise<boolean>, check: () => void): Promise<number> {
  postconf(dir, 'smtpd_milters', `inet:${sides[side].milter}`);
  reload(dir);
  for (let i = 1; i <= SWITCH_PROBES; i++) {
    check();
    await sleep(100);
    const [mine0, other0] = [await scanned(sides[side].controller), await scanned(sides[other].controller)];
    if (!(await probe())) continue;
    const [mine1, other1] = [await scanned(sides[side].controller), await scanned(sides[other].controller)];
    if (mine1 > mine0 && other1 === other0) return i;
  }
  throw new Error(`Postfix did not use the ${side} milter ${sides[side].milter} after ${SWITCH_PROBES} probe messages`);
}

// ---- the floor: rspamd on static maps ------------------------------------------------------------

export interface Floor extends Milter {
  stop(): Promise<void>;
}

/** A map hostplane serves, as rspamd asks for it (its URL carries the server's name and key). */
async function fetchMap(url: string): Promise<string> {
  const u = new URL(url);
  const basic = Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64');
  const r = await fetch(`${u.origin}${u.pathname}`, { headers: { authorization: `Basic ${basic}` } });
  if (r.status !== 200) throw new Error(`GET ${u.pathname}: ${r.status}`);
  return r.text();
}

const alive = (pid: number) => {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^[ZX]/.test(s.slice(s.lastIndexOf(')') + 2));
  } catch {
    return false;
  }
};

/**
 * The floor's rspamd under <stack>/mail/rspamd-floor on two free ports: the stack's top file and
 * local dir, run as up.sh runs the stack's, but rspamd.conf.override names files with the three
 * maps as hostplane served them now. Stopped by `stop()`, and when this process exits.
 */
export async function startFloor(stackDir: string, stack: { milter: string; controller: string }): Promise<Floor> {
  const from = path.join(stackDir, 'mail', 'rspamd');
  const dir = path.join(stackDir, 'mail', 'rspamd-floor');
  const uid = Number(run('id', ['-u', '_rspamd']));
  const gid = Number(run('id', ['-g', '_rspamd']));
  fs.mkdirSync(path.join(dir, 'maps'), { recursive: true });
  fs.cpSync(path.join(from, 'local'), path.join(dir, 'local'), { recursive: true });
  const overrideFile = path.join(dir, 'local', 'rspamd.conf.override');
  let override = fs.readFileSync(overrideFile, 'utf8');
  const urls = [...override.matchAll(/"(https?:\/\/[^"]+\/internal\/([a-z-]+))"/g)];
  if (urls.length !== 3) throw new Error(`${overrideFile} names ${urls.length} maps of hostplane, not 3`);
  for (const [, url, name] of urls) {
    const file = path.join(dir, 'maps', name);
    fs.writeFileSync(file, await fetchMap(url));
    override = override.replace(url, `file://${file}`);
  }
  fs.writeFileSync(overrideFile, override);
  // What _rspamd reads is the group's, as up.sh sets it for the stack's (the key table is secret).
  const own = (p: string) => {
    fs.chownSync(p, 0, gid);
    fs.chmodSync(p, fs.statSync(p).isDirectory() ? 0o750 : 0o640);
    if (fs.statSync(p).isDirectory()) for (const f of fs.readdirSync(p)) own(path.join(p, f));
  };
  own(path.join(dir, 'local'));
  own(path.join(dir, 'maps'));
  fs.chmodSync(dir, 0o755);
  fs.mkdirSync(path.join(dir, 'db'), { recursive: true });
  fs.chownSync(path.join(dir, 'db'), uid, gid);
  const logFile = path.join(dir, 'rspamd.log');
  fs.writeFileSync(logFile, '', { mode: 0o600 });
  fs.chownSync(logFile, uid, gid);

  const milterPort = await freePort();
  let controllerPort = await freePort();
  while (controllerPort === milterPort) controllerPort = await freePort();
  const milter = `127.0.0.1:${milterPort}`;
  const controller = `127.0.0.1:${controllerPort}`;
  let top = fs.readFileSync(path.join(from, 'rspamd.conf'), 'utf8');
  for (const [a, b] of [[`"${stack.milter}"`, `"${milter}"`], [`"${new URL(stack.controller).host}"`, `"${controller}"`], [`"${path.join(from, 'rspamd.log')}"`, `"${logFile}"`]]) {
    if (!top.includes(a)) throw new Error(`the stack's rspamd.conf does not name ${a}`);
    top = top.replace(a, b);
  }
  fs.writeFileSync(path.join(dir, 'rspamd.conf'), top, { mode: 0o644 });

  const log = fs.openSync(logFile, 'a');
  // Its own session (as up.sh's setsid): Ctrl-C in the terminal reaches the bench, which stops it.
  const child = spawn('rspamd', ['-f', '-u', '_rspamd', '-g', '_rspamd', '-c', path.join(dir, 'rspamd.conf'), '--var', `LOCAL_CONFDIR=${dir}/local`, '--var', `DBDIR=${dir}/db`],
    { cwd: dir, detached: true, stdio: ['ignore', log, log] });
  fs.closeSync(log);
  child.unref();
  const pid = child.pid!;
  const killGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-pid, signal);
    } catch {
      // Gone already.
    }
  };
  const onExit = () => killGroup('SIGTERM');
  process.on('exit', onExit);
  const stop = async () => {
    killGroup('SIGTERM');
    for (let i = 0; i < 100 && alive(pid); i++) await sleep(100);
    killGroup('SIGKILL');
    process.off('exit', onExit);
  };
  // A warm start takes about a second (the compiled expressions are shared with the stacks').
  const deadline = performance.now() + 90_000;
  for (;;) {
    const pong = await fetch(`http://${controller}/ping`).then((r) => r.text()).catch(() => '');
    if (pong.startsWith('pong') && (await listening(milterPort))) break;
    if (!alive(pid) || performance.now() > deadline) {
      await stop();
      throw new Error(`the floor's rspamd ${alive(pid) ? 'did not answer within 90 s' : 'exited'}; the end of ${logFile}:\n${fs.readFileSync(logFile, 'utf8').split('\n').slice(-20).join('\n')}`);
    }
    await sleep(200);
  }
  return { milter, controller: `http://${controller}`, pid, stop };
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}

/** Clock ticks per second of /proc's CPU times. */
const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** CPU seconds of `pid` (with its children that ended) and of its live children (rspamd's workers). */
export function treeCpu(pid: number): number {
  const stat = (p: string) => {
    try {
      const s = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
      return s.slice(s.lastIndexOf(')') + 2).split(' ');
    } catch {
      return null;
    }
  };
  const master = stat(String(pid));
  if (!master) return NaN;
  let ticks = Number(master[11]) + Number(master[12]) + Number(master[13]) + Number(master[14]);
  for (const p of fs.readdirSync('/proc')) {
    const st = /^\d+$/.test(p) ? stat(p) : null;
    if (st && Number(st[1]) === pid) ticks += Number(st[11]) + Number(st[12]);
  }
  return ticks / CLK_TCK;
}
