// Writes rendered files under a directory with their mode and group, each through a temporary file
// renamed into place, so a daemon never reads half a file. Every group is looked up before the first
// write: a missing one changes nothing.
import fs from 'node:fs';
import path from 'node:path';
import type { RenderedFile } from './render/files.js';

export interface Written {
  path: string;
  mode: number;
  group: string;
  /** false: the file was there already with this text, mode and group. */
  changed: boolean;
}

/** The gid of each group name in /etc/group (the daemons' groups: dovecot, postfix, _rspamd, root). */
export function groupIds(names: string[], groupFile = '/etc/group'): Map<string, number> {
  const known = new Map<string, number>();
  for (const line of fs.readFileSync(groupFile, 'utf8').split('\n')) {
    const [name, , gid] = line.split(':');
    if (name && gid && /^[0-9]+$/.test(gid)) known.set(name, Number(gid));
  }
  const missing = [...new Set(names)].filter((n) => !known.has(n));
  if (missing.length) throw new Error(`there is no group ${missing.join(', ')} on this machine (the daemons' packages make them: dovecot-core, postfix, rspamd)`);
  return known;
}

export function writeFiles(out: string, files: RenderedFile[]): Written[] {
  const gids = groupIds(files.map((f) => f.group));
  return files.map((f) => {
    const target = path.join(out, f.path);
    const gid = gids.get(f.group)!;
    const written = { path: f.path, mode: f.mode, group: f.group };
    if (same(target, f.text, f.mode, gid)) return { ...written, changed: false };
    fs.mkdirSync(path.dirname(target), { recursive: true });
    const tmp = `${target}.tmp`;
    fs.rmSync(tmp, { force: true });
    fs.writeFileSync(tmp, f.text, { mode: 0o600 });
    fs.chownSync(tmp, process.getuid!(), gid);
    fs.chmodSync(tmp, f.mode);
    fs.renameSync(tmp, target);
    return { ...written, changed: true };
  });
}

function same(file: string, text: string, mode: number, gid: number): boolean {
  try {
    const st = fs.statSync(file);
    return (st.mode & 0o7777) === mode && st.gid === gid && fs.readFileSync(file, 'utf8') === text;
  } catch {
    return false;
  }
}
