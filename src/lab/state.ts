// <dir>/state.json: everything `lab up` created, written before or right after each step, so
// `lab down` can undo a lab that is running and one whose `up` failed half way (decision 0018
// "The lab"). Nothing is found by name at down time; only what is recorded here is touched.
import fs from 'node:fs';
import path from 'node:path';
import { hostsOf, type HostPlan, type Shape } from './plan.js';
import type { ProcRef } from './proc.js';

export interface LabState {
  id: string;
  dir: string;
  /** The `lab up` that wrote it, while it runs (a second `up` on the same dir refuses). */
  upPid?: ProcRef;
  created: string;
  /** Absent in a lab of an earlier hostplane: a company. */
  shape?: Shape;
  /** Network namespaces, in creation order. */
  netns: string[];
  /** Mount points, in mount order (unmounted in reverse). */
  mounts: string[];
  /** cgroup v2 directories created for the hosts (removed with whatever systemd made below). */
  cgroups: string[];
  /** Processes: the services on the bridge address (bridge.ts) and one systemd-nspawn per host. */
  procs: Record<string, ProcRef>;
  /**
   * Files and directories `lab down` deletes: the hosts' overlay layers, and what nspawn leaves
   * in /run when it is killed (its propagation directory and its lock on the host's root).
   */
  paths: string[];
}

export const statePath = (dir: string) => path.join(dir, 'state.json');

export function readState(dir: string): LabState | null {
  try {
    return JSON.parse(fs.readFileSync(statePath(dir), 'utf8')) as LabState;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** Written to a temporary file and renamed, so an interrupted write never leaves half a record. */
export function writeState(state: LabState): void {
  const file = statePath(state.dir);
  fs.writeFileSync(`${file}.tmp`, `${JSON.stringify(state, null, 2)}\n`);
  fs.renameSync(`${file}.tmp`, file);
}

/** Records one more thing of the lab, then saves; call before creating it (undo tolerates absence). */
export function record<K extends 'netns' | 'mounts' | 'cgroups' | 'paths'>(state: LabState, key: K, value: string): void {
  if (!state[key].includes(value)) state[key].push(value);
  writeState(state);
}

export function recordProc(state: LabState, name: string, p: ProcRef): void {
  state.procs[name] = p;
  writeState(state);
}

/** The hosts of the lab `state` describes. */
export const labHosts = (state: Pick<LabState, 'shape'>): HostPlan[] => hostsOf(state.shape ?? 'company');
