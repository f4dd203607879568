// Debian 13's Dovecot 2.4 for tests on a Debian 12 machine (docs/decisions/0018-nodes-on-debian.md
// "One renderer, two profiles"): its doveconf runs chrooted in a Debian 13 root filesystem —
// HOSTPLANE_TRIXIE_ROOT, else the lab's cache (/var/cache/hostplane-lab), which is never changed:
// when its root filesystem has no Dovecot, an overlay in a temporary directory gets it from the lab's
// package repository. Each check runs in a mount namespace of its own, with this machine's /tmp
// mounted over the root's /tmp, so rendered paths are the same inside.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe } from 'vitest';
import { mailToolsMissing, run } from './mail-render.js';
import { requirable } from './required.js';

const LAB = '/var/cache/hostplane-lab';
const LAB_ROOT = `${LAB}/rootfs/trixie`;
const LAB_REPO = `${LAB}/repo/trixie`;
const PACKAGES = ['dovecot-core', 'dovecot-imapd', 'dovecot-lmtpd', 'dovecot-pgsql', 'dovecot-sqlite', 'dovecot-sieve'];


type Source = { root: string } | { lower: string; repo: string };

function source(): Source | string {
  const given = process.env.HOSTPLANE_TRIXIE_ROOT;
  if (given) return fs.existsSync(`${given}/usr/bin/doveconf`) ? { root: given } : `HOSTPLANE_TRIXIE_ROOT=${given} has no usr/bin/doveconf (dovecot-core)`;
  if (fs.existsSync(`${LAB_ROOT}/usr/bin/doveconf`)) return { root: LAB_ROOT };
  if (fs.existsSync(`${LAB_ROOT}/usr/bin/apt-get`) && fs.existsSync(`${LAB_REPO}/Packages`) && fs.readdirSync(LAB_REPO).some((f) => f.startsWith('dovecot-core_'))) {
    return { lower: LAB_ROOT, repo: LAB_REPO };
  }
  return `no Debian 13 root filesystem with Dovecot: set HOSTPLANE_TRIXIE_ROOT, or fill the lab's cache (${LAB})`;
}

/** Why Dovecot 2.4 cannot be asked here, or null. */
export function dovecot24Missing(): string | null {
  const s = source();
  if (typeof s === 'string') return s;
  return fs.existsSync('/usr/bin/unshare') ? null : 'unshare is not installed (util-linux)';
}

/**
 * A suite that needs Debian 13's Dovecot: required where the lab keeps its cache (it makes the root
 * filesystem); elsewhere, CI included until it runs the lab, skipped with the reason.
 */
export function describeDovecot24(name: string, body: () => void): void {
  const missing = mailToolsMissing() ?? dovecot24Missing();
  if (missing === null || fs.existsSync(LAB)) requirable(missing)(name, body);
  else describe.skip(`${name} (skipped: ${missing})`, body);
}

export interface Trixie {
  /** `doveconf -c <conf> <args…>` of Debian 13, its stdout. */
  doveconf(conf: string, args?: string[]): Promise<string>;
  /** Starts `<command…>` in the root (with /proc), in the foreground: the child's pid is the command's. */
  start(command: string[]): ChildProcess;
  /** Whether dovecot-sqlite is installed (a root given by HOSTPLANE_TRIXIE_ROOT may lack it). */
  sqlite: boolean;
  close(): void;
}

/** A Debian 13 root with Dovecot; an overlay with Dovecot installed when the lab's has none (~15 s). */
export async function openTrixie(): Promise<Trixie> {
  const s = source();
  if (typeof s === 'string') throw new Error(s);
  let mountRoot = '';
  let root: string;
  let tmp = '';
  if ('root' in s) root = s.root;
  else {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hp-render-trixie-'));
    for (const d of ['upper', 'work', 'merged']) fs.mkdirSync(path.join(tmp, d));
    root = path.join(tmp, 'merged');
    mountRoot = `mount -t overlay overlay -o lowerdir=${s.lower},upperdir=${tmp}/upper,workdir=${tmp}/work ${root} && `;
    const apt = '-o Dir::Etc::sourcelist=/etc/apt/sources.list.d/hostplane-lab.list -o Dir::Etc::sourceparts=- -qq';
    await run('unshare', ['-m', 'sh', '-c',
      `${mountRoot}mount --bind ${s.repo} ${root}/mnt && mount -t proc proc ${root}/proc && ` +
        `echo 'deb [trusted=yes] file:/mnt ./' > ${root}/etc/apt/sources.list.d/hostplane-lab.list && ` +
        `chroot ${root} sh -c 'apt-get ${apt} update && DEBIAN_FRONTEND=noninteractive apt-get ${apt} install -y --no-install-recommends ${PACKAGES.join(' ')}' >/dev/null`]);
  }
  const files = 'root' in s ? s.root : `${tmp}/upper`;
  return {
    sqlite: fs.existsSync(`${files}/usr/lib/dovecot/modules/libdriver_sqlite.so`),
    start: (command) =>
      spawn('unshare', ['-m', 'sh', '-c', `${mountRoot}mount --bind /tmp "$0/tmp" && mount -t proc proc "$0/proc" && exec chroot "$0" "$@"`, root, ...command], { stdio: ['ignore', 'pipe', 'pipe'] }),
    doveconf: (conf, args = ['-n']) =>
      run('unshare', ['-m', 'sh', '-c', `${mountRoot}mount --bind /tmp "$0/tmp" && exec chroot "$0" doveconf -c "$@"`, root, conf, ...args]),
    close: () => {
      if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
    },
  };
}
