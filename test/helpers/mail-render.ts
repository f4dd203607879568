// The daemons' own view of a mail node's files (docs/decisions/0018-nodes-on-debian.md "One
// renderer, two profiles"): what doveconf, postconf and rspamadm make of them, so two renderings
// are compared as the daemons read them, and the renderer's checked by the daemons that use them.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { runCli } from './cli.js';

const exec = promisify(execFile);

/** Why the daemons' tools cannot run here, or null. */
export function mailToolsMissing(): string | null {
  if (process.getuid?.() !== 0) return 'rendering sets the daemons\' groups: needs root';
  for (const tool of ['/usr/bin/doveconf', '/usr/sbin/postconf', '/usr/sbin/postfix', '/usr/bin/rspamadm']) {
    if (!fs.existsSync(tool)) return `${tool} is not installed (Debian: dovecot-core postfix rspamd)`;
  }
  const groups = fs.readFileSync('/etc/group', 'utf8');
  for (const g of ['dovecot', 'postfix', '_rspamd']) if (!new RegExp(`^${g}:`, 'm').test(groups)) return `there is no group ${g}`;
  return null;
}

export async function run(cmd: string, args: string[], env: Record<string, string> = {}): Promise<string> {
  const { stdout } = await exec(cmd, args, { env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

/** `hostplane node render` in this process; throws with its stderr when it fails. */
export async function renderCli(profile: 'private' | 'system', facts: unknown, out: string, factsFile = path.join(out, '.facts.json')) {
  fs.writeFileSync(factsFile, JSON.stringify(facts));
  const r = await runCli(['node', 'render', '--profile', profile, '--facts', factsFile, '--out', out, '--json'], {});
  fs.rmSync(factsFile);
  if (r.code !== 0) throw new Error(`node render exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as { path: string; mode: number; group: string; changed: boolean }[];
}

/** A file without its comments, blank lines and runs of blanks: what a line-oriented daemon reads. */
export function settingLines(file: string): string[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .map((l) => l.trim().replace(/\s+/g, ' '))
    .filter((l) => l && !l.startsWith('#'));
}

/** Every file under `dir` (relative), with its mode and group id. */
export function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) {
        const st = fs.statSync(p);
        out[path.relative(dir, p)] = `${(st.mode & 0o7777).toString(8)} ${st.gid}`;
      }
    }
  };
  walk(dir);
  return out;
}

/** What the daemons read in a private stack's <dir>/mail, each as its daemon's tool prints it. */
export async function daemonsView(dir: string): Promise<Record<string, unknown>> {
  const mail = path.join(dir, 'mail');
  const view: Record<string, unknown> = {
    'doveconf -n': await run('doveconf', ['-n', '-c', `${mail}/dovecot/dovecot.conf`]),
    'postconf -n': await run('postconf', ['-n', '-c', `${mail}/postfix`]),
    'postconf -M': await run('postconf', ['-M', '-c', `${mail}/postfix`]),
  };
  // The files doveconf does not read (the SQL passdb/userdb and dict) and Postfix's maps.
  for (const f of [...fs.readdirSync(`${mail}/dovecot`).filter((n) => n.endsWith('.ext')).map((n) => `dovecot/${n}`), ...fs.readdirSync(`${mail}/postfix`).filter((n) => n.endsWith('.cf') && n.includes('-')).map((n) => `postfix/${n}`)]) {
    view[f] = settingLines(`${mail}/${f}`);
  }
  view['policy-header'] = fs.readFileSync(`${mail}/policy-header`, 'utf8');
  if (fs.existsSync(`${mail}/rspamd/rspamd.conf`)) {
    // JSON: its text lists the sections in no fixed order.
    view['rspamadm configdump'] = await run('rspamadm', [`--var=LOCAL_CONFDIR=${mail}/rspamd/local`, `--var=DBDIR=${mail}/rspamd/db`, 'configdump', '-C', '-c', `${mail}/rspamd/rspamd.conf`]).then(JSON.parse);
  }
  return view;
}
