// `hostplane lab up|down <dir>` (decision 0018 "The lab"): boots the lab's Debian 13 hosts on
// their private network and takes everything down again. `up` records each thing before it
// makes it (state.json), so `down` undoes a running lab and a half-made one alike.
import fs from 'node:fs';
import path from 'node:path';
import { serviceLog, SERVICES } from './bridge.js';
import { ensureRepo, ensureRootfs } from './cache.js';
import { ensureHostplaneLayer } from './hostplane.js';
import { bootHost, inHost, prepareHost, rebootHost, waitBooted } from './hosts.js';
import { createNetwork, listNetns } from './network.js';
import { labRootPath, startPebble } from './pebble.js';
import { acmeDirectoryUrl, BRIDGE_ADDRESS, CLIENT_ADDRESS, LAB_ROOT_IN_HOST, names, type HostName, type Shape } from './plan.js';
import { setUpNodes } from './nodes.js';
import { alive, LabError, procRef } from './proc.js';
import { startRepoServer, waitRepoServer } from './repo-server.js';
import { startResolver, waitResolver } from './resolver.js';
import { labHosts, readState, writeState, type LabState } from './state.js';
import { teardown } from './teardown.js';

export type Log = (line: string) => void;

const TOOLS: Record<string, string> = {
  debootstrap: 'debootstrap',
  'systemd-nspawn': 'systemd-container',
  'apt-ftparchive': 'apt-utils',
  ip: 'iproute2',
  nsenter: 'util-linux',
  unshare: 'util-linux',
  curl: 'curl',
  openssl: 'openssl',
  pebble: 'pebble',
};

function onPath(cmd: string): boolean {
  const dirs = (process.env.PATH ?? '').split(':').concat(['/usr/sbin', '/sbin']);
  return dirs.some((d) => d && fs.existsSync(path.join(d, cmd)));
}

/** Why the lab cannot run on this machine, or null: root and the Debian tools it uses. */
export function preflight(): string | null {
  if (process.getuid?.() !== 0) return 'the lab needs root (network namespaces, mounts, systemd-nspawn): run it with sudo';
  const missing = Object.keys(TOOLS).filter((t) => !onPath(t));
  if (missing.length) {
    const pkgs = [...new Set(missing.map((t) => TOOLS[t]))].join(' ');
    return `missing ${missing.join(', ')}: install them with \`apt-get install ${pkgs}\``;
  }
  return null;
}

/** Whether anything recorded in `state` still exists (a process, a namespace or a mount). */
async function leftovers(state: LabState): Promise<string[]> {
  const netns = new Set(await listNetns());
  const mounts = fs.readFileSync('/proc/self/mounts', 'utf8');
  return [
    ...Object.entries(state.procs).filter(([, p]) => alive(p)).map(([name, p]) => `process ${name} (${p.pid})`),
    ...state.netns.filter((ns) => netns.has(ns)).map((ns) => `network namespace ${ns}`),
    ...state.mounts.filter((m) => mounts.includes(` ${m} `)).map((m) => `mount ${m}`),
  ];
}

/** The host of each role in the lab's shape: every role on the one server, or the company's own hosts. */
function roleHosts(state: LabState): Record<'api' | 'dns' | 'web' | 'mail' | 'db', HostName> {
  if (state.shape === 'one-server') return { api: 'host', dns: 'host', web: 'host', mail: 'host', db: 'host' };
  return { api: 'api', dns: 'api', web: 'web', mail: 'mail', db: 'db' };
}

/** The lab's description for tests and people: what exists now of the final shape. */
function labJson(state: LabState) {
  const n = names(state.dir);
  const hosts = labHosts(state);
  const roles = roleHosts(state);
  const hostOf = (name: HostName) => hosts.find((h) => h.name === name)!;
  return {
    shape: state.shape ?? 'company',
    client_netns: n.clientNetns,
    client: CLIENT_ADDRESS,
    hosts: Object.fromEntries(hosts.map((h) => [h.name, h.address])),
    host_netns: Object.fromEntries(hosts.map((h) => [h.name, n.hostNetns(h.name)])),
    role_hosts: roles,
    ca: labRootPath(state.dir),
    acme: acmeDirectoryUrl(),
    resolver: BRIDGE_ADDRESS,
    // What the nodes serve, once set up (not with --bare).
    ...(fs.existsSync(path.join(state.dir, 'demo.json'))
      ? {
          dns: hostOf(roles.dns).address,
          ...(state.shape === 'one-server' ? {} : { dns_secondary: hostOf('ns2').address }),
          api: `https://${hostOf(roles.api).fqdns[0]}`,
          mail: { host: hostOf(roles.mail).fqdns[0], smtp: 25, imap: 143, imaps: 993 },
          db: { host: hostOf(roles.db).fqdns[0], port: 3306 },
          demo: path.join(state.dir, 'demo.json'),
        }
      : {}),
  };
}

/** The hosts run this checkout's hostplane, with its dependencies, from their own Node. */
async function checkHostplane(host: string, leader: number): Promise<void> {
  const r = await inHost(leader, ['hostplane', '--version'], { timeoutMs: 60_000 });
  if (r.code !== 0) throw new LabError(`hostplane does not run on ${host}: ${(r.stderr || r.stdout).trim()}`);
}

