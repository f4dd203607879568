// Placing a node's config files (docs/decisions/0018-nodes-on-debian.md "One command per node"):
// a right file is left alone, a new one is checked by its daemon before it replaces the running
// one, and a refused one leaves the running file as it was.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, expect, it } from 'vitest';
import { commandCheck, placeFile, RefusedFile } from '../../src/node/files.js';
import { requirable } from '../helpers/required.js';

const has = (cmd: string) => {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`]);
    return true;
  } catch {
    return false;
  }
};
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hp-node-files-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const OK = 'protocols = imap\nlisten = 127.0.0.1\n';
const check = commandCheck('doveconf', ['-n', '-c', '{}']);

requirable(has('doveconf') ? null : 'doveconf (Debian: dovecot-core) is not installed')('placeFile', () => {
  it('writes a new file with its mode, leaves a right one alone, replaces a changed one', async () => {
    const file = path.join(dir, 'conf.d', 'dovecot.conf');
    expect(await placeFile({ path: file, text: OK, mode: 0o640, check })).toBe('written');
    expect(fs.readFileSync(file, 'utf8')).toBe(OK);
    expect(fs.statSync(file).mode & 0o7777).toBe(0o640);
    expect(await placeFile({ path: file, text: OK, mode: 0o640, check })).toBe('unchanged');
    // Drift in the mode alone is mended too.
    fs.chmodSync(file, 0o644);
    expect(await placeFile({ path: file, text: OK, mode: 0o640, check })).toBe('written');
    expect(fs.statSync(file).mode & 0o7777).toBe(0o640);
    const next = OK + 'mail_max_userip_connections = 20\n';
    expect(await placeFile({ path: file, text: next, mode: 0o640, check })).toBe('written');
    expect(fs.readFileSync(file, 'utf8')).toBe(next);
  });

  it("a file its daemon refuses is not placed: the running file stays, the daemon's words are in the error", async () => {
    const file = path.join(dir, 'refused', 'dovecot.conf');
    await placeFile({ path: file, text: OK, mode: 0o640, check });
    const err = await placeFile({ path: file, text: OK + 'bogus_setting = 1\n', mode: 0o640, check }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RefusedFile);
    expect((err as RefusedFile).file).toBe(file);
    expect((err as Error).message).toMatch(/refused by its check, the running file is kept: doveconf: .*Unknown setting: bogus_setting/);
    expect(fs.readFileSync(file, 'utf8')).toBe(OK);
    expect(fs.readdirSync(path.dirname(file))).toEqual(['dovecot.conf']);
  });

  it('an owner that does not exist is named, and nothing is written', async () => {
    const file = path.join(dir, 'owner', 'x.conf');
    await expect(placeFile({ path: file, text: OK, mode: 0o600, owner: 'no-such-user-hp' })).rejects.toThrow('no user named no-such-user-hp on this host');
    expect(fs.existsSync(file)).toBe(false);
  });
});
