// The lab's hosts (decision 0018 "The lab"): each boots the cached Debian 13 root filesystem
// through an overlay (its changes stay in <dir>/hosts/<name>), in its own network namespace, with
// `systemd-nspawn -b`. This machine runs no systemd, so nspawn neither registers nor makes a
// scope; instead each host is started inside cgroups of its own, or the hosts' systemd instances
// would share (and kill each other's) units.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { BRIDGE_ADDRESS, etcHosts, LAB_ROOT_IN_HOST, repoUrl, type HostPlan, type Names } from './plan.js';
import { alive, children, LabError, must, procRef, run, sleep, type ProcRef } from './proc.js';
import { labHosts, record, recordProc, type LabState } from './state.js';

export const hostDir = (dir: string, host: string) => path.join(dir, 'hosts', host);
export const hostRoot = (dir: string, host: string) => path.join(hostDir(dir, host), 'root');

/** The cgroup hierarchies systemd uses: cgroup v2 wherever mounted, and v1's name=systemd. */
export function cgroupRoots(): string[] {
  return fs
    .readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .map((l) => l.split(' '))
    .filter(([, , type, opts]) => type === 'cgroup2' || (type === 'cgroup' && opts?.split(',').includes('name=systemd')))
    .map(([, mountPoint]) => mountPoint);
}

/**
 * Mounts the host's overlay and writes the files that make it this host of this lab. `lower`:
 * the read-only layers, uppermost first (hostplane's layer, then the root filesystem); `labRoot`:
 * the lab's lab-root.pem (Pebble's root and the CA of its HTTPS).
 */
export async function prepareHost(state: LabState, host: HostPlan, lower: string[], labRoot: string): Promise<string> {
  const dir = hostDir(state.dir, host.name);
  const root = hostRoot(state.dir, host.name);
  record(state, 'paths', dir);
  for (const d of ['upper', 'work', 'root']) fs.mkdirSync(path.join(dir, d), { recursive: true });
  record(state, 'mounts', root);
  await must('mount', ['-t', 'overlay', 'overlay', '-o', `lowerdir=${lower.join(':')},upperdir=${dir}/upper,workdir=${dir}/work`, root]);
  const etc = (f: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(root, 'etc', f)), { recursive: true });
    fs.writeFileSync(path.join(root, 'etc', f), text);
  };
  etc('hostname', `${host.fqdns[0]}\n`);
  etc('hosts', etcHosts(host, labHosts(state)));
  // The lab's resolver, as a machine's recursive resolver: lab.test, and customer names through
  // hostplane's DNS server once `node setup --roles …,dns` ran; /etc/hosts has the lab's names too.
  etc('resolv.conf', `nameserver ${BRIDGE_ADDRESS}\n`);
  etc('apt/sources.list.d/lab.list', `deb [trusted=yes] ${repoUrl()} ./\n`);
  etc(path.relative('/etc', LAB_ROOT_IN_HOST), labRoot);
  return root;
}

/** Starts the host's container, detached, in cgroups of its own; records nspawn's PID. */
export function bootHost(state: LabState, n: Names, host: HostPlan): ProcRef {
  const groups = cgroupRoots().map((r) => path.join(r, n.cgroup(host.name)));
  for (const g of groups) {
    record(state, 'cgroups', g);
    fs.mkdirSync(g, { recursive: true });
  }
  // nspawn removes these when it ends normally, not when it is killed; so lab down does.
  const root = fs.statSync(hostRoot(state.dir, host.name));
  record(state, 'paths', `/run/systemd/nspawn/propagate/${n.machine(host.name)}`);
  record(state, 'paths', `/run/systemd/nspawn/locks/inode-${root.dev}:${root.ino}`);
  const nspawn = [
    'systemd-nspawn', '--boot', '--register=no', '--keep-unit', '--link-journal=no', '--console=read-only',
    `--directory=${hostRoot(state.dir, host.name)}`,
    `--network-namespace-path=/run/netns/${n.hostNetns(host.name)}`,
    `--machine=${n.machine(host.name)}`,
    `--hostname=${host.fqdns[0]}`,
    // The lab's resolver (prepareHost's /etc/resolv.conf), not this machine's: nspawn would copy that in.
    '--resolv-conf=off',
  ];
  // The shell moves itself into the groups, then becomes nspawn: the PID recorded is nspawn's.
  const script = `${groups.map((g) => `echo $$ > '${g}/cgroup.procs'`).join(' && ')} && exec "$@"`;
  const log = fs.openSync(path.join(hostDir(state.dir, host.name), 'console.log'), 'a');
  const child = spawn('sh', ['-c', script, 'sh', ...nspawn], { detached: true, stdio: ['ignore', log, log] });
  fs.closeSync(log);
  child.unref();
  if (!child.pid) throw new LabError(`could not start systemd-nspawn for ${host.name}`);
  const ref = procRef(child.pid);
  recordProc(state, host.name, ref);
  return ref;
}

