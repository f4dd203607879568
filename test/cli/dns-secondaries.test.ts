// `hostplane admin dns-secondary add|list|remove` (docs/decisions/0013-dns-secondaries.md):
// the BIND key file as tsig-keygen writes it, hmac-sha256 only, ip:port addresses, and no secret in
// any output.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, freshStore, processUrl, type TestStore } from '../helpers/app.js';
import { runCli } from '../helpers/cli.js';
import { testKey } from '../helpers/secondaries.js';

describe.each(ENGINES)('hostplane admin dns-secondary on %s', (engine) => {
  let ts: TestStore;
  let env: Record<string, string>;
  let dir: string;
  beforeAll(async () => {
    ts = await freshStore(engine);
    env = { DATABASE_URL: processUrl(ts) };
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostplane-keys-'));
  });
  afterAll(async () => {
    await ts?.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const file = (name: string, text: string) => {
    const f = path.join(dir, name);
    fs.writeFileSync(f, text);
    return f;
  };

  it('adds with a tsig-keygen key file, lists without the secret, removes', async () => {
    let text = testKey('ns2-key').bindFile;
    try {
      // The real tsig-keygen when it is there (bind9-utils).
      text = execFileSync('tsig-keygen', ['-a', 'hmac-sha256', 'ns2-key'], { encoding: 'utf8' });
    } catch {}
    const secret = /secret "([^"]+)"/.exec(text)![1];
    const add = await runCli(['admin', 'dns-secondary', 'add', '--name', 'ns2', '--address', '127.0.0.1:5353', '--tsig-key-file', file('ns2.key', text), '--json'], env);
    expect(add.stderr).toBe('');
    expect(add.code).toBe(0);
    expect(JSON.parse(add.stdout)).toMatchObject({ name: 'ns2', address: '127.0.0.1:5353', tsig_key: 'ns2-key', algorithm: 'hmac-sha256' });
    const list = await runCli(['admin', 'dns-secondary', 'list', '--json'], env);
    expect(JSON.parse(list.stdout)).toEqual([expect.objectContaining({ name: 'ns2', tsig_key: 'ns2-key' })]);
    const table = await runCli(['admin', 'dns-secondary', 'list'], env);
    expect(table.stdout).toContain('ns2-key');
    for (const out of [add.stdout, list.stdout, table.stdout]) expect(out).not.toContain(secret);
    const row = await ts.store.db.selectFrom('dns_secondaries').selectAll().executeTakeFirstOrThrow();
    expect(row.tsig_secret).toBe(secret);

    const again = await runCli(['admin', 'dns-secondary', 'add', '--name', 'ns2', '--address', '127.0.0.1:5354', '--tsig-key-file', file('ns2.key', text)], env);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/exists already/);
    const rm = await runCli(['admin', 'dns-secondary', 'remove', 'ns2'], env);
    expect(rm.code).toBe(0);
    expect(JSON.parse((await runCli(['admin', 'dns-secondary', 'list', '--json'], env)).stdout)).toEqual([]);
  });

  it('refuses other algorithms, a missing file, host names and broken key files with clear messages', async () => {
    const md5 = file('md5.key', 'key "old" {\n\talgorithm hmac-md5;\n\tsecret "c2VjcmV0c2VjcmV0c2VjcmV0";\n};\n');
    const cases: Array<[string[], RegExp]> = [
      [['--address', '127.0.0.1:53', '--tsig-key-file', md5], /uses hmac-md5; only hmac-sha256 is supported/],
      [['--address', '127.0.0.1:53', '--tsig-key-file', path.join(dir, 'none.key')], /no such file/],
      [['--address', 'ns2.example:53', '--tsig-key-file', file('k.key', testKey('k').bindFile)], /must be ip:port/],
      [['--address', '127.0.0.1:53', '--tsig-key-file', file('bad.key', 'secret "abc";')], /no `key "name"/],
    ];
    for (const [args, message] of cases) {
      const r = await runCli(['admin', 'dns-secondary', 'add', '--name', 'nsx', ...args], env);
      expect(r.code, r.stderr).not.toBe(0);
      expect(r.stderr).toMatch(message);
    }
    expect(await ts.store.db.selectFrom('dns_secondaries').selectAll().execute()).toEqual([]);
  });
});
