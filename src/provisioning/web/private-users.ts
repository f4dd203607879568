// The local stack's package users (docs/decisions/0023-sftp.md "The local stack's users"): a web
// server whose state dir holds `users/passwd` keeps its packages' Linux users there instead of the
// system's. up.sh copies /etc/passwd and /etc/group there, and its sshd sees those copies as /etc
// (bind mounts in a private mount namespace), so nothing on the machine itself changes. The files
// are rewritten in place, never renamed over: a bind mount holds the inode it was made with.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { WebServerConn } from './sites.js';

/** The group every package user is in: sshd's `Match Group` of the SFTP rules. */
export const SFTP_GROUP = 'hostplane-sftp';
/** Ids of private users start here: far above what a machine hands out, so no file of its own users is theirs. */
const FIRST_ID = 2_000_000;

export interface PrivateUserIds {
  uid: number;
  gid: number;
}

const files = (stateDir: string) => ({ passwd: path.join(stateDir, 'users', 'passwd'), group: path.join(stateDir, 'users', 'group') });

/** Whether `server` keeps its package users in private files (a local stack with SFTP). */
export async function hasPrivateUsers(server: Pick<WebServerConn, 'stateDir'>): Promise<boolean> {
  return fs.stat(files(server.stateDir).passwd).then((s) => s.isFile(), () => false);
}

function entry(text: string, name: string): string[] | null {
  for (const line of text.split('\n')) {
    const f = line.split(':');
    if (f[0] === name && f.length >= 4) return f;
  }
  return null;
}

/** A user's ids in the private passwd file, or null. */
export async function privateUserIds(server: Pick<WebServerConn, 'stateDir'>, name: string): Promise<PrivateUserIds | null> {
  const f = entry(await fs.readFile(files(server.stateDir).passwd, 'utf8'), name);
  if (!f) return null;
  const ids = { uid: Number(f[2]), gid: Number(f[3]) };
  return Number.isInteger(ids.uid) && Number.isInteger(ids.gid) ? ids : null;
}

/** A group's id in the private group file, or null. */
export async function privateGroupId(server: Pick<WebServerConn, 'stateDir'>, name: string): Promise<number | null> {
  const f = entry(await fs.readFile(files(server.stateDir).group, 'utf8').catch(() => ''), name);
  const gid = f ? Number(f[2]) : NaN;
  return Number.isInteger(gid) ? gid : null;
}

// One writer at a time per state dir in this process (the stack runs one web worker).
const chains = new Map<string, Promise<unknown>>();
function serialised<T>(key: string, work: () => Promise<T>): Promise<T> {
  const run = (chains.get(key) ?? Promise.resolve()).then(work, work);
  chains.set(key, run.catch(() => undefined));
  return run;
}

function usedIds(text: string, field: number): Set<number> {
  return new Set(text.split('\n').map((l) => Number(l.split(':')[field])).filter(Number.isInteger));
}

function withLine(text: string, line: string): string {
  return `${text}${text === '' || text.endsWith('\n') ? '' : '\n'}${line}\n`;
}

/** `group:x:gid:a,b` with `member` added to its members. */
function withMember(text: string, group: string, member: string): string {
  return text
    .split('\n')
    .map((line) => {
      const f = line.split(':');
      if (f[0] !== group || f.length < 4) return line;
      const members = f[3] ? f[3].split(',') : [];
      return members.includes(member) ? line : [...f.slice(0, 3), [...members, member].join(',')].join(':');
    })
    .join('\n');
}

/**
 * Adds `name` (its own group, home `<homeRoot>/<name>`, no shell, in SFTP_GROUP) to the private
 * files unless it is there; its ids either way.
 */
export function addPrivateUser(server: Pick<WebServerConn, 'stateDir' | 'homeRoot'>, name: string): Promise<PrivateUserIds> {
  const f = files(server.stateDir);
  return serialised(f.passwd, async () => {
    let passwd = await fs.readFile(f.passwd, 'utf8');
    let group = await fs.readFile(f.group, 'utf8').catch(() => '');
    const groupsBefore = group;
    let sftpGid = entry(group, SFTP_GROUP)?.[2];
    const taken = new Set([...usedIds(passwd, 2), ...usedIds(group, 2)]);
    const next = () => {
      let id = FIRST_ID;
      while (taken.has(id)) id++;
      taken.add(id);
      return id;
    };
    if (sftpGid === undefined) {
      sftpGid = String(next());
      group = withLine(group, `${SFTP_GROUP}:x:${sftpGid}:`);
    }
    let ids = await privateUserIds(server, name);
    if (!ids) {
      const id = next();
      ids = { uid: id, gid: id };
      if (!entry(group, name)) group = withLine(group, `${name}:x:${id}:`);
      passwd = withLine(passwd, `${name}:x:${id}:${id}:hostplane package:${path.join(server.homeRoot, name)}:/usr/sbin/nologin`);
      // In place (O_TRUNC), not renamed: sshd's bind mount of this file stays on this inode.
      await fs.writeFile(f.passwd, passwd);
    }
    group = withMember(group, SFTP_GROUP, name);
    if (group !== groupsBefore) await fs.writeFile(f.group, group);
    return ids;
  });
}
