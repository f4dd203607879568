// The real DNSSEC tools of the signing tests (docs/decisions/0032-dnssec.md): a zone taken by AXFR
// with dig, checked by ldns-verify-zone (ldnsutils) and kzonecheck (knot-dnssecutils), and answers
// validated by delv (bind9-dnsutils) and a private Unbound with the zone's DS as their trust anchor.
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import dnsPacket, { type DecodedPacket } from 'dns-packet';
import type { TestKey } from './secondaries.js';

const run = promisify(execFile);
const TOOLS: [string, string][] = [['dig', 'dnsutils'], ['delv', 'bind9-dnsutils'], ['ldns-verify-zone', 'ldnsutils'], ['kzonecheck', 'knot-dnssecutils'], ['unbound', 'unbound']];

/** Why the DNSSEC tool tests cannot run here, or null: `requirable(dnssecToolsMissing())(…)`. */
export function dnssecToolsMissing(): string | null {
  const missing = TOOLS.filter(([bin]) => {
    try {
      execFileSync('sh', ['-c', `command -v ${bin}`], { stdio: 'ignore' });
      return false;
    } catch {
      return true;
    }
  });
  if (!missing.length) return null;
  const reason = `${missing.map(([b]) => b).join(', ')} not installed (apt-get install ${missing.map(([, p]) => p).join(' ')}; .ci/run does it): the DNSSEC tool tests are skipped`;
  console.warn(reason);
  return reason;
}

/** A private directory for the tools' files. */
export const toolDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'dnssec-'));

/** The zone `zone` as dig prints an AXFR of it with `key` (TSIG): one record a line, comments dropped. */
export async function axfrText(port: number, zone: string, key: TestKey): Promise<string> {
  const { stdout } = await run('dig', ['@127.0.0.1', '-p', String(port), '+time=2', '+tries=1', '+nocmd', '+nostats', '+nocomments', '-y', `hmac-sha256:${key.name}:${key.secret}`, zone, 'AXFR']);
  if (/Transfer failed|; communications error/.test(stdout)) throw new Error(`AXFR of ${zone} failed:\n${stdout}`);
  // TSIG records dig prints after each message are no part of the zone.
  return stdout.split('\n').filter((l) => l.trim() && !l.startsWith(';') && !/\sTSIG\s/.test(l)).join('\n') + '\n';
}

export interface ToolResult {
  ok: boolean;
  output: string;
}

async function tool(cmd: string, args: string[]): Promise<ToolResult> {
  try {
    const { stdout, stderr } = await run(cmd, args);
    return { ok: true, output: stdout + stderr };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    return { ok: false, output: `${e.stdout ?? ''}${e.stderr ?? ''}` || e.message };
  }
}

/** ldns-verify-zone over the zone text (every signature, the NSEC chain, the DNSKEY). */
export async function ldnsVerify(text: string, dir: string): Promise<ToolResult> {
  const file = path.join(dir, 'ldns.zone');
  fs.writeFileSync(file, text);
  return tool('ldns-verify-zone', [file]);
}

/** kzonecheck --dnssec on over the zone text. */
export async function kzonecheck(text: string, zone: string, dir: string): Promise<ToolResult> {
  const file = path.join(dir, 'knot.zone');
  fs.writeFileSync(file, text);
  return tool('kzonecheck', ['--dnssec', 'on', '-o', zone, file]);
}

/**
 * `delv` asking our server, with `ds` (`<tag> <alg> 2 <hex>`) of `zone` as its only trust anchor:
 * its output (`; fully validated` on success).
 */
export async function delv(port: number, dir: string, zone: string, ds: string, name: string, type: string): Promise<ToolResult> {
  const [tag, alg, digestType, digest] = ds.split(' ');
  const anchors = path.join(dir, 'anchors.conf');
  fs.writeFileSync(anchors, `trust-anchors {\n  ${zone}. static-ds ${tag} ${alg} ${digestType} "${digest}";\n};\n`);
  return tool('delv', ['@127.0.0.1', '-p', String(port), '-a', anchors, `+root=${zone}`, '+nortrace', name, type]);
}

export interface RunningUnbound {
  port: number;
  log(): string;
  stop(): Promise<void>;
}

/**
 * A private Unbound on 127.0.0.1 (a free port), validating with `ds` of `zone` as its trust anchor and
 * asking our server at `primaryPort` for that zone (a stub zone), and for the zones `alsoStub` (its
 * children, validated through the DS records `zone` delegates them with): `const u = await startUnbound(…)`.
 * It keeps answers at most `cacheMaxTtl` seconds (1 by default: a changed record is asked again soon).
 */
export async function startUnbound(primaryPort: number, zone: string, ds: string, alsoStub: string[] = [], cacheMaxTtl = 1): Promise<RunningUnbound> {
  const dir = toolDir();
  const { spawn } = await import('node:child_process');
  const { freePort } = await import('./ports.js');
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const conf = path.join(dir, 'unbound.conf');
    fs.writeFileSync(
      conf,
      `server:
  interface: 127.0.0.1
  port: ${port}
  do-ip6: no
  do-daemonize: no
  username: ""
  chroot: ""
  directory: "${dir}"
  pidfile: "${dir}/unbound.pid"
  use-syslog: no
  logfile: ""
  verbosity: 1
  val-log-level: 2
  do-not-query-localhost: no
  module-config: "validator iterator"
  trust-anchor: "${zone}. DS ${ds}"
  cache-max-ttl: ${cacheMaxTtl}
  cache-max-negative-ttl: ${cacheMaxTtl}
remote-control:
  control-enable: no
${[zone, ...alsoStub].map((z) => `stub-zone:\n  name: "${z}"\n  stub-addr: 127.0.0.1@${primaryPort}\n`).join('')}`,
    );
    const child = spawn('unbound', ['-d', '-c', conf], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    const { soaSerial } = await import('../../src/provisioning/dns/driver.js');
    let up = false;
    for (let i = 0; i < 100 && child.exitCode === null; i++) {
      if ((await soaSerial('127.0.0.1', port, zone, 200)) !== 'gives no answer') {
        up = true;
        break;
      }
    }
    const stop = async () => {
      if (child.exitCode === null) {
        process.kill(child.pid!, 'SIGTERM');
        await exited;
      }
    };
    if (up) {
      return {
        port,
        log: () => output,
        async stop() {
          await stop();
          fs.rmSync(dir, { recursive: true, force: true });
        },
      };
    }
    await stop();
    if (attempt >= 3) throw new Error(`unbound did not start: ${output}`);
  }
}

/**
 * A DNS server that answers over UDP by asking `upstreamPort` and passing each answer on, changed by
 * `tamper` when it returns true (re-encoded then; else the bytes as they came): what a tampered
 * secondary or a forger on the way serves. `const t = await startTamperer(port, (p) => …)`.
 */
export async function startTamperer(upstreamPort: number, tamper: (p: DecodedPacket) => boolean): Promise<{ port: number; stop(): Promise<void> }> {
  const dgram = await import('node:dgram');
  const server = dgram.createSocket('udp4');
  server.on('message', (query, from) => {
    const up = dgram.createSocket('udp4');
    const done = () => up.close();
    const timer = setTimeout(done, 3000);
    up.on('message', (answer) => {
      clearTimeout(timer);
      const p = dnsPacket.decode(answer);
      server.send(tamper(p) ? dnsPacket.encode(p) : answer, from.port, from.address);
      done();
    });
    up.send(query, upstreamPort, '127.0.0.1');
  });
  await new Promise<void>((resolve) => server.bind(0, '127.0.0.1', resolve));
  return { port: server.address().port, stop: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
