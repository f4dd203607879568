// Webspace directories on the web server's host (API guide "Subdomains";
// docs/decisions/0008-web-servers.md): a webspace's `path` is relative to the package's home
// `<homeRoot>/<linuxUser>`; it is created when missing and must stay inside the home, symlinks
// included. Also the marker file the probe asks the web server
// for ("Done = live"), and the Linux user lookup the PHP-FPM pools share.
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

/** The ids to give new files of `linuxUser`: only when running as root and the user exists. */
export async function ownerFor(linuxUser: string): Promise<LinuxUserIds | null> {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return null;
  return linuxUserIds(linuxUser);
}

/**
 * Creates a package's Linux user when it is missing (WEB_CREATE_USERS on a web node; root only):
 * its own group, home `<homeRoot>/<name>` (made by ensureWebspaceDir), no login shell.
 */
export async function ensureLinuxUser(server: Pick<WebServerConn, 'homeRoot'>, name: string): Promise<void> {
  assertLinuxUser(name);
  if (process.getuid?.() !== 0 || (await linuxUserIds(name))) return;
  await new Promise<void>((resolve, reject) => {
    execFile('useradd', ['--home-dir', path.join(server.homeRoot, name), '--no-create-home', '--shell', '/usr/sbin/nologin', '--user-group', name], { timeout: 30_000 }, (err, _out, stderr) => {
      // Exit 9: made meanwhile by a job running beside this one.
      if (!err || (err as { code?: unknown }).code === 9) resolve();
      else reject(new Error(`useradd ${name} failed: ${stderr.trim() || err.message}`));
    });
  });
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

/** Creates `dir` (mode 0755) unless it exists; chowns what it created without following a symlink. */
async function mkdirOwned(dir: string, owner: LinuxUserIds | null): Promise<void> {
  try {
    await fs.mkdir(dir, { mode: 0o755 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return;
    throw err;
  }
  if (owner) await fs.lchown(dir, owner.uid, owner.gid);
}

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
  const owner = await ownerFor(linuxUser);

  // The home root is the operator's: created when missing (root-owned), never chowned.
  await fs.mkdir(server.homeRoot, { recursive: true, mode: 0o755 });
  const homeRoot = await fs.realpath(server.homeRoot);
  const homePath = path.join(homeRoot, linuxUser);
  await mkdirOwned(homePath, owner);
  const home = await fs.realpath(homePath);
  if (path.dirname(home) !== homeRoot) {
    throw new WebspaceEscapeError(`the home of ${linuxUser} is a symlink pointing outside ${homeRoot}`);
  }

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
      await mkdirOwned(next, owner);
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
