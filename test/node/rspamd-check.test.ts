// rspamd's files of a mail node (docs/decisions/0018-nodes-on-debian.md "One command per node"):
// each candidate is read by `rspamadm configtest` in a copy of the running LOCAL_CONFDIR with the
// other rspamd files of the same run; a refused one leaves the running file as it was. The running
// tree here is a temporary copy of Debian's /etc/rspamd. Needs rspamadm (Debian 12's rspamd 3.4).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { placeFile, RefusedFile } from '../../src/node/files.js';
import { mailFiles, systemFacts } from '../../src/node/render/index.js';
import { rspamdCheck } from '../../src/node/roles/mail.js';
import { requirable } from '../helpers/required.js';

const missing = ['/usr/bin/rspamadm', '/etc/rspamd/rspamd.conf'].find((f) => !fs.existsSync(f));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hp-rspamd-check-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** The check's temporary copies still in the temp directory. */
const leftovers = () => fs.readdirSync(os.tmpdir()).filter((n) => n.startsWith('hostplane-rspamd-'));

requirable(missing ? `${missing} is missing (Debian: rspamd)` : null)('rspamdCheck with placeFile', () => {
  let conf: string;
  let rendered: { path: string; text: string }[];
  const file = (name: string) => path.join(conf, name);
  const text = (name: string) => rendered.find((f) => f.path === file(name))!.text;
  const BROKEN = (good: string) => `${good}dns {\n  nameserver = ["127.0.0.1:9"];\n`;

  beforeAll(() => {
    const root = path.join(tmp, 'root');
    conf = path.join(root, 'etc/rspamd');
    fs.cpSync('/etc/rspamd', conf, { recursive: true });
    fs.mkdirSync(path.join(root, 'var/lib/rspamd'), { recursive: true });
    const facts = systemFacts({
      root, name: 'mx1', hostname: 'mx1.example.net', postmaster: 'postmaster@mx1.example.net', apiUrl: 'https://api.example.net', doveadmKey: 'f00d'.repeat(8),
      store: { driver: 'pgsql', host: 'db.internal', port: 5432, dbname: 'hostplane', user: 'hostplane_mail', password: 'x', schema: 'public' },
      mailUid: 5000, mailGid: 5000, dovecotVersion: '2.3', tls: { cert: '/etc/ssl/mail.pem', key: '/etc/ssl/mail.key' },
    });
    rendered = mailFiles(facts, 'system')
      .map((f) => ({ path: path.join(root, f.path), text: f.text }))
      .filter((f) => f.path.startsWith(`${conf}/`));
    expect(rendered.map((f) => path.relative(conf, f.path))).toEqual(['rspamd.conf.override', 'override.d/options.inc', 'rspamd.local.lua']);
  });

  it("places this run's rendered files: rspamd accepts each together with the others", async () => {
    const check = rspamdCheck(conf, rendered);
    for (const f of rendered) expect(await placeFile({ path: f.path, text: f.text, mode: 0o640, check: check(f.path) })).toBe('written');
    expect(fs.readFileSync(file('rspamd.conf.override'), 'utf8')).toBe(text('rspamd.conf.override'));
    expect(fs.readFileSync(file('override.d/options.inc'), 'utf8')).toBe(text('override.d/options.inc'));
    expect(fs.readdirSync(file('override.d'))).toEqual(['options.inc']);
    expect(leftovers()).toEqual([]);
  }, 60_000);

  it("refuses a broken options.inc with rspamd's words; the running file stays, no candidate or copy is left", async () => {
    const options = file('override.d/options.inc');
    const before = fs.readFileSync(options, 'utf8');
    const broken = BROKEN(text('override.d/options.inc'));
    const check = rspamdCheck(conf, [...rendered.filter((f) => f.path !== options), { path: options, text: broken }]);
    const err = await placeFile({ path: options, text: broken, mode: 0o640, check: check(options) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RefusedFile);
    expect((err as RefusedFile).file).toBe(options);
    const lines = broken.split('\n').length;
    expect((err as Error).message).toBe(
      `${options}: refused by its check, the running file is kept: rspamadm configtest: failed to load config: ucl parser error: ${options}:${lines} unmatched open brace at ${lines - 2};\nsyntax BAD`,
    );
    expect(fs.readFileSync(options, 'utf8')).toBe(before);
    expect(fs.readdirSync(file('override.d'))).toEqual(['options.inc']);
    expect(leftovers()).toEqual([]);
  }, 60_000);

  it('checks the files of a run together: a good override is refused while the options.inc rendered with it is broken', async () => {
    const override = file('rspamd.conf.override');
    const options = file('override.d/options.inc');
    const check = rspamdCheck(conf, [{ path: override, text: text('rspamd.conf.override') }, { path: options, text: BROKEN(text('override.d/options.inc')) }]);
    const err = await placeFile({ path: override, text: `${text('rspamd.conf.override')}# changed\n`, mode: 0o640, check: check(override) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RefusedFile);
    expect((err as RefusedFile).file).toBe(override);
    expect((err as Error).message).toContain(`ucl parser error: ${options}:`);
    expect(fs.readFileSync(override, 'utf8')).toBe(text('rspamd.conf.override'));
    expect(leftovers()).toEqual([]);
  }, 60_000);
});
