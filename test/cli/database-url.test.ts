// DATABASE_URL that names no database hostplane can open: another engine's URL (mysql://…), which
// was taken for a relative file name, or a file in a directory that does not exist, which was made.
// Every command — the operator commands and the long-running ones alike — exits 2 with one line
// naming DATABASE_URL, and creates nothing.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

const COMMANDS = [['migrate'], ['admin', 'customer', 'list'], ['demo'], ['serve'], ['worker'], ['dns']];
/** Nothing may listen anyway: serve without its DNS server; `dns` cannot run without one (a port nobody gets to). */
const dnsListen = (args: string[]) => (args[0] === 'dns' ? '127.0.0.1:1' : 'off');

describe('DATABASE_URL that names no database hostplane can open', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostplane-dburl-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it.each(COMMANDS)('another engine\'s URL → exit 2 naming DATABASE_URL, no file made (%s …)', async (...args) => {
    const cwd = process.cwd();
    const before = fs.readdirSync(cwd);
    const r = await runCli(args, { DATABASE_URL: 'mysql://root@db.example:3306/hostplane', DNS_LISTEN: dnsListen(args) });
    expect(r).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'hostplane: invalid settings:\n' +
        '  - DATABASE_URL: "mysql:" is not a database hostplane can use: give a file path for SQLite ' +
        '(e.g. ./data/hostplane.db or /var/lib/hostplane/hostplane.db), a sqlite: URL, or a postgres:// URL\n',
    });
    expect(fs.readdirSync(cwd)).toEqual(before);
  });

  it('a postgres URL without // → exit 2 saying what one looks like', async () => {
    const r = await runCli(['migrate'], { DATABASE_URL: 'postgres:hostplane' });
    expect(r).toEqual({
      code: 2,
      stdout: '',
      stderr: 'hostplane: invalid settings:\n  - DATABASE_URL: a PostgreSQL URL is postgres://user:password@host:port/database\n',
    });
  });

  it.each(COMMANDS)('a file in a directory that does not exist → exit 2 naming DATABASE_URL, no directory made (%s …)', async (...args) => {
    const missing = path.join(dir, 'nonexistent', 'dir');
    for (const url of [path.join(missing, 'x.db'), `sqlite://${path.join(missing, 'x.db')}`]) {
      const r = await runCli(args, { DATABASE_URL: url, DNS_LISTEN: dnsListen(args) });
      expect(r).toEqual({
        code: 2,
        stdout: '',
        stderr:
          'hostplane: invalid settings:\n' +
          `  - DATABASE_URL: the directory ${missing} does not exist; create it first (mkdir -p ${missing}) or name a file in an existing directory\n`,
      });
      expect(fs.existsSync(path.join(dir, 'nonexistent'))).toBe(false);
    }
  });

  it('a file where the directory should be → exit 2 saying so', async () => {
    const file = path.join(dir, 'plain-file');
    fs.writeFileSync(file, '');
    const r = await runCli(['migrate'], { DATABASE_URL: path.join(file, 'x.db') });
    expect(r).toEqual({ code: 2, stdout: '', stderr: `hostplane: invalid settings:\n  - DATABASE_URL: ${file} is not a directory\n` });
  });

  it('a file in an existing directory is made, as before', async () => {
    const r = await runCli(['migrate', '--json'], { DATABASE_URL: path.join(dir, 'new.db') });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(fs.existsSync(path.join(dir, 'new.db'))).toBe(true);
  });
});
