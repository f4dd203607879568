// A lab for a test file (decision 0018 "The lab"): booted before its tests, taken down after them,
// whatever they did. `const lab = useLab()`, then `await lab.sh('db', 'hostplane --version')`.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { hostLeader, inHost } from '../../src/lab/hosts.js';
import { readState } from '../../src/lab/state.js';
import { names } from '../../src/lab/plan.js';
import { runCli } from './cli.js';

export type LabHost = 'api' | 'web' | 'mail' | 'db' | 'ns2' | 'host';

export interface Lab {
  dir: string;
  /** `sh -c <script>` as root inside a host: its exit code and output. */
  sh(host: LabHost, script: string, timeoutMs?: number): Promise<{ code: number | null; stdout: string; stderr: string }>;
  /** Powers a host off and boots it again (`hostplane lab reboot`). */
  reboot(host: LabHost): Promise<void>;
  /** A command of this machine run in the lab's client namespace (the "internet"). */
  client(cmd: string, args: string[]): { code: number | null; stdout: string; stderr: string };
}

/** `useLab({ bare: true })`: the hosts booted, not set up as nodes; `oneServer`: one host with every role. */
export function useLab(o: { bare?: boolean; oneServer?: boolean } = {}): Lab {
  // HOSTPLANE_TEST_LAB=<dir>: a lab that `hostplane lab up <dir>` booted, used as it is and left running
  // (for working on one test of a suite; the suite's earlier steps may have run there already).
  const kept = process.env.HOSTPLANE_TEST_LAB;
  const dir = kept ?? fs.mkdtempSync(path.join(os.tmpdir(), 'hp-lab-'));
  if (!kept) beforeAll(async () => {
    const up = await runCli(['lab', 'up', dir, ...(o.bare ? ['--bare'] : []), ...(o.oneServer ? ['--one-server'] : [])], {});
    expect(up.code, up.stderr).toBe(0);
  }, 1_800_000);
  if (!kept) afterAll(async () => {
    if (fs.existsSync(path.join(dir, 'state.json'))) await runCli(['lab', 'down', dir], {});
    fs.rmSync(dir, { recursive: true, force: true });
  }, 120_000);
  return {
    dir,
    // The state is read again each time: a reboot gives the host a new leader.
    sh: async (host, script, timeoutMs = 600_000) => inHost(await hostLeader(readState(dir)!, host), ['sh', '-c', script], { timeoutMs }),
    reboot: async (host) => {
      const r = await runCli(['lab', 'reboot', dir, host], {});
      expect(r.code, r.stderr).toBe(0);
    },
    client: (cmd, args) => {
      const r = spawnSync('ip', ['netns', 'exec', names(dir).clientNetns, cmd, ...args], { encoding: 'utf8', timeout: 60_000 });
      return { code: r.status, stdout: r.stdout, stderr: r.stderr };
    },
  };
}
