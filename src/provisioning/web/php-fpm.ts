// PHP-FPM on the web server's host (issue 9 item 3; docs/decisions/0008-web-servers.md "PHP-FPM: one
// master per version, one pool per (Linux user, version)"; provisioning-research §3 "PHP-FPM").
//
// Everything lives under `<stateDir>/php/<version>/`: the master's config (`php-fpm.conf`, which
// includes `pools/*.conf`), its pid file and log, and one socket per pool (`<user>.sock`). The web
// worker writes a pool file, starts the master from the registered binary when it does not run,
// and reloads it (SIGUSR2) when a pool changed. A pool's PHP sees only the home and a per-user tmp
// dir (`<stateDir>/tmp/<user>/`, open_basedir) and runs as the Linux user when the worker is root
// and the user exists — else as the worker's own user, like the master.
//
// How php-fpm behaves here (verified with 8.2): with `daemonize = yes` the launching process exits
// 0 only once the daemon is ready (non-zero and a log line when not), and SIGUSR2 re-executes the
// master, which daemonizes again: the reloaded master has a NEW pid, the old one exits once the new
// one is ready — that exit is how a reload is known to be complete (a second USR2 sent during the
// re-exec would kill the master). A master killed with SIGKILL leaves its workers running and
// holding the listening sockets ("Another FPM instance seems to already listen"): before starting a
// master, workers of this state dir that outlived theirs are killed. Before a reload php-fpm tests the
// config (`-t`): a reload of a config it refuses would end the master; the call fails instead, the
// master serves on with the old pools, and later calls retry the reload until it succeeds.
//
// Calls for one (state dir, version) are serialised within this process; one web worker per web
// server (0008) means no other process writes the same state dir.
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import type { WebServerConn } from './sites.js';
import { assertLinuxUser, ownerFor, type LinuxUserIds } from './webspace-dirs.js';

const VERSION_RE = /^\d\.\d$/;
/** What a directory written into php-fpm's ini files and open_basedir may contain. */
const SAFE_DIR_RE = /^\/[A-Za-z0-9._+@/-]*$/;
/** sun_path holds 108 bytes including the terminating NUL. */
const MAX_SOCKET_PATH = 107;

const START_TIMEOUT_MS = 30_000;
const RELOAD_TIMEOUT_MS = 30_000;
const SOCKET_TIMEOUT_MS = 10_000;
/** SIGQUIT lets running requests finish (php-fpm's own process_control_timeout below), then SIGTERM, then SIGKILL. */
const QUIT_TIMEOUT_MS = 15_000;
const TERM_TIMEOUT_MS = 5_000;
const POLL_MS = 10;

/** Pool sizing: ondemand, so an idle site costs no process. */
const POOL_SETTINGS = {
  pm: 'ondemand',
  'pm.max_children': '5',
  'pm.process_idle_timeout': '10s',
  'pm.max_requests': '500',
};

export interface SupervisorLog {
  info(o: object, m: string): void;
  warn(o: object, m: string): void;
}

export interface PhpFpmSupervisorOptions {
  log?: SupervisorLog;
  /**
   * Group given the pool sockets (`listen.group`, mode 0660): the web server's (Caddy's) group
   * when it runs as another user than the worker. Without it the sockets belong to the master's
   * user, mode 0660.
   */
  listenGroup?: string;
}

const silentLog: SupervisorLog = { info() {}, warn() {} };

/** Per (state dir, version): the tail of the chain of calls, so they run one after the other. */
const queues = new Map<string, Promise<void>>();
/**
 * (state dir, version) whose files changed but whose master did not take them (start or reload
 * failed): the next call reloads even though the files are as it would write them.
 */
const unapplied = new Set<string>();

