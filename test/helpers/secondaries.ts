// Real secondaries for hostplane's DNS server in tests (docs/decisions/0013-dns-secondaries.md):
// Debian's NSD and Knot, each started privately in a temporary directory on a free loopback port,
// in the foreground as a child of the test (stopped by its PID), never touching /etc or the
// system's services.
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './ports.js';
import { knotConf as renderKnotConf } from '../../src/node/render/knot.js';

export type SecondaryEngine = 'nsd' | 'knot';
const BINARIES: Record<SecondaryEngine, string> = { nsd: '/usr/sbin/nsd', knot: '/usr/sbin/knotd' };

/** Why `engine` cannot run here, or null: `requirable(secondaryMissing('nsd'))(…)`. */
export function secondaryMissing(engine: SecondaryEngine): string | null {
  if (fs.existsSync(BINARIES[engine])) return null;
  const reason = `${BINARIES[engine]} is not installed (apt-get install ${engine}; .ci/run does it): the ${engine} secondary tests are skipped`;
  console.warn(reason);
  return reason;
}

export interface TestKey {
  name: string;
  secret: string;
  /** The key as `tsig-keygen` writes it. */
  bindFile: string;
}

export function testKey(name: string): TestKey {
  const secret = crypto.randomBytes(32).toString('base64');
  return { name, secret, bindFile: `key "${name}" {\n\talgorithm hmac-sha256;\n\tsecret "${secret}";\n};\n` };
}

export interface RunningSecondary {
  engine: SecondaryEngine;
  port: number;
  pid: number;
  dir: string;
  /** The daemon's log so far (for failure messages). */
  log(): string;
  stop(): Promise<void>;
}

/**
 * An NSD configuration under `dir` listening on 127.0.0.1:`port` (no response rate limiting, no
 * remote control) for `zones`, each from its zone file (default `<dir>/<name>.zone`); with
 * `secondary`, every zone is transferred from the primary with its key (request-xfr, allow-notify).
 * Also used by bench/dns-peers.ts.
 */
export function nsdConf(dir: string, port: number, zones: { name: string; file?: string }[], secondary?: { primaryPort: number; key: TestKey }): string {
  return `server:
  ip-address: 127.0.0.1@${port}
  do-ip6: no
  username: ""
  chroot: ""
  zonesdir: "${dir}"
  database: ""
  zonelistfile: "${dir}/zone.list"
  xfrdfile: "${dir}/xfrd.state"
  xfrdir: "${dir}"
  pidfile: "${dir}/nsd.pid"
  logfile: "${dir}/daemon.log"
  server-count: 1
  verbosity: 2
  rrl-ratelimit: 0
  rrl-whitelist-ratelimit: 0
  xfrd-reload-timeout: 0
remote-control:
  control-enable: no
${secondary ? `key:\n  name: "${secondary.key.name}"\n  algorithm: hmac-sha256\n  secret: "${secondary.key.secret}"\n` : ''}${zones
  .map(
    (z) =>
      `zone:\n  name: "${z.name}"\n  zonefile: "${z.file ?? `${dir}/${z.name}.zone`}"\n` +
      (secondary ? `  request-xfr: 127.0.0.1@${secondary.primaryPort} ${secondary.key.name}\n  allow-notify: 127.0.0.1 ${secondary.key.name}\n` : ''),
  )
  .join('')}`;
}

/**
 * Knot as `node setup` configures it (src/node/render/knot.ts), on loopback in `dir`: a catalog
 * zone (`catalog:<name>`) as on a node, or else the zones named, each following the primary alone.
 */
function knotConf(dir: string, port: number, primaryPort: number, key: TestKey, zones: string[]): string {
  const catalog = zones.length === 1 && zones[0].startsWith('catalog:') ? zones[0].slice(8) : null;
  const conf = renderKnotConf({
    listen: [`127.0.0.1@${port}`],
    rundir: dir,
    storage: dir,
    log: `${dir}/daemon.log`,
    control: `${dir}/knot.sock`,
    key: { name: key.name, secret: key.secret },
    primary: { host: '127.0.0.1', port: primaryPort },
    via: '127.0.0.1',
    catalogZone: catalog ?? 'unused.invalid',
    refreshMaxS: 60,
    retryMaxS: 10,
  });
  if (catalog) return conf;
  const entries = zones.map((z) => `  - domain: ${z}\n    master: hostplane\n    acl: notify-from-hostplane\n`).join('');
  return conf.replace(/^zone:\n[\s\S]*$/m, `zone:\n${entries}`);
}

/**
 * Starts `engine` as a secondary of the primary on 127.0.0.1:`primaryPort` for `zones`, with `key`:
 * `const ns = await startSecondary('nsd', port, key, ['zone.example'])` … `await ns.stop()`.
 * Knot also takes `catalog:<name>`: the zones that catalog lists.
 */
export async function startSecondary(
  engine: SecondaryEngine,
  primaryPort: number,
  key: TestKey,
  zones: string[],
  /** Runs with the port before the daemon starts (register it with the primary: its first SOA query comes at once). */
  beforeStart: (port: number) => Promise<void> = async () => {},
): Promise<RunningSecondary> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `hostplane-${engine}-`));
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const conf = path.join(dir, `${engine}.conf`);
    fs.writeFileSync(conf, engine === 'nsd' ? nsdConf(dir, port, zones.map((name) => ({ name })), { primaryPort, key }) : knotConf(dir, port, primaryPort, key, zones));
    const args = engine === 'nsd' ? ['-d', '-c', conf, '-P', path.join(dir, 'nsd.pid')] : ['-c', conf, '-s', path.join(dir, 'knot.sock')];
    await beforeStart(port);
    const child: ChildProcess = spawn(BINARIES[engine], args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    const log = () => {
      let file = '';
      try {
        file = fs.readFileSync(path.join(dir, 'daemon.log'), 'utf8');
      } catch {}
      return `${output}${file}`;
    };
    // Listening once it answers on UDP (any answer will do).
    const { soaSerial } = await import('../../src/provisioning/dns/driver.js');
    let up = false;
    for (let i = 0; i < 100 && child.exitCode === null; i++) {
      const a = await soaSerial('127.0.0.1', port, 'nonexistent.invalid', 100);
      if (a !== 'gives no answer') {
        up = true;
        break;
      }
    }
    if (up) {
      return {
        engine,
        port,
        pid: child.pid!,
        dir,
        log,
        async stop() {
          if (child.exitCode === null) {
            process.kill(child.pid!, 'SIGTERM');
            const t = setTimeout(() => child.exitCode === null && process.kill(child.pid!, 'SIGKILL'), 5000);
            await exited;
            clearTimeout(t);
          }
          fs.rmSync(dir, { recursive: true, force: true });
        },
      };
    }
    if (child.exitCode === null) {
      process.kill(child.pid!, 'SIGKILL');
      await exited;
    }
    if (attempt >= 3) throw new Error(`${engine} did not start: ${log()}`);
  }
}
