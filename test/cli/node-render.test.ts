// `hostplane node render` refuses bad input before writing anything (docs/decisions/0018-nodes-on-debian.md
// "One renderer, two profiles"): an unknown profile, a facts file it cannot read or parse, facts with
// missing or invalid fields (each one named), an --out that is not a directory.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

describe('hostplane node render: bad input', () => {
  let dir: string;
  let out: string;
  const facts = (name: string, value: unknown) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
    return file;
  };
  const render = (profile: string, file: string, to = out) => runCli(['node', 'render', '--profile', profile, '--facts', file, '--out', to], {});

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hp-render-'));
    out = path.join(dir, 'out');
    fs.mkdirSync(out);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('an unknown profile is a usage error', async () => {
    const r = await render('production', facts('any.json', {}));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("option '--profile <profile>' argument 'production' is invalid. must be private (the local stack) or system (a Debian node).");
  });

  it('a facts file that is missing or not JSON: exit 2, named', async () => {
    const missing = await render('private', path.join(dir, 'nope.json'));
    expect(missing).toMatchObject({ code: 2, stderr: `hostplane: --facts: cannot read ${path.join(dir, 'nope.json')}: ENOENT\n` });
    const notJson = await render('private', facts('bad.json', '{"dir": '));
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toMatch(/^hostplane: --facts: .*bad\.json is not JSON: /);
  });

  it('private: every missing or invalid field is named, and nothing is written', async () => {
    const r = await render('private', facts('private.json', { dir: 'relative/dir', portBase: 65530, name: 'Local', apiUrl: 'ftp://x', store: { driver: 'pgsql', host: 'db', port: '5432', dbname: 'h', user: 'u', password: 'p' }, mailUid: 0, mailGid: 8, rspamd: { hsCacheDir: 7 } }));
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n')).toEqual([
      `hostplane: invalid facts in ${path.join(dir, 'private.json')} (profile private):`,
      '  - dir must be an absolute path of letters, digits and . _ - + @ /; got "relative/dir"',
      "  - portBase must be the stack's port-base, 1 to 65516; got 65530",
      '  - name must be the registered mail server name: 1 to 32 of a-z, 0-9 and "-", e.g. mx1; got "Local"',
      '  - apiUrl must be hostplane\'s API base, http(s)://host[:port][/path]; got "ftp://x"',
      '  - doveadmKey is missing (the doveadm API key: 16 to 256 of A-Z a-z 0-9 + / = . _ -)',
      '  - store.port must be a port number; got "5432"',
      '  - store.schema is missing (a non-empty string without control characters, quotes, backslashes or %)',
      "  - mailUid must be the uid of the mailboxes' system user; got 0",
      '  - rspamd.hsCacheDir must be an absolute path of letters, digits and . _ - + @ /; got 7',
      '',
    ]);
    expect(fs.readdirSync(out)).toEqual([]);
  });

  it('system: TLS files and the host name are required', async () => {
    const r = await render('system', facts('system.json', { name: 'mx1', hostname: 'MX1', apiUrl: 'https://api.example.net', doveadmKey: 'k'.repeat(32), store: { driver: 'sqlite', path: '/var/lib/hostplane/hostplane.db' }, mailUid: 5000, mailGid: 5000, dovecotVersion: '3.0' }));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('  - hostname must be the node\'s host name in lower case, e.g. mx1.example.net; got "MX1"\n');
    expect(r.stderr).toContain('  - dovecotVersion must be "2.3" or "2.4"; got "3.0"\n');
    expect(r.stderr).toContain('  - tls is missing (an object)\n');
    expect(fs.readdirSync(out)).toEqual([]);
  });

  it('an --out that is not a directory: exit 2, nothing written', async () => {
    const good = facts('good.json', { dir: '/srv/stack', portBase: 47000, name: 'local', apiUrl: 'http://127.0.0.1:8080', doveadmKey: 'k'.repeat(32), store: { driver: 'sqlite', path: '/srv/stack.db' }, mailUid: 8, mailGid: 8, rspamd: null });
    const r = await render('private', good, path.join(dir, 'missing'));
    expect(r).toMatchObject({ code: 2, stderr: `hostplane: --out: ${path.join(dir, 'missing')} is not a directory; create it first.\n` });
    expect(fs.existsSync(path.join(dir, 'missing'))).toBe(false);
  });
});