async function serialise<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const run = (queues.get(key) ?? Promise.resolve()).then(fn);
  const tail = run.then(
    () => {},
    () => {},
  );
  queues.set(key, tail);
  try {
    return await run;
  } finally {
    if (queues.get(key) === tail) queues.delete(key);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

function run(bin: string, args: string[], timeoutMs: number): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    // A clean environment: no NOTIFY_SOCKET (systemd) or FPM_SOCKETS (inherited listeners) of ours.
    const env = { PATH: process.env.PATH ?? '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' };
    execFile(bin, args, { env, timeout: timeoutMs, maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      const output = `${stdout}${stderr}`.trim();
      if (!err) return resolve({ code: 0, output });
      const code = (err as { code?: unknown }).code;
      if (typeof code === 'number') return resolve({ code, output });
      reject(new Error(`${bin} ${args.join(' ')}: ${err.message}`));
    });
  });
}

/** Writes `content` to `file` (atomically, by rename) unless it already holds exactly that; true when written. */
async function writeIfChanged(file: string, content: string): Promise<boolean> {
  const current = await fs.readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw err;
  });
  if (current === content) return false;
  // The temporary name does not end in `.conf`: the master's `include = pools/*.conf` never sees it.
  const tmp = `${file}.tmp-${process.pid}-${crypto.randomBytes(4).toString('hex')}`;
  await fs.writeFile(tmp, content, { mode: 0o644 });
  await fs.rename(tmp, file);
  return true;
}

async function exists(p: string): Promise<boolean> {
  return fs.lstat(p).then(
    () => true,
    () => false,
  );
}

/** True when a connection to the unix socket `socketPath` is accepted. */
function accepts(socketPath: string): Promise<boolean> {
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
async function processGone(pid: number): Promise<boolean> {
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
async function isMasterOf(pid: number, conf: string): Promise<boolean> {
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

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > until) return false;
    await sleep(POLL_MS);
  }
}

/** The paths of one version's master under the state dir. */
interface VersionPaths {
  dir: string;
  pools: string;
  conf: string;
  pid: string;
  log: string;
}

export class PhpFpmSupervisor {
  private readonly log: SupervisorLog;
  private readonly stateDir: string;
  private readonly homeRoot: string;

  constructor(
    private readonly server: WebServerConn,
    private readonly opts: PhpFpmSupervisorOptions = {},
  ) {
    this.log = opts.log ?? silentLog;
    for (const [what, dir] of [
      ['state dir', server.stateDir],
      ['home root', server.homeRoot],
    ] as const) {
      if (!SAFE_DIR_RE.test(dir)) {
        throw new Error(`web server ${server.name}: ${what} "${dir}" must be an absolute path of letters, digits and . _ + @ - /`);
      }
    }
    if (opts.listenGroup !== undefined && !/^[a-z_][a-z0-9_-]{0,31}$/.test(opts.listenGroup)) {
      throw new Error(`"${opts.listenGroup}" is not a valid group name`);
    }
    this.stateDir = path.resolve(server.stateDir);
    this.homeRoot = path.resolve(server.homeRoot);
  }

  /**
   * Makes sure the pool of (linuxUser, version) exists and its master runs, and returns the
   * pool's socket path once it accepts connections. Idempotent: an unchanged pool of a running
   * master costs no reload. Unknown version → an Error naming the installed ones.
   */
  async ensurePool(linuxUser: string, version: string): Promise<string> {
    assertLinuxUser(linuxUser);
    const bin = this.binary(version);
    const p = this.paths(version);
    const socket = this.socketPath(version, linuxUser);
    return serialise(this.key(version), async () => {
      await fs.mkdir(p.pools, { recursive: true, mode: 0o755 });
      const owner = await ownerFor(linuxUser);
      const tmp = await this.ensureTmpDir(linuxUser, owner);
      const poolChanged = await writeIfChanged(this.poolFile(version, linuxUser), this.poolConfig(linuxUser, version, owner, tmp));
      if (poolChanged && isRoot() && !owner) {
        this.log.warn({ webServer: this.server.name, linuxUser, version }, 'no such Linux user: the PHP pool runs as the worker\'s own user (root)');
      }
      const masterChanged = await writeIfChanged(p.conf, this.masterConfig(version));

      const key = this.key(version);
      if (poolChanged || masterChanged) unapplied.add(key);
      const pid = await this.runningMaster(version);
      if (pid === null) {
        await this.start(version, bin);
      } else if (unapplied.has(key) || !(await accepts(socket))) {
        await this.reload(version, pid, bin);
      }
      unapplied.delete(key);
      if (!(await waitUntil(() => accepts(socket), SOCKET_TIMEOUT_MS))) {
        throw new Error(`PHP ${version} pool of ${linuxUser} on ${this.server.name}: ${socket} accepts no connection${await this.logTail(version)}`);
      }
      return socket;
    });
  }

