// One PHP-FPM master of a web server (one per PHP version): found by its pid file, started,
// reloaded, stopped. php-fpm's ways: SIGUSR2 re-executes the master under a NEW pid and the old one
// exits once it is ready (that is how a reload is known done); a SIGKILLed master leaves workers
// holding its sockets, so they are killed before a start; the config is tested (`-t`) before a
// reload, since reloading a refused config would end the master.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import type { VersionPaths } from './php-fpm-files.js';
import { isMasterOf, isRoot, phpFpmHoldingSockets, processGone, waitUntil } from './php-fpm-procs.js';

const START_TIMEOUT_MS = 30_000;
const RELOAD_TIMEOUT_MS = 30_000;
/** SIGQUIT lets running requests finish (php-fpm's own process_control_timeout), then SIGTERM, then SIGKILL. */
const QUIT_TIMEOUT_MS = 15_000;
const TERM_TIMEOUT_MS = 5_000;

export interface SupervisorLog {
  info(o: object, m: string): void;
  warn(o: object, m: string): void;
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

/** The master of one PHP version of one web server. Its callers serialise their calls (PhpFpmRegistry). */
export class PhpFpmMaster {
  constructor(
    private readonly serverName: string,
    private readonly version: string,
    private readonly paths: VersionPaths,
    private readonly log: SupervisorLog,
  ) {}

  /** The pid of this version's master when it runs, from its pid file. */
  async running(): Promise<number | null> {
    const text = await fs.readFile(this.paths.pid, 'utf8').catch(() => '');
    const pid = Number.parseInt(text.trim(), 10);
    if (!Number.isInteger(pid) || pid <= 1) return null;
    return (await isMasterOf(pid, this.paths.conf)) ? pid : null;
  }

  /** The last lines of the master's log, on a line of their own; '' when there are none. */
  async logTail(): Promise<string> {
    const text = await fs.readFile(this.paths.log, 'utf8').catch(() => '');
    const lines = text.trimEnd().split('\n').slice(-8).join('\n');
    return lines ? `\n${lines}` : '';
  }

  async start(bin: string): Promise<void> {
    await this.killOrphans();
    await fs.rm(this.paths.pid, { force: true });
    const { code, output } = await run(bin, ['--fpm-config', this.paths.conf, ...this.rootFlag()], START_TIMEOUT_MS);
    const pid = await this.running();
    if (code !== 0 || pid === null) {
      throw new Error(`PHP ${this.version} on ${this.serverName}: php-fpm did not start (exit ${code})${output ? `: ${output}` : ''}${await this.logTail()}`);
    }
    this.log.info({ webServer: this.serverName, version: this.version, pid }, 'php-fpm master started');
  }

  /**
   * SIGUSR2 after a configuration test (a master that reloads a bad config ends); done when the
   * old pid has exited and the pid file names a new live master. Without `bin` (a version no longer
   * registered) there is no test.
   */
  async reload(pid: number, bin: string | null): Promise<void> {
    if (bin) await this.configTest(bin);
    process.kill(pid, 'SIGUSR2');
    if (!(await waitUntil(() => processGone(pid), RELOAD_TIMEOUT_MS))) {
      throw new Error(`PHP ${this.version} on ${this.serverName}: master ${pid} did not finish reloading${await this.logTail()}`);
    }
    const next = await this.running();
    if (next === null || next === pid) {
      throw new Error(`PHP ${this.version} on ${this.serverName}: the master ended on reload${await this.logTail()}`);
    }
    this.log.info({ webServer: this.serverName, version: this.version, pid: next, previousPid: pid }, 'php-fpm master reloaded');
  }

  /** Graceful stop (SIGQUIT), then SIGTERM, then SIGKILL; removes the pid file. */
  async stop(pid: number): Promise<void> {
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
    if (!gone) throw new Error(`PHP ${this.version} on ${this.serverName}: master ${pid} does not stop`);
    await fs.rm(this.paths.pid, { force: true });
    this.log.info({ webServer: this.serverName, version: this.version, pid }, 'php-fpm master stopped');
  }

  private rootFlag(): string[] {
    // As root, pools without a `user` line (no such Linux user) run as root: php-fpm wants that said.
    return isRoot() ? ['--allow-to-run-as-root'] : [];
  }

  private async configTest(bin: string): Promise<void> {
    const { code, output } = await run(bin, ['-t', '--fpm-config', this.paths.conf, ...this.rootFlag()], START_TIMEOUT_MS);
    if (code !== 0) throw new Error(`PHP ${this.version} on ${this.serverName}: configuration test failed: ${output}`);
  }

  /**
   * Kills php-fpm processes that still listen on this version's sockets although its master is
   * gone (workers of a master that was SIGKILLed): a new master cannot bind while they do.
   */
  private async killOrphans(): Promise<void> {
    const killed: number[] = [];
    await phpFpmHoldingSockets(this.paths.dir + '/', (pid) => {
      try {
        process.kill(pid, 'SIGKILL');
        killed.push(pid);
      } catch {
        // gone meanwhile
      }
    });
    if (killed.length === 0) return;
    this.log.warn({ webServer: this.serverName, version: this.version, pids: killed }, 'killed php-fpm workers left by a master that died');
    await waitUntil(async () => (await Promise.all(killed.map(processGone))).every(Boolean), TERM_TIMEOUT_MS);
  }
}