export async function labUp(dirArg: string, log: Log, opts: { bootTimeoutMs?: number; bare?: boolean; shape?: Shape } = {}): Promise<void> {
  const why = preflight();
  if (why) throw new LabError(why);
  const dir = path.resolve(dirArg);
  if (fs.existsSync(dir) && !fs.statSync(dir).isDirectory()) throw new LabError(`${dir} is not a directory`);
  fs.mkdirSync(dir, { recursive: true });
  const old = readState(dir);
  if (old) {
    if (old.upPid && old.upPid.pid !== process.pid && alive(old.upPid)) throw new LabError(`\`lab up\` is already running on ${dir} (pid ${old.upPid.pid})`);
    const left = await leftovers(old);
    throw new LabError(
      left.length
        ? `${dir} already has a running lab (${left.join(', ')}); take it down first: hostplane lab down ${dir}`
        : `${dir} has the record of an earlier lab (state.json); clear it first: hostplane lab down ${dir}`,
    );
  }
  const n = names(dir);
  const state: LabState = { id: n.id, dir, upPid: procRef(process.pid), created: new Date().toISOString(), shape: opts.shape ?? 'company', netns: [], mounts: [], cgroups: [], procs: {}, paths: [] };
  writeState(state);
  try {
    const rootfs = await ensureRootfs(log);
    const repo = await ensureRepo(rootfs, log);
    const hostplane = await ensureHostplaneLayer(log);
    log(`lab ${n.id}: network 198.18.0.0/24 in namespaces ${n.bridgeNetns}, ${n.clientNetns}, …`);
    await createNetwork(state, n);
    startRepoServer(state, n, repo);
    startResolver(state, n);
    const labRoot = await startPebble(state, n);
    await Promise.all([waitRepoServer(state, n), waitResolver(state)]);
    log(`Pebble at ${acmeDirectoryUrl()} (trust ${labRootPath(dir)}), resolver on ${BRIDGE_ADDRESS}:53`);
    const hosts = labHosts(state);
    const started = [];
    for (const h of hosts) {
      await prepareHost(state, h, [hostplane, rootfs], labRoot);
      started.push({ h, nspawn: bootHost(state, n, h) });
    }
    log(`booting ${hosts.map((h) => h.name).join(', ')}`);
    const leaders = await Promise.all(started.map(({ h, nspawn }) => waitBooted(nspawn, h.name, opts.bootTimeoutMs ?? 120_000).then(async (pid) => (await checkHostplane(h.name, pid), pid))));
    if (!opts.bare) {
      log('setting up the nodes with hostplane node setup');
      await setUpNodes(dir, state.shape!, Object.fromEntries(hosts.map((h, i) => [h.name, leaders[i]])), { directory: acmeDirectoryUrl(), caInHost: LAB_ROOT_IN_HOST }, log);
    }
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    throw new LabError(`lab up failed: ${msg}\nwhat it made is recorded in ${dir}/state.json; remove it with: hostplane lab down ${dir}`);
  }
  delete state.upPid;
  writeState(state);
  fs.writeFileSync(path.join(dir, 'lab.json'), `${JSON.stringify(labJson(state), null, 2)}\n`);
  log(`lab up: ${labHosts(state).map((h) => `${h.name} ${h.address}`).join(', ')}; described in ${dir}/lab.json`);
}

/** Reboots one host of the running lab in `dir` (a power cycle: poweroff inside, then boot). */
export async function labReboot(dirArg: string, hostName: string): Promise<void> {
  const why = preflight();
  if (why) throw new LabError(why);
  const dir = path.resolve(dirArg);
  const state = readState(dir);
  if (!state) throw new LabError(`no lab in ${dir} (no state.json there)`);
  const host = labHosts(state).find((h) => h.name === hostName);
  if (!host) throw new LabError(`${hostName} is not a host of the lab (hosts: ${labHosts(state).map((h) => h.name).join(', ')})`);
  if (!alive(state.procs[host.name])) throw new LabError(`${hostName} is not running`);
  await rebootHost(state, names(dir), host);
}

/** Takes the lab in `dir` down; the lines saying what it removed. */
export async function labDown(dirArg: string): Promise<string[]> {
  const why = preflight();
  if (why) throw new LabError(why);
  const dir = path.resolve(dirArg);
  const state = readState(dir);
  if (!state) throw new LabError(`no lab in ${dir} (no state.json there)`);
  if (state.upPid && state.upPid.pid !== process.pid && alive(state.upPid)) {
    throw new LabError(`\`lab up\` is still running on ${dir} (pid ${state.upPid.pid}); stop it first, then run lab down again`);
  }
  const removed = await teardown(state);
  const files = [path.join(dir, 'lab.json'), path.join(dir, 'state.json'), ...Object.keys(SERVICES).map((s) => serviceLog(dir, s))];
  for (const f of files) fs.rmSync(f, { force: true });
  // The hosts' parent directory, if `down` emptied it (a person's files in it stay).
  if (fs.existsSync(path.join(dir, 'hosts')) && !fs.readdirSync(path.join(dir, 'hosts')).length) fs.rmdirSync(path.join(dir, 'hosts'));
  return removed;
}