  /** Removes the pool: its file, then a reload — or, when it was the last pool, a stop of the master. */
  async removePool(linuxUser: string, version: string): Promise<void> {
    assertLinuxUser(linuxUser);
    this.assertVersion(version);
    const bin = this.server.php[version] ?? null; // a version no longer registered can still be cleaned up
    const socket = this.socketPath(version, linuxUser);
    await serialise(this.key(version), async () => {
      const file = this.poolFile(version, linuxUser);
      const existed = await exists(file);
      await fs.rm(file, { force: true });
      const remaining = await this.poolFiles(version);
      const pid = await this.runningMaster(version);
      const key = this.key(version);
      if (existed) unapplied.add(key);
      if (remaining.length === 0) {
        if (pid !== null) await this.stop(version, pid);
        unapplied.delete(key);
      } else if (pid !== null && unapplied.has(key)) {
        await this.reload(version, pid, bin);
        unapplied.delete(key);
      }
      await fs.rm(socket, { force: true }); // php-fpm unlinks it on reload; a stopped or dead master may not have
    });
  }

  /** Stops every master this state dir has (by pid file): for tests and the shutdown of a stack. */
  async stopAll(): Promise<void> {
    const phpDir = path.join(this.stateDir, 'php');
    const versions = (await fs.readdir(phpDir).catch(() => [] as string[])).filter((v) => VERSION_RE.test(v));
    await Promise.all(
      versions.map((version) =>
        serialise(this.key(version), async () => {
          const pid = await this.runningMaster(version);
          if (pid !== null) await this.stop(version, pid);
        }),
      ),
    );
  }

  // --- paths and files ---

  private assertVersion(version: string): void {
    if (!VERSION_RE.test(version)) throw new Error(`"${version}" is not a PHP version (like 8.2)`);
  }

  private binary(version: string): string {
    this.assertVersion(version);
    const bin = Object.prototype.hasOwnProperty.call(this.server.php, version) ? this.server.php[version] : undefined;
    if (!bin) {
      const installed = Object.keys(this.server.php).sort();
      throw new Error(
        `PHP ${version} is not installed on web server ${this.server.name} (installed: ${installed.length ? installed.join(', ') : 'none'})`,
      );
    }
    return bin;
  }

  private key(version: string): string {
    return `${this.stateDir}\0${version}`;
  }

  private paths(version: string): VersionPaths {
    const dir = path.join(this.stateDir, 'php', version);
    return {
      dir,
      pools: path.join(dir, 'pools'),
      conf: path.join(dir, 'php-fpm.conf'),
      pid: path.join(dir, 'php-fpm.pid'),
      log: path.join(dir, 'php-fpm.log'),
    };
  }

  private poolFile(version: string, linuxUser: string): string {
    return path.join(this.paths(version).pools, `${linuxUser}.conf`);
  }

  /** Where the pool of (linuxUser, version) listens, whether or not it runs: `<stateDir>/php/<version>/<linuxUser>.sock`. */
  socketPath(version: string, linuxUser: string): string {
    assertLinuxUser(linuxUser);
    this.assertVersion(version);
    const socket = path.join(this.paths(version).dir, `${linuxUser}.sock`);
    if (Buffer.byteLength(socket) > MAX_SOCKET_PATH) {
      throw new Error(`web server ${this.server.name}: socket path ${socket} is longer than ${MAX_SOCKET_PATH} bytes (shorten the state dir)`);
    }
    return socket;
  }

