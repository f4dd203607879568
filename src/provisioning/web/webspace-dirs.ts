// Webspace directories on the web server's host (API guide "Subdomains";
// docs/decisions/0008-web-servers.md): a webspace's `path` is relative to the package's home
// `<homeRoot>/<linuxUser>`; it is created when missing and must stay inside the home, symlinks
// included. Also the marker file the probe asks the web server
// for ("Done = live"), and the Linux user lookup the PHP-FPM pools share.
//
// Owners and modes (docs/decisions/0023-sftp.md "Owners and modes"), as root with the user known:
// the home is root:<user's group> 0751 — sshd's ChrootDirectory rule (root's, not group- or
// world-writable), listable by the package only; the dirs made inside it are the user's, group the
// web server's (socketGroup: Caddy's) else the user's, mode 2750: Caddy reads, other packages
// (their SFTP and their PHP) cannot enter. An older user-owned home is mended.
//
// Limits: the walk checks every component with realpath before going on and chowns with lchown, so
// a symlink planted in the home can neither take the walk outside nor get a target chowned; a
// customer who swaps a directory for a symlink between two steps of one walk is not stopped (Node
// has no openat), but the final realpath is checked again before it is returned.
import { execFile } from 'node:child_process';
import { constants as fsConstants } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { addPrivateUser, hasPrivateUsers, privateGroupId, privateUserIds, SFTP_GROUP } from './private-users.js';
import type { WebServerConn } from './sites.js';

/** A Linux user name hostplane accepts (useradd's default rule, at most 32 characters). */
export const LINUX_USER_RE = /^[a-z_][a-z0-9_-]{0,31}$/;
/** Marker tokens: URL- and file-name-safe. */
const TOKEN_RE = /^[A-Za-z0-9_-]{1,128}$/;

/** A webspace path that would leave the package's home (`..`, or a symlink pointing outside). */
export class WebspaceEscapeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebspaceEscapeError';
  }
}

export function assertLinuxUser(linuxUser: string): void {
  if (!LINUX_USER_RE.test(linuxUser)) throw new Error(`"${linuxUser}" is not a valid Linux user name`);
}

export interface LinuxUserIds {
  uid: number;
  gid: number;
  /** From the web server's private users (the local stack): known by id only outside its sshd. */
  private?: boolean;
}

function parsePasswdLine(line: string, name: string): LinuxUserIds | null {
  const f = line.split(':');
  if (f.length < 4 || f[0] !== name) return null;
  const uid = Number(f[2]);
  const gid = Number(f[3]);
  return Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : null;
}

/**
 * The uid/gid of a Linux user of this host, or null when there is none: `getent passwd` (sees
 * NSS: LDAP, sssd…), else /etc/passwd, else the current user when the name is ours.
 */
export async function linuxUserIds(name: string): Promise<LinuxUserIds | null> {
  assertLinuxUser(name);
  const viaGetent = await new Promise<LinuxUserIds | null | 'unavailable'>((resolve) => {
    execFile('getent', ['passwd', name], { timeout: 5000 }, (err, stdout) => {
      if (!err) return resolve(parsePasswdLine(stdout.trim().split('\n')[0] ?? '', name));
      // getent: exit 2 = no such key; anything else (ENOENT, a timeout) → try the other ways.
      resolve((err as { code?: unknown }).code === 2 ? null : 'unavailable');
    });
  });
  if (viaGetent !== 'unavailable') return viaGetent;
  try {
    for (const line of (await fs.readFile('/etc/passwd', 'utf8')).split('\n')) {
      const ids = parsePasswdLine(line, name);
      if (ids) return ids;
    }
  } catch {
    // no readable /etc/passwd: only the current user is known
  }
  const me = os.userInfo();
  return me.username === name ? { uid: me.uid, gid: me.gid } : null;
}

const isRootNow = () => typeof process.getuid === 'function' && process.getuid() === 0;

/**
 * The ids to give new files of `linuxUser`: only when running as root and the user exists — in
 * the server's private users when it has them (the local stack), else on this host.
 */
export async function ownerFor(linuxUser: string, server?: Pick<WebServerConn, 'stateDir'>): Promise<LinuxUserIds | null> {
  if (!isRootNow()) return null;
  if (server && (await hasPrivateUsers(server))) {
    assertLinuxUser(linuxUser);
    const ids = await privateUserIds(server, linuxUser);
    return ids && { ...ids, private: true };
  }
  return linuxUserIds(linuxUser);
}

