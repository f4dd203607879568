// /var/cache/hostplane-lab: the Debian 13 root filesystem every host boots from, and the flat APT
// repository the hosts install from (decision 0018 "The lab"). Both are built once, with this
// machine's network, and reused. The root filesystem is built beside its final place and renamed
// only when complete; the repository's index is rewritten only after every download finished.
// Every mount of a build lives in a private mount namespace (`unshare -m`), so it vanishes with
// the build's process, also when the build is interrupted.
import fs from 'node:fs';
import path from 'node:path';
import { CACHE_DIR, MIRROR, RELEASE } from './plan.js';
import { ROLE_PACKAGES, ROOTFS_BASE, ROOTFS_EXTRA } from './packages.js';
import { alive, must, procRef, publish } from './proc.js';

export const rootfsDir = () => path.join(CACHE_DIR, 'rootfs', RELEASE);
export const repoDir = () => path.join(CACHE_DIR, 'repo', RELEASE);
const MANIFEST = '.packages';

type Log = (line: string) => void;

const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * Runs `script` (sh) as root of `root` with /proc, /dev and /sys mounted and this machine's
 * network and DNS; `setup` runs first, outside the chroot, in the same private mount namespace.
 */
async function inChroot(root: string, script: string, setup = ''): Promise<string> {
  const outer = [
    'set -e',
    setup,
    `mount -t proc proc ${q(`${root}/proc`)}`,
    `mount --rbind /dev ${q(`${root}/dev`)}`,
    `mount -t sysfs sysfs ${q(`${root}/sys`)}`,
    `cp -L /etc/resolv.conf ${q(`${root}/etc/resolv.conf`)}`,
    `exec chroot ${q(root)} /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 sh -ec ${q(script)}`,
  ].join('\n');
  return must('unshare', ['--mount', '--propagation', 'private', '--pid', '--fork', '--', 'sh', '-ec', outer]);
}

/** Removes builds left by interrupted runs (their process is gone); a running build is left alone. */
function removeStaleBuilds(parent: string): void {
  for (const entry of fs.existsSync(parent) ? fs.readdirSync(parent) : []) {
    const m = /^\.build-[a-z]+-(\d+)-(\d+)$/.exec(entry);
    if (m && !alive({ pid: Number(m[1]), start: m[2] })) fs.rmSync(path.join(parent, entry), { recursive: true, force: true });
  }
}

/** What follows debootstrap: npm (see ROOTFS_EXTRA) and the settings every host shares. */
export async function finishRootfs(build: string, log: Log): Promise<void> {
  log(`installing ${ROOTFS_EXTRA.join(' ')} into it`);
  await inChroot(
    build,
    [
      'apt-get update -qq',
      `apt-get install -y -qq --no-install-recommends ${ROOTFS_EXTRA.join(' ')} >/dev/null`,
      // Hosts boot with a machine id nspawn gives them, log in only through nsenter (no password
      // login for root), and install only from the lab repository (no other source).
      'passwd -l root >/dev/null',
      ': > /etc/machine-id',
      'rm -f /var/lib/dbus/machine-id /etc/apt/sources.list /etc/apt/sources.list.d/*',
      'apt-get clean',
      'rm -rf /var/lib/apt/lists/*',
    ].join('\n'),
  );
  fs.writeFileSync(path.join(build, 'etc/resolv.conf'), '');
}

/** The cached root filesystem, built first if it is missing. */
export async function ensureRootfs(log: Log): Promise<string> {
  const final = rootfsDir();
  if (fs.existsSync(final)) return final;
  const parent = path.dirname(final);
  fs.mkdirSync(parent, { recursive: true });
  removeStaleBuilds(parent);
  const me = procRef(process.pid);
  const build = path.join(parent, `.build-${RELEASE}-${me.pid}-${me.start}`);
  log(`building the Debian ${RELEASE} root filesystem in ${build} (debootstrap; a few minutes, once)`);
  await must('debootstrap', ['--variant=minbase', `--include=${ROOTFS_BASE.join(',')}`, RELEASE, build, MIRROR]);
  await finishRootfs(build, log);
  publish(build, final);
  log(`root filesystem ready: ${final}`);
  return final;
}

function manifest(repo: string): Set<string> {
  try {
    return new Set(fs.readFileSync(path.join(repo, MANIFEST), 'utf8').split('\n').filter(Boolean));
  } catch {
    return new Set();
  }
}

/**
 * The lab repository with every package of `packages` and its dependencies (those not already in
 * the root filesystem). apt downloads in a throw-away overlay of the root filesystem, straight
 * into the repository, so .debs already there are not fetched again.
 */
export async function ensureRepo(rootfs: string, log: Log, packages: string[] = ROLE_PACKAGES): Promise<string> {
  const repo = repoDir();
  const have = manifest(repo);
  if (packages.every((p) => have.has(p)) && fs.existsSync(path.join(repo, 'Packages'))) return repo;
  fs.mkdirSync(repo, { recursive: true });
  const missing = packages.filter((p) => !have.has(p));
  log(`downloading ${missing.join(' ')} and their dependencies into ${repo}`);
  const work = fs.mkdtempSync('/tmp/hp-lab-repo-');
  try {
    for (const d of ['upper', 'work', 'root']) fs.mkdirSync(path.join(work, d));
    const root = path.join(work, 'root');
    const setup = [
      `mount -t overlay overlay -o ${q(`lowerdir=${rootfs},upperdir=${work}/upper,workdir=${work}/work`)} ${q(root)}`,
      `mkdir -p ${q(`${root}/var/cache/apt/archives`)}`,
      `mount --bind ${q(repo)} ${q(`${root}/var/cache/apt/archives`)}`,
      `echo ${q(`deb ${MIRROR} ${RELEASE} main`)} > ${q(`${root}/etc/apt/sources.list`)}`,
    ].join('\n');
    await inChroot(root, `apt-get update -qq\napt-get install -y -qq --download-only ${packages.join(' ')} >/dev/null`, setup);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  fs.rmSync(path.join(repo, 'partial'), { recursive: true, force: true });
  fs.rmSync(path.join(repo, 'lock'), { force: true });
  // A flat repository: `deb [trusted=yes] http://…/ ./`; apt wants a Release file beside Packages.
  fs.writeFileSync(path.join(repo, 'Packages'), await must('apt-ftparchive', ['packages', '.'], { cwd: repo }));
  fs.rmSync(path.join(repo, 'Release'), { force: true });
  fs.writeFileSync(path.join(repo, 'Release'), await must('apt-ftparchive', ['release', '.'], { cwd: repo }));
  fs.writeFileSync(path.join(repo, MANIFEST), `${[...new Set([...have, ...packages])].sort().join('\n')}\n`);
  log(`lab repository ready: ${repo} (${fs.readdirSync(repo).filter((f) => f.endsWith('.deb')).length} packages)`);
  return repo;
}
