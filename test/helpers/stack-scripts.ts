// The local stack's scripts (deploy/local/up.sh, down.sh) run as an operator's shell runs them,
// and a port-base whose ports are free: for the tests (through test/helpers/stack.ts) and the
// subdomains bench. Nothing here needs vitest.
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { EnvSchema } from '../../src/config.js';
import type { CliRun } from './cli.js';
import { freeRun } from './ports.js';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const UP = path.join(ROOT, 'deploy/local/up.sh');
export const DOWN = path.join(ROOT, 'deploy/local/down.sh');

/** The environment an operator's shell gives the scripts: none of hostplane's settings but `env`. */
export function scriptEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const clean: NodeJS.ProcessEnv = { ...process.env };
  for (const key of [...Object.keys(EnvSchema.properties), 'HOSTPLANE', 'STACK_WEB_NAME', 'STACK_DNS_SECONDARY', 'HOSTPLANE_DNS']) delete clean[key];
  return { ...clean, ...env };
}

/** A value as bash's printf %q quotes it (how the scripts print paths and URLs to paste). */
export function shellQuoted(value: string): string {
  return spawnSync('bash', ['-c', 'printf %q "$1"', '_', value], { encoding: 'utf8' }).stdout;
}

/**
 * What down.sh prints after it stopped a stack that up.sh registered in store `url` as web server
 * `web` (and mail server `mail`): the commands that unregister them.
 */
export function unregisterHint(url: string, web: string, mail?: string): string {
  const what = mail ? `web server "${web}" and mail server "${mail}" stay` : `web server "${web}" stays`;
  const them = mail ? 'them' : 'it';
  return (
    `down.sh: ${what} registered (up.sh on this <dir> uses ${them} again). To unregister ${them} (refused while a package lives there):\n` +
    `  DATABASE_URL=${shellQuoted(url)} hostplane admin web-server remove ${web}\n` +
    (mail ? `  DATABASE_URL=${shellQuoted(url)} hostplane admin mail-server remove ${mail}\n` : '')
  );
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


/** The ports above the port-base the stack takes: web +1, +2; mail (SMTP, IMAP, LMTP, doveadm) +10 to +13; rspamd (milter, controller) +14, +15; the DNS secondary (Knot, STACK_DNS_SECONDARY=knot) +16; submission +17, +18; the mail policy service +19; SFTP (sshd) +20. */
const STACK_OFFSETS = [1, 2, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20];

/** A port-base whose other ports (STACK_OFFSETS) were free a moment ago too. */
export function freeBase(): Promise<number> {
  return freeRun(Math.max(...STACK_OFFSETS) + 1, [0, ...STACK_OFFSETS]);
}

/** How long a hook that starts the local stack may take: minutes when the suite runs files side by side. */
export const STACK_UP_MS = 240_000;

/** up.sh on a fresh port-base; a port another process took meanwhile gets new ones, as the caddy helper does. */
export async function upOnFreePorts(dir: string, env: Record<string, string>): Promise<{ run: CliRun; base: number }> {
  for (let attempt = 1; ; attempt++) {
    const base = await freeBase();
    const run = await script(UP, [dir, String(base)], env);
    if (run.code !== 0 && attempt < 5 && /is in use|address already in use/i.test(run.stderr)) continue;
    return { run, base };
  }
}