/** A group's id (the server's private groups first), or null. */
async function groupId(name: string, server: Pick<WebServerConn, 'stateDir'>): Promise<number | null> {
  if (await hasPrivateUsers(server)) {
    const gid = await privateGroupId(server, name);
    if (gid !== null) return gid;
  }
  const line = await command('getent', ['group', name]).catch(() => '');
  const gid = Number(line.split(':')[2]);
  return line && Number.isInteger(gid) ? gid : null;
}

function command(cmd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: 30_000 }, (err, stdout, stderr) => {
      if (err) reject(Object.assign(new Error(`${cmd} ${args.join(' ')} failed: ${String(stderr).trim() || err.message}`), { code: (err as { code?: unknown }).code }));
      else resolve(String(stdout));
    });
  });
}

/**
 * Makes a package's Linux user exist (root only): in the server's private users when it has them
 * (the local stack), else on this host when `system` (WEB_CREATE_USERS on a web node) — its own
 * group, home `<homeRoot>/<name>` (made by ensureWebspaceDir), no login shell, in the group
 * hostplane-sftp (the SFTP rules of sshd match it; an existing user is added to it).
 */
export async function ensureLinuxUser(server: Pick<WebServerConn, 'homeRoot' | 'stateDir'>, name: string, o: { system?: boolean } = { system: true }): Promise<void> {
  assertLinuxUser(name);
  if (!isRootNow()) return;
  if (await hasPrivateUsers(server)) {
    await addPrivateUser(server, name);
    return;
  }
  if (!o.system) return;
  // -f: success when it exists (also when a job beside this one made it meanwhile).
  const sftpGroup = () => command('groupadd', ['-f', '--system', SFTP_GROUP]);
  if (!(await linuxUserIds(name))) {
    await sftpGroup();
    await command('useradd', ['--home-dir', path.join(server.homeRoot, name), '--no-create-home', '--shell', '/usr/sbin/nologin', '--user-group', '--groups', SFTP_GROUP, name]).catch((err: { code?: unknown }) => {
      // Exit 9: made meanwhile by a job running beside this one.
      if (err.code !== 9) throw err;
    });
  }
  // A user made before SFTP (or by the operator) joins the group sshd's rules match.
  const groups = (await command('id', ['-nG', name])).trim().split(/\s+/);
  if (!groups.includes(SFTP_GROUP)) {
    await sftpGroup();
    await command('usermod', ['-a', '-G', SFTP_GROUP, name]);
  }
}

function isInside(root: string, p: string): boolean {
  return p === root || p.startsWith(root.endsWith('/') ? root : root + '/');
}

/**
 * The segments of an API path ('/', '/public/', '/a/b/'): leading '/' required, trailing '/'
 * optional, empty and '.' segments dropped; '..' is an escape.
 */
function pathSegments(apiPath: string): string[] {
  if (typeof apiPath !== 'string' || !apiPath.startsWith('/')) throw new Error(`webspace path "${apiPath}" must start with '/'`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f\\]/.test(apiPath)) throw new Error('webspace path contains a control character or a backslash');
  const segments = apiPath.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) throw new WebspaceEscapeError(`webspace path "${apiPath}" leaves the home ('..')`);
  for (const s of segments) if (Buffer.byteLength(s) > 255) throw new Error('webspace path has a segment longer than 255 bytes');
  return segments;
}

