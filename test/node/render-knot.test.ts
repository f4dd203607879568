// knot.conf of a Knot secondary from a facts file (`hostplane node render-knot`, what deploy/local/up.sh
// calls; docs/decisions/0018-nodes-on-debian.md "One renderer, two profiles"): bad facts are refused
// naming every field at once, nothing written; good ones give a file of mode 0600 that Knot's own
// `knotc conf-check` accepts, left alone on a second run. The check needs knotc (Debian: knot).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FactsError, knotConf, readKnotInput, type KnotFacts } from '../../src/node/render/index.js';
import { runCli } from '../helpers/cli.js';
import { requirable } from '../helpers/required.js';

const KNOTC = '/usr/sbin/knotc';
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hp-knot-render-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** What up.sh gives for a stack in `dir`. */
const good = (dir = tmp): KnotFacts => ({
  listen: ['127.0.0.1@5316'],
  rundir: dir,
  storage: dir,
  log: `${dir}/knot.log`,
  control: `${dir}/knot.sock`,
  key: { name: 'local-knot-0a1b2c3d', secret: Buffer.alloc(32, 7).toString('base64') },
  primary: { host: '127.0.0.1', port: 5300 },
  via: '127.0.0.1',
  catalogZone: 'catalog.hostplane.invalid',
  refreshMaxS: 60,
  retryMaxS: 10,
});

const problems = (value: unknown): string[] => {
  try {
    readKnotInput(value);
  } catch (err) {
    if (err instanceof FactsError) return err.problems;
    throw err;
  }
  return [];
};

describe('readKnotInput', () => {
  it('refuses bad facts listing every problem at once', () => {
    expect(problems({
      listen: ['127.0.0.1@5316', '127.0.0.1:53', 'localhost@53', '::1@0', 7], user: 'knot', rundir: 'run', log: '/var/log/"knot".log', control: '/run/knot\\sock',
      key: { name: 'a key', secret: Buffer.alloc(15).toString('base64') }, primary: { host: 'ns1.example.net', port: 65536 }, via: '127.0.0.1/8',
      catalogZone: 'Catalog.Example.', refreshMaxS: 0, retryMaxS: 1.5,
    })).toEqual([
      'listen[1] must be address@port, e.g. "127.0.0.1@53"; got "127.0.0.1:53"',
      'listen[2] must be address@port, e.g. "127.0.0.1@53"; got "localhost@53"',
      'listen[3] must be address@port, e.g. "127.0.0.1@53"; got "::1@0"',
      'listen[4] must be address@port, e.g. "127.0.0.1@53"; got 7',
      'user must be user:group, e.g. "knot:knot"; got "knot"',
      'rundir must be an absolute path without quotes, backslashes or control characters; got "run"',
      'storage is missing (an absolute path without quotes, backslashes or control characters)',
      'log must be "syslog" or an absolute path without quotes, backslashes or control characters; got "/var/log/\\"knot\\".log"',
      'control must be an absolute path without quotes, backslashes or control characters; got "/run/knot\\\\sock"',
      'key.name must be the TSIG key\'s name: letters, digits and . _ -; got "a key"',
      'key.secret must be the TSIG secret: base64 of at least 16 bytes; got "AAAAAAAAAAAAAAAAAAAA"',
      'primary.host must be an IP address; got "ns1.example.net"',
      'primary.port must be a port number; got 65536',
      'via must be an IP address; got "127.0.0.1/8"',
      'catalogZone must be a domain name in lower case without the final dot, e.g. "catalog.hostplane.invalid"; got "Catalog.Example."',
      'refreshMaxS must be a positive whole number of seconds; got 0',
      'retryMaxS must be a positive whole number of seconds; got 1.5',
    ]);
    expect(problems({ listen: [], key: 'k', primary: null })).toEqual([
      'listen must be a non-empty list of address@port, e.g. "127.0.0.1@53"; got []',
      'rundir is missing (an absolute path without quotes, backslashes or control characters)',
      'storage is missing (an absolute path without quotes, backslashes or control characters)',
      'log is missing ("syslog" or an absolute path without quotes, backslashes or control characters)',
      'key must be an object; got "k"',
      'primary must be an object; got null',
      'via is missing (an IP address)',
      'catalogZone is missing (a domain name in lower case without the final dot, e.g. "catalog.hostplane.invalid")',
      'refreshMaxS is missing (a positive whole number of seconds)',
      'retryMaxS is missing (a positive whole number of seconds)',
    ]);
    expect(problems([good()])).toEqual(['the facts must be a JSON object']);
  });

  it("accepts a stack's facts and a node's (user, syslog, IPv6, no control socket) as they are", () => {
    expect(readKnotInput(good())).toEqual(good());
    const node: KnotFacts = { ...good('/var/lib/knot'), listen: ['0.0.0.0@53', '::@53'], user: 'knot:knot', rundir: '/run/knot', log: 'syslog', primary: { host: '2001:db8::53', port: 53 }, via: '2001:db8::2' };
    delete node.control;
    expect(readKnotInput(node)).toEqual(node);
  });
});

