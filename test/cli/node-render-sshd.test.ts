// `hostplane node render-sshd` (docs/decisions/0023-sftp.md "The local stack's users"): writes the
// local stack's sshd_config — the renderer's text exactly — once (a second run leaves it alone), and
// refuses what sshd_config cannot hold or a stack must not do (a listener off loopback) before
// writing anything.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { privateSshdConfig } from '../../src/node/render/sshd.js';
import { runCli } from '../helpers/cli.js';

describe('hostplane node render-sshd', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hp-render-sshd-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const args = (o: Record<string, string>) => ['node', 'render-sshd', ...Object.entries(o).flatMap(([k, v]) => [`--${k}`, v])];
  const facts = () => ({ listen: '127.0.0.1:40020', 'host-key': `${dir}/host_key`, 'pid-file': `${dir}/sshd.pid`, 'chroot-root': '/run/hostplane-sftp/www', 'state-dir': `${dir}/web`, out: `${dir}/sshd_config` });

  it("writes the renderer's config, mode 0644; a second run leaves it as it is", async () => {
    const first = await runCli(args(facts()), {});
    expect(first).toEqual({ code: 0, stdout: `Wrote ${dir}/sshd_config\n`, stderr: '' });
    expect(fs.readFileSync(`${dir}/sshd_config`, 'utf8')).toBe(privateSshdConfig({ listen: '127.0.0.1:40020', hostKey: `${dir}/host_key`, pidFile: `${dir}/sshd.pid`, chrootRoot: '/run/hostplane-sftp/www', stateDir: `${dir}/web` }));
    expect(fs.statSync(`${dir}/sshd_config`).mode & 0o777).toBe(0o644);
    expect(await runCli(args(facts()), {})).toEqual({ code: 0, stdout: `${dir}/sshd_config was up to date\n`, stderr: '' });
  });

  it('bad input: exit 2 naming it, nothing written', async () => {
    const out = `${dir}/never`;
    expect(await runCli(args({ ...facts(), listen: '0.0.0.0:22', out }), {})).toEqual({ code: 2, stdout: '', stderr: 'hostplane: listen "0.0.0.0:22" must be a loopback address and port\n' });
    expect(await runCli(args({ ...facts(), 'state-dir': 'relative/web', out }), {})).toEqual({
      code: 2, stdout: '', stderr: 'hostplane: stateDir "relative/web" must be an absolute path of letters, digits and . _ + @ - /\n',
    });
    expect(await runCli(args({ ...facts(), out: `${dir}/missing/sshd_config` }), {})).toEqual({ code: 2, stdout: '', stderr: `hostplane: --out: ${dir}/missing is not a directory; create it first.\n` });
    expect(fs.existsSync(out)).toBe(false);
  });
});