/** Creates `dir` unless it exists; gives what it created `owner` and `mode` (0755 without an owner), without following a symlink. */
async function mkdirOwned(dir: string, owner: { uid: number; gid: number; mode: number } | null): Promise<void> {
  try {
    await fs.mkdir(dir, { mode: 0o755 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return;
    throw err;
  }
  if (!owner) return;
  await fs.lchown(dir, owner.uid, owner.gid);
  // After the chown, and explicitly: mkdir(2) drops the setgid bit of a mode on Linux.
  await fs.chmod(dir, owner.mode);
}

/** The home as sshd's ChrootDirectory needs it: root's, the package's group, 0751; mended when it is not. */
async function mendHome(home: string, gid: number): Promise<void> {
  const st = await fs.lstat(home);
  if (!st.isDirectory()) throw new Error(`${home} is not a directory`);
  if (st.uid !== 0 || st.gid !== gid) await fs.lchown(home, 0, gid);
  if ((st.mode & 0o7777) !== HOME_MODE) await fs.chmod(home, HOME_MODE);
}

/** The home: traversable by Caddy, listable by the package (group), writable by nobody but root. */
export const HOME_MODE = 0o751;
/** Dirs made inside the home: the package's, its web server's group, setgid so uploads get that group too. */
export const WEBSPACE_DIR_MODE = 0o2750;

async function realpathOrNull(p: string): Promise<string | null> {
  try {
    return await fs.realpath(p);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/**
 * Resolves `path` (API form: leading and trailing '/', relative to the home) inside
 * `<homeRoot>/<linuxUser>` and creates the directory (and the home) when missing; refuses — with
 * `WebspaceEscapeError` — anything whose realpath is outside the home: `..` segments, a symlink
 * (anywhere on the way) pointing outside the home. Returns the absolute realpath of the directory.
 * When running as root and the user exists, new dirs are chowned to it.
 */
export async function ensureWebspaceDir(server: WebServerConn, linuxUser: string, apiPath: string): Promise<string> {
  assertLinuxUser(linuxUser);
  if (!path.isAbsolute(server.homeRoot)) throw new Error(`web server ${server.name}: home root "${server.homeRoot}" is not absolute`);
  const segments = pathSegments(apiPath);
  const owner = await ownerFor(linuxUser, server);
  // Caddy's group where it runs as a user of its own (socketGroup), else the package's.
  const webGid = owner && server.socketGroup ? ((await groupId(server.socketGroup, server)) ?? owner.gid) : owner?.gid;

  // The home root is the operator's: created when missing (root-owned), never chowned.
  await fs.mkdir(server.homeRoot, { recursive: true, mode: 0o755 });
  const homeRoot = await fs.realpath(server.homeRoot);
  const homePath = path.join(homeRoot, linuxUser);
  await mkdirOwned(homePath, owner && { uid: 0, gid: owner.gid, mode: HOME_MODE });
  const home = await fs.realpath(homePath);
  if (path.dirname(home) !== homeRoot) {
    throw new WebspaceEscapeError(`the home of ${linuxUser} is a symlink pointing outside ${homeRoot}`);
  }
  if (owner) await mendHome(home, owner.gid);
  const dirOwner = owner && { uid: owner.uid, gid: webGid!, mode: WEBSPACE_DIR_MODE };

  let current = home;
  for (const segment of segments) {
    const next = path.join(current, segment);
    let real = await realpathOrNull(next);
    if (real === null) {
      // Missing — or a dangling symlink (lstat sees it): a symlink is never created through.
      const link = await fs.lstat(next).catch(() => null);
      if (link?.isSymbolicLink()) {
        const target = path.resolve(current, await fs.readlink(next));
        if (!isInside(home, target)) throw new WebspaceEscapeError(`"${apiPath}" leads through a symlink outside the home`);
        throw new Error(`"${apiPath}" leads through a symlink to a missing directory`);
      }
      await mkdirOwned(next, dirOwner);
      real = await fs.realpath(next);
    }
    if (!isInside(home, real)) throw new WebspaceEscapeError(`"${apiPath}" leads through a symlink outside the home`);
    const st = await fs.stat(real);
    if (!st.isDirectory()) throw new Error(`"${apiPath}": ${path.relative(home, real) || '.'} is not a directory`);
    current = real;
  }
  const final = await fs.realpath(current);
  if (!isInside(home, final)) throw new WebspaceEscapeError(`"${apiPath}" leads through a symlink outside the home`);
  return final;
}

function markerName(token: string): string {
  if (!TOKEN_RE.test(token)) throw new Error('marker token must be 1–128 characters of A-Z a-z 0-9 _ -');
  return `.hostplane-probe-${token}.txt`;
}

/**
 * Writes a marker file `<dir>/.hostplane-probe-<token>.txt` containing `token` (owned like `dir`
 * when running as root) and returns its URL path relative to the webspace root:
 * `'/.hostplane-probe-<token>.txt'`. Never writes through a symlink.
 */
export async function writeMarker(dir: string, token: string): Promise<string> {
  const name = markerName(token);
  const file = path.join(dir, name);
  await fs.rm(file, { force: true }); // a leftover of an earlier attempt, or something planted
  // O_EXCL: fails on an existing name, symlinks included, instead of following it.
  const fh = await fs.open(file, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | fsConstants.O_NOFOLLOW, 0o644);
  try {
    await fh.writeFile(token);
    if (typeof process.getuid === 'function' && process.getuid() === 0) {
      const st = await fs.stat(dir);
      await fh.chown(st.uid, st.gid);
    }
  } finally {
    await fh.close();
  }
  return `/${name}`;
}

/** Removes the marker of `token` from `dir`; nothing to do when it is gone. */
export async function removeMarker(dir: string, token: string): Promise<void> {
  await fs.rm(path.join(dir, markerName(token)), { force: true });
}
