// Processes the tests start and stop (daemons of the local stack, PHP-FPM masters), as /proc shows them.
import fs from 'node:fs/promises';

/** Whether `pid` is a live process (a zombie is not: it has ended, only nobody has reaped it yet). */
export async function alive(pid: number): Promise<boolean> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (stat === null) return false;
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state !== 'Z' && state !== 'X';
}

/** The program a process runs (its argv[0]), '' when it is gone. */
export async function argv0(pid: number): Promise<string> {
  return (await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0')[0];
}
