// PHP-FPM on the web server's host: one master per version, one pool per (Linux user, version),
// all under `<stateDir>/php/<version>/` (docs/decisions/0008-web-servers.md). A pool's PHP sees
// only its home and tmp dir. Calls for one (state dir, version) are serialised through the
// PhpFpmRegistry the supervisors share.
import fs from 'node:fs/promises';
import path from 'node:path';
import {
  MAX_SOCKET_PATH, SAFE_DIR_RE, VERSION_RE, ensureTmpDir, exists, masterConfig, poolConfig, poolFile, poolFiles, versionPaths, writeIfChanged,
} from './php-fpm-files.js';
import { PhpFpmMaster, type SupervisorLog } from './php-fpm-master.js';
import { accepts, isRoot, waitUntil } from './php-fpm-procs.js';
import type { PhpFpmRegistry } from './php-fpm-registry.js';
import type { WebServerConn } from './sites.js';
import { assertLinuxUser, ownerFor } from './webspace-dirs.js';

const SOCKET_TIMEOUT_MS = 10_000;

export interface PhpFpmSupervisorOptions {
  /** Shared by every supervisor that may work on the same state dir: their calls run one after the other. */
  registry: PhpFpmRegistry;
  log?: SupervisorLog;
  /**
   * Group given the pool sockets (`listen.group`, mode 0660): the web server's (Caddy's) group
   * when it runs as another user than the worker. Without it the sockets belong to the master's
   * user, mode 0660.
   */
  listenGroup?: string;
}

const silentLog: SupervisorLog = { info() {}, warn() {} };

export class PhpFpmSupervisor {
  private readonly log: SupervisorLog;
  private readonly registry: PhpFpmRegistry;
  private readonly stateDir: string;
  private readonly homeRoot: string;

  constructor(
    private readonly server: WebServerConn,
    private readonly opts: PhpFpmSupervisorOptions,
  ) {
    this.log = opts.log ?? silentLog;
    this.registry = opts.registry;
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
    const p = versionPaths(this.stateDir, version);
    const socket = this.socketPath(version, linuxUser);
    const master = this.master(version);
    return this.registry.serialise(this.stateDir, version, async () => {
      await fs.mkdir(p.pools, { recursive: true, mode: 0o755 });
      const owner = await ownerFor(linuxUser, this.server);
      const tmp = await ensureTmpDir(this.stateDir, linuxUser, owner);
      const pool = poolConfig({
        serverName: this.server.name, linuxUser, version, owner, home: path.join(this.homeRoot, linuxUser), tmp, socket, listenGroup: this.opts.listenGroup,
      });
      const poolChanged = await writeIfChanged(poolFile(p, linuxUser), pool);
      if (poolChanged && isRoot() && !owner) {
        this.log.warn({ webServer: this.server.name, linuxUser, version }, 'no such Linux user: the PHP pool runs as the worker\'s own user (root)');
      }
      const masterChanged = await writeIfChanged(p.conf, masterConfig(this.server.name, version, p));

      if (poolChanged || masterChanged) this.registry.markUnapplied(this.stateDir, version);
      const pid = await master.running();
      if (pid === null) {
        await master.start(bin);
      } else if (this.registry.isUnapplied(this.stateDir, version) || !(await accepts(socket))) {
        await master.reload(pid, bin);
      }
      this.registry.markApplied(this.stateDir, version);
      if (!(await waitUntil(() => accepts(socket), SOCKET_TIMEOUT_MS))) {
        throw new Error(`PHP ${version} pool of ${linuxUser} on ${this.server.name}: ${socket} accepts no connection${await master.logTail()}`);
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
    const p = versionPaths(this.stateDir, version);
    const master = this.master(version);
    await this.registry.serialise(this.stateDir, version, async () => {
      const file = poolFile(p, linuxUser);
      const existed = await exists(file);
      await fs.rm(file, { force: true });
      const remaining = await poolFiles(p);
      const pid = await master.running();
      if (existed) this.registry.markUnapplied(this.stateDir, version);
      if (remaining.length === 0) {
        if (pid !== null) await master.stop(pid);
        this.registry.markApplied(this.stateDir, version);
      } else if (pid !== null && this.registry.isUnapplied(this.stateDir, version)) {
        await master.reload(pid, bin);
        this.registry.markApplied(this.stateDir, version);
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
        this.registry.serialise(this.stateDir, version, async () => {
          const master = this.master(version);
          const pid = await master.running();
          if (pid !== null) await master.stop(pid);
        }),
      ),
    );
  }

  /** Where the pool of (linuxUser, version) listens, whether or not it runs: `<stateDir>/php/<version>/<linuxUser>.sock`. */
  socketPath(version: string, linuxUser: string): string {
    assertLinuxUser(linuxUser);
    this.assertVersion(version);
    const socket = path.join(versionPaths(this.stateDir, version).dir, `${linuxUser}.sock`);
    if (Buffer.byteLength(socket) > MAX_SOCKET_PATH) {
      throw new Error(`web server ${this.server.name}: socket path ${socket} is longer than ${MAX_SOCKET_PATH} bytes (shorten the state dir)`);
    }
    return socket;
  }

  private master(version: string): PhpFpmMaster {
    return new PhpFpmMaster(this.server.name, version, versionPaths(this.stateDir, version), this.log);
  }

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
}
