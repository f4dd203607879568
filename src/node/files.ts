// Placing a node's config files so that a run converges (docs/decisions/0018-nodes-on-debian.md): a
// file that is right is left alone; a new text is written beside the running file, checked by its
// daemon, and only then renamed over it. A failing check leaves the running file in place.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { randomAlnum } from '../security/password-generator.js';

export interface NodeFile {
  path: string;
  text: string;
  mode: number;
  /** Owner and group by name; this process's own when absent. */
  owner?: string;
  group?: string;
  /** The daemon's check of a candidate; it throws with the daemon's words when it refuses it. */
  check?: (candidate: string) => Promise<void>;
}

export type Placed = 'unchanged' | 'written';

/** Places every file, or none when an owner or group is missing (all looked up before the first write). */
export async function placeFiles(files: NodeFile[]): Promise<Placed[]> {
  const ids = await Promise.all(files.map((f) => idsOf(f.owner, f.group)));
  const placed: Placed[] = [];
  for (const [i, f] of files.entries()) placed.push(await placeFile(f, ids[i]));
  return placed;
}

/** A rendered file its daemon refused; the running file was kept. */
export class RefusedFile extends Error {
  constructor(
    readonly file: string,
    readonly why: string,
  ) {
    super(`${file}: refused by its check, the running file is kept: ${why}`);
  }
}

export async function placeFile(f: NodeFile, known?: { uid: number; gid: number }): Promise<Placed> {
  const ids = known ?? (await idsOf(f.owner, f.group));
  const now = await fs.stat(f.path).catch(() => null);
  if (now && (await fs.readFile(f.path, 'utf8')) === f.text && (now.mode & 0o7777) === f.mode && now.uid === ids.uid && now.gid === ids.gid) {
    return 'unchanged';
  }
  await fs.mkdir(path.dirname(f.path), { recursive: true });
  // Beside the running file: same file system, so the rename below replaces it in one step.
  const candidate = path.join(path.dirname(f.path), `.${path.basename(f.path)}.hostplane-new`);
  await fs.writeFile(candidate, f.text, { mode: f.mode });
  await fs.chmod(candidate, f.mode);
  await fs.chown(candidate, ids.uid, ids.gid);
  try {
    await f.check?.(candidate);
  } catch (err) {
    await fs.rm(candidate, { force: true });
    throw new RefusedFile(f.path, err instanceof Error ? err.message : String(err));
  }
  await fs.rename(candidate, f.path);
  return 'written';
}

/** A check that runs `command args…` (the candidate's path in place of `{}`) and refuses on a non-zero exit. */
export function commandCheck(command: string, args: string[]): (candidate: string) => Promise<void> {
  return async (candidate) => {
    try {
      await promisify(execFile)(command, args.map((a) => a.replaceAll('{}', candidate)), { timeout: 60_000 });
    } catch (err) {
      const e = err as { stderr?: string; stdout?: string; message: string };
      throw new Error(`${command}: ${(e.stderr || e.stdout || e.message).trim()}`);
    }
  };
}

async function idsOf(owner?: string, group?: string): Promise<{ uid: number; gid: number }> {
  const uid = owner ? await lookupId('passwd', owner) : process.getuid!();
  const gid = group ? await lookupId('group', group) : process.getgid!();
  return { uid, gid };
}

/** The id of a user or group by name, from the system's databases (`getent`: NSS, not only /etc). */
async function lookupId(db: 'passwd' | 'group', name: string): Promise<number> {
  const { stdout } = await promisify(execFile)('getent', [db, name]).catch(() => ({ stdout: '' }));
  const id = Number(stdout.split(':')[2]);
  if (!stdout || !Number.isInteger(id)) throw new Error(`no ${db === 'passwd' ? 'user' : 'group'} named ${name} on this host`);
  return id;
}

/** A secret kept in a root-only file: made on the first run, the same on every later one. */
export async function keptSecret(file: string): Promise<string> {
  const kept = await fs.readFile(file, 'utf8').catch(() => '');
  if (kept.trim()) return kept.trim();
  const secret = randomAlnum(32);
  await placeFile({ path: file, mode: 0o600, text: `${secret}\n` });
  return secret;
}
