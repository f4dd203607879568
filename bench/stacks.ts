// What the benches that start the local stack share (bench:subdomains, bench:email): up.sh on free
// ports, down.sh --purge for every stack still up at the end (after an error too), and Ctrl-C: the
// first stops the runs at their next step, a second one stops the stacks at once and quits.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { DOWN, ROOT, script, scriptEnv, upOnFreePorts } from '../test/helpers/stack-scripts.js';

export class BenchStacks {
  /** Set by SIGINT/SIGTERM: the runs stop at the next step and the cleanup runs. */
  interrupted = false;
  /** Stack dirs with servers running. */
  private readonly dirs = new Set<string>();

  /** Throws 'interrupted' once Ctrl-C was pressed: `stacks.check()` between steps. */
  check(): void {
    if (this.interrupted) throw new Error('interrupted');
  }

  /** up.sh on a free port-base (a port taken meanwhile gets new ones); throws with its stderr when it fails. */
  async up(dir: string, env: Record<string, string>): Promise<Awaited<ReturnType<typeof upOnFreePorts>>> {
    this.dirs.add(dir);
    const up = await upOnFreePorts(dir, env);
    if (up.run.code !== 0) {
      this.dirs.delete(dir);
      throw new Error(`deploy/local/up.sh ${dir} ${up.base} failed (${up.run.code}): ${up.run.stderr.trim()}`);
    }
    return up;
  }

  has(dir: string): boolean {
    return this.dirs.has(dir);
  }

  async down(dir: string): Promise<void> {
    const run = await script(DOWN, [dir, '--purge'], {});
    if (run.code !== 0) throw new Error(`deploy/local/down.sh ${dir} failed (${run.code}): ${run.stderr.trim()}`);
    this.dirs.delete(dir);
  }

  /**
   * Runs `work` with Ctrl-C handled; afterwards (also after an error) every stack goes and `root`
   * is removed: `const results = await stacks.guard(root, log, () => runs())`.
   */
  async guard<T>(root: string, log: (s: string) => void, work: () => Promise<T>): Promise<T> {
    const onSignal = (signal: NodeJS.Signals) => {
      if (this.interrupted) {
        // Now: the stacks go synchronously, the rest with the process.
        for (const dir of this.dirs) spawnSync(DOWN, [dir, '--purge'], { cwd: ROOT, env: scriptEnv({}), stdio: 'inherit' });
        fs.rmSync(root, { recursive: true, force: true });
        process.exit(130);
      }
      this.interrupted = true;
      log(`${signal}: stopping after the current step and stopping the stacks (again to stop them at once and quit)`);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    try {
      return await work();
    } finally {
      // Also after an error between an instance's start and its own cleanup: no server is left.
      for (const dir of [...this.dirs]) await this.down(dir).catch((err) => console.error((err as Error).message));
      fs.rmSync(root, { recursive: true, force: true });
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  }
}
