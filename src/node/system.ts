// The host's own tools as `node setup` uses them: a command that fails says which and why, Debian's
// packages are installed only when missing, systemd units are enabled and restarted by name.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

export type Log = (line: string) => void;

/** A command of the host that failed; its message names the command and quotes its output. */
export class HostCommandError extends Error {}

export async function run(command: string, args: string[], o: { input?: string; env?: Record<string, string> } = {}): Promise<string> {
  const child = promisify(execFile)(command, args, { env: { ...process.env, ...o.env }, maxBuffer: 64 * 1024 * 1024, timeout: 30 * 60_000 });
  if (o.input !== undefined) {
    child.child.stdin?.end(o.input);
  }
  try {
    return (await child).stdout;
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string; message: string };
    const said = (e.stderr || e.stdout || e.message).trim().split('\n').slice(-12).join('\n');
    throw new HostCommandError(`${command} ${args.join(' ')} failed: ${said}`);
  }
}

/** The packages of `names` that are not installed (dpkg's own record). */
export async function missingPackages(names: readonly string[]): Promise<string[]> {
  if (!names.length) return [];
  const out = await run('dpkg-query', ['-W', '-f=${Package} ${db:Status-Status}\n', ...names]).catch(() => '');
  const installed = new Set(out.split('\n').filter((l) => l.endsWith(' installed')).map((l) => l.split(' ')[0]));
  return names.filter((n) => !installed.has(n));
}

/** Installs what is missing of `names` from the host's configured sources, without recommends. */
export async function ensurePackages(names: readonly string[], log: Log): Promise<void> {
  const missing = await missingPackages(names);
  if (!missing.length) return;
  log(`installing ${missing.join(' ')}`);
  const env = { DEBIAN_FRONTEND: 'noninteractive' };
  await run('apt-get', ['update', '-qq'], { env });
  await run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missing], { env });
}

/** Whether systemd runs `unit` now. */
export const isActive = (unit: string): Promise<boolean> => run('systemctl', ['is-active', '--quiet', unit]).then(() => true, () => false);

/** Enables `unit` at boot and starts it now; restarts it when `changed` (its files were rewritten). */
export async function enableUnit(unit: string, changed: boolean, log: Log): Promise<void> {
  await run('systemctl', ['enable', '--quiet', unit]);
  const active = await isActive(unit);
  if (!active) log(`starting ${unit}`);
  else if (changed) log(`restarting ${unit}: its configuration changed`);
  if (!active || changed) await run('systemctl', [active ? 'restart' : 'start', unit]);
}
