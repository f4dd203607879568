// A private Dovecot on the renderer's private profile (src/node/render), for tests that need a real
// doveadm HTTP API but not the whole local stack: this machine's 2.3, or Debian 13's 2.4 chrooted
// (test/helpers/trixie.ts); plain HTTP as the local stack's, or with `tls` the node's listener
// (`ssl = yes`) on a certificate made for 127.0.0.1 and localhost. Nothing it serves needs the
// store: doveadm's command list and commands without a user.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { mailFiles, privateFacts } from '../../src/node/render/index.js';
import { run } from './mail-render.js';
import { alive } from './procs.js';
import { freeBase } from './stack-scripts.js';
import type { Trixie } from './trixie.js';
import { waitFor } from './wait.js';

export interface PrivateDovecot {
  /** http://127.0.0.1:<port>, or https://localhost:<port> with `tls`. */
  doveadmUrl: string;
  /** The certificate (PEM) with `tls`: the root a client must trust. */
  ca: string | null;
  stop(): Promise<void>;
}

/** Why a private Dovecot cannot be started here, or null. */
export function privateDovecotMissing(): string | null {
  if (process.getuid?.() !== 0) return 'Dovecot starts as root';
  if (spawnSync('bash', ['-c', 'PATH=$PATH:/usr/sbin command -v dovecot']).status !== 0) return 'dovecot is not installed (Debian: dovecot-core)';
  if (!/^2\.3\./.test(spawnSync('dovecot', ['--version'], { encoding: 'utf8' }).stdout ?? '')) return "this machine's Dovecot is not 2.3 (2.4 runs in a Debian 13 root: trixie.ts)";
  return null;
}

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => {
      s.end();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });

/** Renders the private profile's files into a temporary directory and runs Dovecot on them in the foreground (2.4: in `trixie`). */
export async function startPrivateDovecot(o: { key: string; tls: boolean; trixie?: Trixie }): Promise<PrivateDovecot> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hp-dovecot-'));
  fs.chmodSync(dir, 0o755);
  // Debian's user mail is 8; the lab's Debian 13 has no SQLite driver, and a store nobody asks is enough.
  const store = o.trixie ? { driver: 'pgsql' as const, host: '127.0.0.1', port: 1, dbname: 'none', user: 'none', password: 'none', schema: 'public' } : { driver: 'sqlite' as const, path: `${dir}/store.db` };
  const facts = privateFacts({
    dir, portBase: await freeBase(), name: 'local', apiUrl: 'http://127.0.0.1:9', doveadmKey: o.key,
    store, mailUid: 8, mailGid: 8, dovecotVersion: o.trixie ? '2.4' : '2.3', rspamd: null,
  });
  let ca: string | null = null;
  if (o.tls) {
    const [cert, key] = [`${dir}/tls.pem`, `${dir}/tls.key`];
    await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-days', '2', '-keyout', key, '-out', cert]);
    facts.tls = { cert, key };
    ca = fs.readFileSync(cert, 'utf8');
  }
  for (const f of mailFiles(facts, 'private')) {
    const at = path.join(dir, f.path);
    fs.mkdirSync(path.dirname(at), { recursive: true });
    fs.writeFileSync(at, f.text, { mode: f.mode });
    await run('chgrp', [f.group, at]);
  }
  const d = facts.dovecot;
  for (const sub of [d.baseDir, d.stateDir, facts.mail.home]) fs.mkdirSync(sub, { recursive: true });
  fs.writeFileSync(d.doveadmKeyFile, o.key, { mode: 0o600 });
  const command = ['dovecot', '-F', '-c', `${d.confDir}/dovecot.conf`];
  const dovecot: ChildProcess = o.trixie ? o.trixie.start(command) : spawn(command[0], command.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
  dovecot.stdout?.resume();
  let said = '';
  dovecot.stderr!.on('data', (c: Buffer) => (said += c));
  const stop = async () => {
    if (dovecot.pid && (await alive(dovecot.pid))) {
      dovecot.kill('SIGTERM');
      await waitFor(`Dovecot ${d.version} stopped`, async () => !(await alive(dovecot.pid!)), 15_000).catch(() => dovecot.kill('SIGKILL'));
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(`Dovecot ${d.version}'s doveadm on ${d.doveadm.port} (log: ${d.logPath})`, async () => {
      if (dovecot.exitCode !== null) throw new Error(`dovecot exited ${dovecot.exitCode}: ${said}${fs.existsSync(d.logPath!) ? fs.readFileSync(d.logPath!, 'utf8').slice(-2000) : ''}`);
      return accepts(d.doveadm.port);
    }, 15_000);
  } catch (e) {
    await stop();
    throw e;
  }
  return { doveadmUrl: o.tls ? `https://localhost:${d.doveadm.port}` : `http://127.0.0.1:${d.doveadm.port}`, ca, stop };
}
