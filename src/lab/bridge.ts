// The lab's services on the bridge address (decision 0018 "The lab"): the repository server, the
// resolver and Pebble, each a process started inside the bridge namespace, recorded by PID so
// `lab down` stops it, writing to <dir>/<name>.log.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Names } from './plan.js';
import { alive, LabError, procRef, run, sleep, type ProcRef } from './proc.js';
import { recordProc, type LabState } from './state.js';

/** What `lab down` calls each service, by its name in state.json; every other process is a host. */
export const SERVICES: Record<string, string> = { 'repo-server': 'the repository server', resolver: 'the resolver', pebble: 'Pebble' };

export const serviceLog = (dir: string, name: string) => path.join(dir, `${name}.log`);

/** Starts `argv` in the bridge namespace, detached; records its PID under `name`. */
export function startInBridge(state: LabState, n: Names, name: string, argv: string[], env?: NodeJS.ProcessEnv): ProcRef {
  const log = fs.openSync(serviceLog(state.dir, name), 'a');
  // `ip netns exec` execs the command: the PID is the service's own.
  const child = spawn('ip', ['netns', 'exec', n.bridgeNetns, ...argv], { detached: true, stdio: ['ignore', log, log], env: env ?? process.env });
  fs.closeSync(log);
  child.unref();
  if (!child.pid) throw new LabError(`could not start ${SERVICES[name] ?? name}`);
  const ref = procRef(child.pid);
  recordProc(state, name, ref);
  return ref;
}

/** Runs a command in the bridge namespace (curl against a service, say). */
export const inBridge = (n: Names, argv: string[]) => run('ip', ['netns', 'exec', n.bridgeNetns, ...argv], { timeoutMs: 10_000 });

/** Waits until `ready` says yes; fails early, with the end of its log, if the service ended. */
export async function waitService(state: LabState, name: string, ready: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  const what = SERVICES[name] ?? name;
  for (;;) {
    if (await ready()) return;
    const p = state.procs[name];
    const ended = !p || !alive(p);
    if (ended || Date.now() > until) {
      let tail = '';
      try {
        tail = fs.readFileSync(serviceLog(state.dir, name), 'utf8').trim().split('\n').slice(-10).join('\n');
      } catch {
        // no log yet
      }
      throw new LabError(`${what} ${ended ? 'ended' : `is not ready after ${timeoutMs / 1000} s`} (${serviceLog(state.dir, name)}):\n${tail}`);
    }
    await sleep(100);
  }
}
