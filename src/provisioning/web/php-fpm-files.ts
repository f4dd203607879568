// The files of PHP-FPM under a web server's state dir (docs/decisions/0008-web-servers.md "PHP-FPM:
// one master per version, one pool per (Linux user, version)"): `<stateDir>/php/<version>/` holds
// the master's config (`php-fpm.conf`, which includes `pools/*.conf`), its pid file and log, and one
// socket per pool (`<user>.sock`); `<stateDir>/tmp/<user>/` is the one dir besides the home that a
// pool's PHP may use (open_basedir). What is rendered here is written only when it changed.
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { LinuxUserIds } from './webspace-dirs.js';

export const VERSION_RE = /^\d\.\d$/;
/** What a directory written into php-fpm's ini files and open_basedir may contain. */
export const SAFE_DIR_RE = /^\/[A-Za-z0-9._+@/-]*$/;
/** sun_path holds 108 bytes including the terminating NUL. */
export const MAX_SOCKET_PATH = 107;

/** Pool sizing: ondemand, so an idle site costs no process. */
const POOL_SETTINGS = {
  pm: 'ondemand',
  'pm.max_children': '5',
  'pm.process_idle_timeout': '10s',
  'pm.max_requests': '500',
};

/** The paths of one version's master under the state dir. */
export interface VersionPaths {
  dir: string;
  pools: string;
  conf: string;
  pid: string;
  log: string;
}

export function versionPaths(stateDir: string, version: string): VersionPaths {
  const dir = path.join(stateDir, 'php', version);
  return {
    dir,
    pools: path.join(dir, 'pools'),
    conf: path.join(dir, 'php-fpm.conf'),
    pid: path.join(dir, 'php-fpm.pid'),
    log: path.join(dir, 'php-fpm.log'),
  };
}

export function poolFile(p: VersionPaths, linuxUser: string): string {
  return path.join(p.pools, `${linuxUser}.conf`);
}

/** The names of the pool files of one version (none when its pools dir is missing). */
export async function poolFiles(p: VersionPaths): Promise<string[]> {
  const names = await fs.readdir(p.pools).catch(() => [] as string[]);
  return names.filter((n) => n.endsWith('.conf'));
}

export function masterConfig(serverName: string, version: string, p: VersionPaths): string {
  return [
    `; Written by hostplane: the PHP ${version} master of web server ${serverName}. Changes are overwritten.`,
    '[global]',
    `pid = ${p.pid}`,
    `error_log = ${p.log}`,
    'log_level = notice',
    'daemonize = yes',
    'process_control_timeout = 10s',
    `include = ${p.pools}/*.conf`,
    '',
  ].join('\n');
}

export interface PoolSpec {
  serverName: string;
  linuxUser: string;
  version: string;
  /** The Linux user's ids when the pool runs as that user; null: as the master's user. */
  owner: LinuxUserIds | null;
  home: string;
  tmp: string;
  socket: string;
  listenGroup?: string;
}

export function poolConfig(s: PoolSpec): string {
  const lines = [
    `; Written by hostplane: the PHP ${s.version} pool of ${s.linuxUser} on web server ${s.serverName}. Changes are overwritten.`,
    `[${s.linuxUser}]`,
  ];
  // Without a user line the pool runs as the master's user (php-fpm's group default: the user's primary group).
  // A private user (the local stack) is unknown to php-fpm's passwd: by ids, which php-fpm takes as they are.
  if (s.owner?.private) lines.push(`user = ${s.owner.uid}`, `group = ${s.owner.gid}`);
  else if (s.owner) lines.push(`user = ${s.linuxUser}`);
  lines.push(`listen = ${s.socket}`, 'listen.mode = 0660');
  if (s.listenGroup) lines.push(`listen.group = ${s.listenGroup}`);
  for (const [k, v] of Object.entries(POOL_SETTINGS)) lines.push(`${k} = ${v}`);
  lines.push(
    'security.limit_extensions = .php',
    `php_admin_value[open_basedir] = ${s.home}/:${s.tmp}/`,
    `php_admin_value[upload_tmp_dir] = ${s.tmp}`,
    `php_admin_value[session.save_path] = ${s.tmp}`,
    `php_admin_value[sys_temp_dir] = ${s.tmp}`,
    '',
  );
  return lines.join('\n');
}

/** Writes `content` to `file` (atomically, by rename) unless it already holds exactly that; true when written. */
export async function writeIfChanged(file: string, content: string): Promise<boolean> {
  const current = await fs.readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw err;
  });
  if (current === content) return false;
  // The temporary name does not end in `.conf`: the master's `include = pools/*.conf` never sees it.
  const tmp = `${file}.tmp-${process.pid}-${crypto.randomBytes(4).toString('hex')}`;
  await fs.writeFile(tmp, content, { mode: 0o644 });
  await fs.rename(tmp, file);
  return true;
}

export async function exists(p: string): Promise<boolean> {
  return fs.lstat(p).then(
    () => true,
    () => false,
  );
}

/** `<stateDir>/tmp/<user>/`: uploads, sessions and tempnam() of that user's PHP, mode 0700, the user's. */
export async function ensureTmpDir(stateDir: string, linuxUser: string, owner: LinuxUserIds | null): Promise<string> {
  const parent = path.join(stateDir, 'tmp');
  await fs.mkdir(parent, { recursive: true, mode: 0o755 });
  const dir = path.join(parent, linuxUser);
  await fs.mkdir(dir, { mode: 0o700 }).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
  });
  const st = await fs.lstat(dir);
  if (!st.isDirectory()) throw new Error(`${dir} is not a directory`);
  if (owner && (st.uid !== owner.uid || st.gid !== owner.gid)) await fs.lchown(dir, owner.uid, owner.gid);
  return dir;
}