  private async poolFiles(version: string): Promise<string[]> {
    const names = await fs.readdir(this.paths(version).pools).catch(() => [] as string[]);
    return names.filter((n) => n.endsWith('.conf'));
  }

  /** `<stateDir>/tmp/<user>/`: uploads, sessions and tempnam() of that user's PHP, mode 0700, the user's. */
  private async ensureTmpDir(linuxUser: string, owner: LinuxUserIds | null): Promise<string> {
    const parent = path.join(this.stateDir, 'tmp');
    await fs.mkdir(parent, { recursive: true, mode: 0o755 });
    const dir = path.join(parent, linuxUser);
    await fs.mkdir(dir, { mode: 0o700 }).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
    const st = await fs.lstat(dir);
    if (!st.isDirectory()) throw new Error(`${dir} is not a directory`);
    if (owner && (st.uid !== owner.uid || st.gid !== owner.gid)) await fs.lchown(dir, owner.uid, owner.gid);
    return dir;
  }

  private masterConfig(version: string): string {
    const p = this.paths(version);
    return [
      `; Written by hostplane: the PHP ${version} master of web server ${this.server.name}. Changes are overwritten.`,
      '[global]',
      `pid = ${p.pid}`,
      `error_log = ${p.log}`,
      'log_level = notice',
      'daemonize = yes',
      'process_control_timeout = 10s',
      `include = ${p.pools}/*.conf`,
      '',
    ].join('\n');
  }

  private poolConfig(linuxUser: string, version: string, owner: LinuxUserIds | null, tmp: string): string {
    const home = path.join(this.homeRoot, linuxUser);
    const lines = [
      `; Written by hostplane: the PHP ${version} pool of ${linuxUser} on web server ${this.server.name}. Changes are overwritten.`,
      `[${linuxUser}]`,
    ];
    // Without a user line the pool runs as the master's user (php-fpm's group default: the user's primary group).
    if (owner) lines.push(`user = ${linuxUser}`);
    lines.push(`listen = ${this.socketPath(version, linuxUser)}`, 'listen.mode = 0660');
    if (this.opts.listenGroup) lines.push(`listen.group = ${this.opts.listenGroup}`);
    for (const [k, v] of Object.entries(POOL_SETTINGS)) lines.push(`${k} = ${v}`);
    lines.push(
      'security.limit_extensions = .php',
      `php_admin_value[open_basedir] = ${home}/:${tmp}/`,
      `php_admin_value[upload_tmp_dir] = ${tmp}`,
      `php_admin_value[session.save_path] = ${tmp}`,
      `php_admin_value[sys_temp_dir] = ${tmp}`,
      '',
    );
    return lines.join('\n');
  }

  // --- the master process ---

  private rootFlag(): string[] {
    // As root, pools without a `user` line (no such Linux user) run as root: php-fpm wants that said.
    return isRoot() ? ['--allow-to-run-as-root'] : [];
  }

  /** The pid of this version's master when it runs, from its pid file. */
  private async runningMaster(version: string): Promise<number | null> {
    const p = this.paths(version);
    const text = await fs.readFile(p.pid, 'utf8').catch(() => '');
    const pid = Number.parseInt(text.trim(), 10);
    if (!Number.isInteger(pid) || pid <= 1) return null;
    return (await isMasterOf(pid, p.conf)) ? pid : null;
  }

  private async logTail(version: string): Promise<string> {
    const text = await fs.readFile(this.paths(version).log, 'utf8').catch(() => '');
    const lines = text.trimEnd().split('\n').slice(-8).join('\n');
    return lines ? `\n${lines}` : '';
  }