/** The container's PID 1 as this machine sees it: nspawn's child, once it has one. */
async function leader(nspawn: ProcRef, until: number, host: string): Promise<number> {
  for (;;) {
    // nspawn forks an intermediate child first, which exits once the container's init runs: wait
    // for init itself (systemd), or nsenter would aim at a process about to vanish.
    const pid = children(nspawn.pid).find((p) => comm(p) === 'systemd');
    if (pid) return pid;
    if (Date.now() > until) throw new LabError(`${host}: systemd-nspawn started no container (see its console.log)`);
    await sleep(100);
  }
}

const comm = (pid: number) => {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
};

/** Runs a command inside a running host (all of its namespaces and its root). */
export function inHost(leaderPid: number, cmd: string[], opts: { timeoutMs?: number; input?: string } = {}) {
  return run('nsenter', ['-t', String(leaderPid), '-m', '-u', '-i', '-n', '-p', '-C', '-r', '-w', '--', '/usr/bin/env', '-i', 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'LC_ALL=C.UTF-8', ...cmd], opts);
}

/** Waits until systemd in the host says it is up ("running", or "degraded": a unit failed). */
export async function waitBooted(nspawn: ProcRef, host: string, timeoutMs: number): Promise<number> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const pid = await leader(nspawn, until, host);
    const r = await inHost(pid, ['systemctl', 'is-system-running', '--wait'], { timeoutMs: Math.max(1000, until - Date.now()) });
    const answer = r.stdout.trim();
    if (answer === 'running' || answer === 'degraded') return pid;
    if (answer === 'stopping') throw new LabError(`${host} is shutting down instead of booting (systemd says "${answer}"; see its console.log)`);
    // Before systemd listens, systemctl fails at once or says "offline"; it is asked again until the deadline.
    if (Date.now() > until) throw new LabError(`${host} did not finish booting within ${timeoutMs / 1000} s (systemd says "${answer || r.stderr.trim()}")`);
    await sleep(250);
  }
}

/** The container's systemd of a running host (its leader), for nsenter. */
export async function hostLeader(state: LabState, host: string, timeoutMs = 10_000): Promise<number> {
  return leader(state.procs[host], Date.now() + timeoutMs, host);
}

/**
 * Powers the host off from inside (systemd stops every unit, nspawn ends) and boots it again on
 * the same layers, as a reboot of a server: what it runs after that, it starts by itself.
 */
export async function rebootHost(state: LabState, n: Names, host: HostPlan, timeoutMs = 180_000): Promise<number> {
  const until = Date.now() + timeoutMs;
  const old = state.procs[host.name];
  // systemctl may lose its connection while the host goes down: its answer does not matter.
  await inHost(await hostLeader(state, host.name), ['systemctl', 'poweroff'], { timeoutMs: 30_000 });
  while (alive(old)) {
    if (Date.now() > until) throw new LabError(`${host.name} did not power off within ${timeoutMs / 1000} s`);
    await sleep(200);
  }
  return waitBooted(bootHost(state, n, host), host.name, Math.max(1000, until - Date.now()));
}
