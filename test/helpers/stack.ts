// The local stack in tests (issue 9 item 6; deploy/local/up.sh, down.sh): what it needs, the scripts
// run as an operator's shell runs them, and a port-base of three free consecutive ports.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { EnvSchema } from '../../src/config.js';
import type { CliRun } from './cli.js';
import { freePort } from './ports.js';
import { requirable } from './required.js';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const UP = path.join(ROOT, 'deploy/local/up.sh');
export const DOWN = path.join(ROOT, 'deploy/local/down.sh');

/** The installed PHP-FPM binaries up.sh registers: { '8.2': '/usr/sbin/php-fpm8.2' }. */
export const PHP: Record<string, string> = Object.fromEntries(
  (existsSync('/usr/sbin') ? readdirSync('/usr/sbin') : [])
    .map((f) => /^php-fpm(\d+\.\d+)$/.exec(f))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => [m[1], `/usr/sbin/${m[0]}`]),
);

export function stackMissing(): string | null {
  const absent = ['caddy', 'bash', 'jq', 'curl', 'setsid'].filter((bin) => spawnSync('bash', ['-c', `command -v ${bin}`]).status !== 0);
  if (absent.length) return `${absent.join(', ')} not installed`;
  if (!Object.keys(PHP).length) return 'no /usr/sbin/php-fpm<version> installed (Debian package php8.2-fpm)';
  return null;
}
/** `describeStack('suite', () => …)`: skips without caddy, bash, jq, curl or php-fpm; fails so under CI_REQUIRE_ALL=1. */
export const describeStack = requirable(stackMissing());

/** What the stack's mail part (issue 10 item 5) needs beyond the rest: root, Dovecot, Postfix, setpriv, psql. */
export function mailMissing(): string | null {
  if (process.getuid?.() !== 0) return 'the mail part of the stack runs Postfix and Dovecot, which need root';
  const absent = ['dovecot', 'postfix', 'setpriv', 'psql'].filter(
    (bin) => spawnSync('bash', ['-c', `PATH=$PATH:/usr/sbin command -v ${bin}`]).status !== 0,
  );
  if (absent.length) return `${absent.join(', ')} not installed (Debian: dovecot-imapd dovecot-lmtpd dovecot-pgsql dovecot-sqlite postfix postfix-pgsql postfix-sqlite postgresql-client)`;
  return null;
}
/** `describeMailStack('suite', () => …)`: as describeStack, and skips without what mailMissing() names. */
export const describeMailStack = requirable(stackMissing() ?? mailMissing());

/** The environment an operator's shell gives the scripts: none of hostplane's settings but `env`. */
export function scriptEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const clean: NodeJS.ProcessEnv = { ...process.env };
  for (const key of [...Object.keys(EnvSchema.properties), 'HOSTPLANE', 'STACK_WEB_NAME']) delete clean[key];
  return { ...clean, ...env };
}

/** Runs a script of deploy/local to its end: exit code and output. */
export function script(file: string, args: string[], env: Record<string, string>): Promise<CliRun> {
  const child = spawn(file, args, { cwd: ROOT, env: scriptEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** The ports above the port-base the stack takes: web +1, +2; mail (SMTP, IMAP, LMTP, doveadm) +10 to +13. */
const STACK_OFFSETS = [1, 2, 10, 11, 12, 13];

/** A port-base whose other ports (STACK_OFFSETS) were free a moment ago too. */
export async function freeBase(): Promise<number> {
  for (;;) {
    const base = await freePort();
    if (base + 13 > 65535) continue;
    let free = true;
    for (const off of STACK_OFFSETS) if (!(free = await canListen(base + off))) break;
    if (free) return base;
  }
}

/** up.sh on a fresh port-base; a port another process took meanwhile gets new ones, as the caddy helper does. */
export async function upOnFreePorts(dir: string, env: Record<string, string>): Promise<{ run: CliRun; base: number }> {
  for (let attempt = 1; ; attempt++) {
    const base = await freeBase();
    const run = await script(UP, [dir, String(base)], env);
    if (run.code !== 0 && attempt < 5 && /is in use|address already in use/i.test(run.stderr)) continue;
    return { run, base };
  }
}

