// Undoing what `lab up` recorded (decision 0018 "The lab"), in the order that lets each step
// succeed: processes, then mounts, cgroups, namespaces and directories. Each step skips what is
// already gone, so it also finishes a half-made lab or an interrupted `down`.
import fs from 'node:fs';
import path from 'node:path';
import { SERVICES } from './bridge.js';
import { destroyNetwork } from './network.js';
import { alive, run, sleep, stop } from './proc.js';
import type { LabState } from './state.js';

/** Every process in a recorded cgroup and its subgroups (the container's own processes). */
function cgroupProcs(group: string): number[] {
  if (!fs.existsSync(group)) return [];
  const pids: number[] = [];
  const walk = (g: string) => {
    for (const l of fs.readFileSync(path.join(g, 'cgroup.procs'), 'utf8').split('\n')) if (l) pids.push(Number(l));
    for (const e of fs.readdirSync(g, { withFileTypes: true })) if (e.isDirectory()) walk(path.join(g, e.name));
  };
  walk(group);
  return pids;
}

/** Removes a cgroup and the groups systemd made below it, deepest first. */
function removeCgroup(group: string): void {
  for (const e of fs.readdirSync(group, { withFileTypes: true })) if (e.isDirectory()) removeCgroup(path.join(group, e.name));
  fs.rmdirSync(group);
}

const mounted = (p: string) =>
  fs
    .readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .some((l) => l.split(' ')[1]?.replace(/\\040/g, ' ') === p);

async function stopProcesses(state: LabState, out: string[]): Promise<void> {
  const hosts = Object.entries(state.procs).filter(([name]) => !Object.hasOwn(SERVICES, name));
  const running = hosts.filter(([, p]) => alive(p));
  // SIGTERM asks nspawn to shut its host down cleanly; what still runs after the grace is killed.
  await stop(running.map(([, p]) => p), 15_000);
  for (const [name, p] of running) out.push(`stopped host ${name} (systemd-nspawn pid ${p.pid})`);
  // Whatever the containers left in their cgroups (nspawn killed before its container) goes too.
  for (const g of state.cgroups) {
    const pids = cgroupProcs(g);
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // ended meanwhile
      }
    }
    for (let i = 0; i < 50 && cgroupProcs(g).length; i++) await sleep(100);
    if (pids.length) out.push(`killed ${pids.length} processes left in ${g}`);
  }
  // The services on the bridge address go last: the hosts may use them while they shut down.
  const services = Object.entries(state.procs).filter(([name, p]) => Object.hasOwn(SERVICES, name) && alive(p));
  await stop(services.map(([, p]) => p), 5000);
  for (const [name, p] of services) out.push(`stopped ${SERVICES[name]} (pid ${p.pid})`);
}

async function unmount(state: LabState, out: string[]): Promise<string[]> {
  const failed: string[] = [];
  for (const m of [...state.mounts].reverse()) {
    if (!mounted(m)) continue;
    let r = await run('umount', [m]);
    for (let i = 0; r.code !== 0 && i < 20; i++) {
      await sleep(250);
      r = await run('umount', [m]);
    }
    if (r.code === 0) out.push(`unmounted ${m}`);
    else failed.push(`${m}: ${r.stderr.trim()}`);
  }
  return failed;
}

/** Takes down everything `state` records; the lines saying what it removed. Throws if something stays. */
export async function teardown(state: LabState): Promise<string[]> {
  const out: string[] = [];
  await stopProcesses(state, out);
  const stuck = await unmount(state, out);
  for (const g of state.cgroups) {
    if (!fs.existsSync(g)) continue;
    removeCgroup(g);
    out.push(`removed cgroup ${g}`);
  }
  for (const ns of await destroyNetwork(state)) out.push(`deleted network namespace ${ns} and its interfaces`);
  for (const d of state.paths) {
    // Never delete below a mount point that is still mounted: that would reach into the lower layer.
    if (!fs.existsSync(d) || stuck.some((s) => s.startsWith(d))) continue;
    fs.rmSync(d, { recursive: true, force: true });
    out.push(`deleted ${d}`);
  }
  if (stuck.length) throw new Error(`could not unmount ${stuck.join('; ')}; run lab down again once nothing uses it`);
  return out;
}