describe('hostplane node render-knot', () => {
  const facts = (name: string, value: unknown) => {
    const file = path.join(tmp, name);
    fs.writeFileSync(file, JSON.stringify(value));
    return file;
  };
  const renderKnot = (file: string, out: string, json = true) => runCli(['node', 'render-knot', '--facts', file, '--out', out, ...(json ? ['--json'] : [])], {});

  it('bad facts: exit 2 naming every problem, nothing written', async () => {
    const file = facts('bad.json', { ...good(), via: 'localhost', refreshMaxS: -1 });
    const out = path.join(tmp, 'bad.conf');
    expect(await renderKnot(file, out, false)).toEqual({
      code: 2,
      stdout: '',
      stderr: `hostplane: invalid facts in ${file} (knot.conf):\n  - via must be an IP address; got "localhost"\n  - refreshMaxS must be a positive whole number of seconds; got -1\n`,
    });
    expect(fs.existsSync(out)).toBe(false);
  });

  it('an --out whose directory does not exist: exit 2', async () => {
    const r = await renderKnot(facts('good.json', good()), path.join(tmp, 'nope/knot.conf'), false);
    expect(r).toEqual({ code: 2, stdout: '', stderr: `hostplane: --out: ${path.join(tmp, 'nope')} is not a directory; create it first.\n` });
  });

  requirable(fs.existsSync(KNOTC) ? null : `${KNOTC} is missing (Debian: knot)`)('with knotc', () => {
    const dir = path.join(tmp, 'stack');
    const out = path.join(dir, 'knot.conf');
    beforeAll(() => fs.mkdirSync(dir, { recursive: true }));

    it("writes the renderer's knot.conf, mode 0600, which knotc accepts; a second run leaves it alone", async () => {
      const file = facts('stack.json', good(dir));
      expect(await renderKnot(file, out)).toEqual({ code: 0, stdout: `${JSON.stringify({ path: out, changed: true })}\n`, stderr: '' });
      expect(fs.readFileSync(out, 'utf8')).toBe(knotConf(good(dir)));
      expect(fs.statSync(out).mode & 0o777).toBe(0o600);
      expect(execFileSync(KNOTC, ['-c', out, 'conf-check'], { encoding: 'utf8' })).toContain('Configuration is valid');

      const before = fs.statSync(out).mtimeMs;
      expect(await renderKnot(file, out)).toEqual({ code: 0, stdout: `${JSON.stringify({ path: out, changed: false })}\n`, stderr: '' });
      expect(await renderKnot(file, out, false)).toEqual({ code: 0, stdout: `${out} was up to date\n`, stderr: '' });
      expect(fs.statSync(out).mtimeMs).toBe(before);
    });
  });
});
