// `hostplane node mail-policy --config <file>` (docs/decisions/0020-outbound-limits.md) as a unit
// and the local stack run it: a config that is not right is refused naming every bad field (exit 2);
// a right one listens, answers Postfix's policy protocol from the store it names, says when the
// address is taken, and stops at SIGTERM.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, freshStore, type TestApp, type TestStore } from '../helpers/app.js';
import { exited, freePort, runCli, spawnCli } from '../helpers/cli.js';
import { PolicyClient, message, recipients } from '../helpers/mail-policy.js';
import { pollUntil } from '../helpers/wait.js';

describe('hostplane node mail-policy', { timeout: 60_000 }, () => {
  let tmp: string;
  let ts: TestStore;
  let t: TestApp;
  const config = (value: unknown) => {
    const file = path.join(tmp, `config-${Math.random().toString(36).slice(2)}.json`);
    fs.writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
    return file;
  };
  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hp-policy-'));
    ts = await freshStore('sqlite');
    t = await createTestApp('sqlite', {}, { store: ts });
  });
  afterAll(async () => {
    await t?.close();
    await ts?.drop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('a config that is missing, not JSON or wrong is refused naming every bad field, exit 2', async () => {
    const missing = path.join(tmp, 'nope.json');
    expect(await runCli(['node', 'mail-policy', '--config', missing], {})).toEqual({ code: 2, stdout: '', stderr: `hostplane: --config: cannot read ${missing}: ENOENT\n` });
    const notJson = config('{');
    expect((await runCli(['node', 'mail-policy', '--config', notJson], {})).stderr).toMatch(new RegExp(`^hostplane: --config: ${notJson} is not JSON: `));
    const wrong = config({ name: 'MX 1', listen: 'localhost:10040', store: { driver: 'pgsql', host: 'db', port: '5432', dbname: 'h', user: 'u', password: 'p' } });
    expect(await runCli(['node', 'mail-policy', '--config', wrong], {})).toEqual({
      code: 2,
      stdout: '',
      stderr: [
        `hostplane: invalid facts in ${wrong} (mail policy config):`,
        '  - name must be the registered mail server name: 1 to 32 of a-z, 0-9 and "-", e.g. mx1; got "MX 1"',
        '  - listen must be host:port with an IPv4 address, e.g. "127.0.0.1:10040"; got "localhost:10040"',
        '  - store.port must be a port number; got "5432"',
        '  - store.schema is missing (a non-empty string without control characters, quotes, backslashes or %)',
        '',
      ].join('\n'),
    });
  });

  it('runs from a right config: answers the protocol with the limits of its store, refuses a taken address, stops at SIGTERM', async () => {
    const port = await freePort();
    const file = config({ name: 'mx-test', listen: `127.0.0.1:${port}`, store: { driver: 'sqlite', path: ts.url } });
    const child = spawnCli(['node', 'mail-policy', '--config', file], { LOG_LEVEL: 'info' });
    const done = exited(child);
    let log = '';
    child.stdout.on('data', (d) => (log += d));
    // The CLI starts through tsx (it compiles first): on a loaded machine that takes a while.
    await pollUntil(async () => log, (l) => l.includes('hostplane mail-policy ready'), 'the ready line', 60_000);
    const c = await PolicyClient.connect(port);
    // No such mailbox in this store: deferred. Without a login: untouched.
    expect(await message(c, 'a@nowhere.example', recipients(1))).toEqual(['450 4.7.1 <a@nowhere.example> is no active mailbox of this server; try again later']);
    expect(await message(c, null, recipients(2))).toEqual(['DUNNO', 'DUNNO']);
    c.close();
    const second = await runCli(['node', 'mail-policy', '--config', file], {});
    expect(second).toEqual({ code: 1, stdout: '', stderr: `hostplane: cannot listen on 127.0.0.1:${port}: the address is in use\n` });
    child.kill('SIGTERM');
    expect((await done).code).toBe(0);
  }, 90_000);
});
