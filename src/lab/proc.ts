// Commands the lab runs and the processes it starts and stops. Processes are stopped by PID only,
// and only when their start time still matches the one recorded, so a PID reused by something
// else after a crash is never signalled (decision 0018 "The lab": `lab down` stops what it started).
import { spawn } from 'node:child_process';
import fs from 'node:fs';

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A failure of a command the lab ran, with what it printed. */
export class LabError extends Error {}

/** Runs `cmd args…` to its end; never throws for a non-zero exit (see `must`). */
export function run(cmd: string, args: string[], opts: { input?: string; timeoutMs?: number; cwd?: string } = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'], timeout: opts.timeoutMs });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d) => (stdout += d));
    child.stderr?.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr }));
    if (child.stdin) {
      // A command that ends before reading its input is not an error of ours.
      child.stdin.on('error', () => {});
      child.stdin.end(opts.input);
    }
  });
}

/** Runs a command that must succeed; its stdout, or a LabError naming the command and its words. */
export async function must(cmd: string, args: string[], opts: Parameters<typeof run>[2] = {}): Promise<string> {
  const r = await run(cmd, args, opts);
  if (r.code !== 0) {
    const words = (r.stderr.trim() || r.stdout.trim()).split('\n').slice(-15).join('\n');
    throw new LabError(`${cmd} ${args.join(' ')} failed (exit ${r.code}):\n${words}`);
  }
  return r.stdout;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A process as the lab records it: its PID and the kernel's start time (clock ticks after boot). */
export interface ProcRef {
  pid: number;
  start: string;
}

function stat(pid: number): string[] | null {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name in parentheses may hold spaces: fields are counted after it.
    return s.slice(s.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

export function procRef(pid: number): ProcRef {
  const f = stat(pid);
  if (!f) throw new LabError(`process ${pid} ended right after it was started`);
  return { pid, start: f[19] };
}

/** Whether the recorded process still runs (the same one: same start time, not a zombie). */
export function alive(p: ProcRef): boolean {
  const f = stat(p.pid);
  return f !== null && f[19] === p.start && f[0] !== 'Z' && f[0] !== 'X';
}

/** The direct children of a process (the container's leader is nspawn's child). */
export function children(pid: number): number[] {
  try {
    return fs
      .readdirSync(`/proc/${pid}/task`)
      .flatMap((t) => fs.readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8').trim().split(/\s+/))
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

/** Sends `signal` to the recorded process if it still is that process. */
export function signal(p: ProcRef, sig: NodeJS.Signals): boolean {
  if (!alive(p)) return false;
  try {
    process.kill(p.pid, sig);
    return true;
  } catch {
    return false;
  }
}

/** Waits until none of `procs` runs, up to `ms`; true when all ended. */
export async function waitGone(procs: ProcRef[], ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (procs.some(alive)) {
    if (Date.now() > until) return false;
    await sleep(100);
  }
  return true;
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once every one has ended. */
export async function stop(procs: ProcRef[], graceMs: number): Promise<void> {
  for (const p of procs) signal(p, 'SIGTERM');
  if (await waitGone(procs, graceMs)) return;
  for (const p of procs) signal(p, 'SIGKILL');
  if (!(await waitGone(procs, 5000))) {
    throw new LabError(`processes ${procs.filter(alive).map((p) => p.pid).join(', ')} did not end after SIGKILL`);
  }
}

/**
 * Moves a finished build into its place in the cache; when a concurrent run got there first, its
 * copy is kept and this one dropped (both were built from the same inputs).
 */
export function publish(build: string, final: string): void {
  try {
    fs.renameSync(build, final);
  } catch (err) {
    if (!fs.existsSync(final)) throw err;
    fs.rmSync(build, { recursive: true, force: true });
  }
}