  private async configTest(version: string, bin: string): Promise<void> {
    const { code, output } = await run(bin, ['-t', '--fpm-config', this.paths(version).conf, ...this.rootFlag()], START_TIMEOUT_MS);
    if (code !== 0) throw new Error(`PHP ${version} on ${this.server.name}: configuration test failed: ${output}`);
  }

  private async start(version: string, bin: string): Promise<void> {
    const p = this.paths(version);
    await this.killOrphans(version);
    await fs.rm(p.pid, { force: true });
    const { code, output } = await run(bin, ['--fpm-config', p.conf, ...this.rootFlag()], START_TIMEOUT_MS);
    const pid = await this.runningMaster(version);
    if (code !== 0 || pid === null) {
      throw new Error(`PHP ${version} on ${this.server.name}: php-fpm did not start (exit ${code})${output ? `: ${output}` : ''}${await this.logTail(version)}`);
    }
    this.log.info({ webServer: this.server.name, version, pid }, 'php-fpm master started');
  }

  /**
   * SIGUSR2 after a configuration test (a master that reloads a bad config ends); done when the
   * old pid has exited and the pid file names a new live master.
   */
  private async reload(version: string, pid: number, bin: string | null): Promise<void> {
    if (bin) await this.configTest(version, bin);
    process.kill(pid, 'SIGUSR2');
    if (!(await waitUntil(() => processGone(pid), RELOAD_TIMEOUT_MS))) {
      throw new Error(`PHP ${version} on ${this.server.name}: master ${pid} did not finish reloading${await this.logTail(version)}`);
    }
    const next = await this.runningMaster(version);
    if (next === null || next === pid) {
      throw new Error(`PHP ${version} on ${this.server.name}: the master ended on reload${await this.logTail(version)}`);
    }
    this.log.info({ webServer: this.server.name, version, pid: next, previousPid: pid }, 'php-fpm master reloaded');
  }

  /** Graceful stop (SIGQUIT), then SIGTERM, then SIGKILL; removes the pid file. */
  private async stop(version: string, pid: number): Promise<void> {
    const p = this.paths(version);
    const steps: [NodeJS.Signals, number][] = [
      ['SIGQUIT', QUIT_TIMEOUT_MS],
      ['SIGTERM', TERM_TIMEOUT_MS],
      ['SIGKILL', TERM_TIMEOUT_MS],
    ];
    let gone = false;
    for (const [signal, timeout] of steps) {
      try {
        process.kill(pid, signal);
      } catch {
        gone = true;
        break;
      }
      if ((gone = await waitUntil(() => processGone(pid), timeout))) break;
    }
    if (!gone) throw new Error(`PHP ${version} on ${this.server.name}: master ${pid} does not stop`);
    await fs.rm(p.pid, { force: true });
    this.log.info({ webServer: this.server.name, version, pid }, 'php-fpm master stopped');
  }

  /**
   * Kills php-fpm processes that still listen on this version's sockets although its master is
   * gone (workers of a master that was SIGKILLed): a new master cannot bind while they do.
   */
  private async killOrphans(version: string): Promise<void> {
    const prefix = this.paths(version).dir + '/';
    const table = await fs.readFile('/proc/net/unix', 'utf8').catch(() => '');
    const inodes = new Set<string>();
    for (const line of table.split('\n').slice(1)) {
      // Num RefCount Protocol Flags Type St Inode Path
      const f = line.trim().split(/\s+/);
      if (f.length >= 8 && f.slice(7).join(' ').startsWith(prefix)) inodes.add(f[6]);
    }
    if (inodes.size === 0) return;
    const killed: number[] = [];
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
          try {
            process.kill(pid, 'SIGKILL');
            killed.push(pid);
          } catch {
            // gone meanwhile
          }
          break;
        }
      }
    }
    if (killed.length === 0) return;
    this.log.warn({ webServer: this.server.name, version, pids: killed }, 'killed php-fpm workers left by a master that died');
    await waitUntil(async () => (await Promise.all(killed.map(processGone))).every(Boolean), TERM_TIMEOUT_MS);
  }
}
