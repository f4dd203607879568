// `hostplane admin mail-server add|list|set-default` (docs/decisions/0009-mail-directory.md), run
// in-process on each engine against the doveadm HTTP API of the local stack's Dovecot
// (deploy/local/up.sh, started once on a store of its own). What is stored and shown, the first
// server as the default, the default moving, and every refusal as one line (one JSON object with
// --json) that stores nothing: a wrong, empty or missing key file, an unreachable doveadm, something
// that is not doveadm, bad names and host:port values. After EVERY command the doveadm key appears
// in neither stdout nor stderr.
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, freshStore, processUrl, type TestStore } from '../helpers/app.js';
import { freePort, newDatabase, runCli, type CliRun, type TestDb } from '../helpers/cli.js';
import { DOWN, describeMailStack, script, upOnFreePorts } from '../helpers/stack.js';
import { STACK_UP_MS } from '../helpers/stack-scripts.js';
import { dovecotMailDriver } from '../../src/provisioning/mail/driver.js';
import { MailServersRepository, mailServerConn } from '../../src/provisioning/mail/servers.repository.js';

// The hooks run up.sh, which starts daemons: under a loaded CI that takes minutes.
const STEP_MS = STACK_UP_MS;

describeMailStack('hostplane admin mail-server', () => {
  let stackStore: TestStore;
  let root: string;
  let dir: string;
  let doveadm: string;
  let smtp: string;
  let imap: string;
  let key: string;
  let files: { good: string; wrong: string; empty: string; missing: string; big: string };
  let notDoveadm: http.Server;
  let notDoveadmUrl: string;

  beforeAll(async () => {
    stackStore = await freshStore('sqlite');
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'hostplane-mail-servers-'));
    await fs.chmod(root, 0o755);
    dir = path.join(await fs.realpath(root), 'stack');
    const up = await upOnFreePorts(dir, { DATABASE_URL: processUrl(stackStore) });
    expect(up.run.code, up.run.stderr).toBe(0);
    const stack = JSON.parse(await fs.readFile(path.join(dir, 'stack.json'), 'utf8'));
    ({ doveadm, smtp, imap } = stack.mail);
    key = (await fs.readFile(path.join(dir, 'mail/doveadm.key'), 'utf8')).trim();
    const keys = path.join(await fs.realpath(root), 'keys');
    await fs.mkdir(keys);
    files = {
      good: path.join(keys, 'good.key'),
      wrong: path.join(keys, 'wrong.key'),
      empty: path.join(keys, 'empty.key'),
      missing: path.join(keys, 'missing.key'),
      big: path.join(keys, 'big.key'),
    };
    // White space around the key, as an editor or `echo` leaves it, is not part of it.
    await fs.writeFile(files.good, `  ${key}\n\n`, { mode: 0o600 });
    await fs.writeFile(files.wrong, `${key}x\n`, { mode: 0o600 });
    await fs.writeFile(files.empty, '\n', { mode: 0o600 });
    await fs.writeFile(files.big, 'k'.repeat(5000), { mode: 0o600 });
    // An HTTP server that answers GET /doveadm/v1 with an empty command list.
    notDoveadm = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('[]'));
    await new Promise<void>((r) => notDoveadm.listen(0, '127.0.0.1', r));
    notDoveadmUrl = `http://127.0.0.1:${(notDoveadm.address() as import('node:net').AddressInfo).port}`;
  }, STEP_MS);

  afterAll(async () => {
    // Only if the hook got that far: a promise on a server never made would never settle, and the stack would stay up.
    if (notDoveadm) await new Promise((r) => notDoveadm.close(r));
    if (dir) await script(DOWN, [dir], {}).catch(() => undefined);
    if (root) await fs.rm(root, { recursive: true, force: true });
    await stackStore?.drop();
  }, STEP_MS);

  describe.each(ENGINES)('on %s', (engine) => {
    let db: TestDb;
    let env: Record<string, string>;
    /** `hostplane <args>`; whatever it did, the key (right or wrong) is nowhere in its output. */
    const run = async (args: string[]): Promise<CliRun> => {
      const r = await runCli(args, env);
      for (const secret of [key, `${key}x`, Buffer.from(key).toString('base64')]) {
        expect(r.stdout, args.join(' ')).not.toContain(secret);
        expect(r.stderr, args.join(' ')).not.toContain(secret);
      }
      return r;
    };
    const json = async (args: string[]) => {
      const r = await run([...args, '--json']);
      expect({ code: r.code, stderr: r.stderr }, args.join(' ')).toEqual({ code: 0, stderr: '' });
      return JSON.parse(r.stdout);
    };
    const list = () => json(['admin', 'mail-server', 'list']);
    const jsonFailed = (code: string, message: string) => ({ code: 1, stdout: '', stderr: `${JSON.stringify({ error: { code, message } })}\n` });
    const add = (name: string, over: Record<string, string> = {}, ...more: string[]) => {
      const o = { '--doveadm-url': doveadm, '--doveadm-key-file': files.good, '--smtp': smtp, '--imap': imap, ...over };
      return ['admin', 'mail-server', 'add', '--name', name, ...Object.entries(o).flat(), ...more];
    };
    const shown = (name: string, over: Record<string, unknown> = {}) => ({
      id: expect.stringMatching(/^[1-9][0-9]*$/),
      name,
      doveadm_url: doveadm,
      smtp,
      imap,
      default: false,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      ...over,
    });

    beforeAll(async () => {
      db = await newDatabase(engine);
      env = { DATABASE_URL: db.url };
      await json(['migrate']);
    });
    afterAll(() => db?.drop());

    it('add checks doveadm with the key and registers; the first server is the default; list never shows the key', async () => {
      expect(await list()).toEqual([]);
      const r = await run(add('mx1'));
      expect(r).toEqual({ code: 0, stdout: `Registered mail server mx1 (doveadm ${doveadm}, SMTP ${smtp}, IMAP ${imap}, the default).\n`, stderr: '' });
      expect(await list()).toEqual([shown('mx1', { default: true })]);
      const table = await run(['admin', 'mail-server', 'list']);
      expect(table.code).toBe(0);
      expect(table.stdout.split('\n')[0].split(/\s+/)).toEqual(['name', 'doveadm_url', 'smtp', 'imap', 'default']);
      expect(table.stdout.split('\n')[1].split(/\s+/)).toEqual(['mx1', doveadm, smtp, imap, 'true']);
    });

    it('the key is stored (trimmed) for the driver, which can use it', async () => {
      const row = await new MailServersRepository(db.store.db).byName('mx1');
      expect(row?.doveadm_key).toBe(key);
      const mail = dovecotMailDriver();
      expect(await mail.authenticates(mailServerConn(row!), 'nobody@nowhere.example')).toBe(false);
    });

    it('a second server is not the default; --default and set-default move it', async () => {
      expect(await json(add('mx2'))).toEqual(shown('mx2'));
      expect(await json(add('mx3', { '--smtp': '[::1]:25', '--imap': 'imap.example.com:993' }, '--default'))).toEqual(
        shown('mx3', { smtp: '[::1]:25', imap: 'imap.example.com:993', default: true }),
      );
      expect((await list()).map((s: any) => [s.name, s.default])).toEqual([['mx1', false], ['mx2', false], ['mx3', true]]);
      expect(await run(['admin', 'mail-server', 'set-default', 'mx2'])).toEqual({ code: 0, stdout: 'mx2 is now the default mail server.\n', stderr: '' });
      expect(await json(['admin', 'mail-server', 'set-default', 'mx1'])).toEqual(shown('mx1', { default: true }));
      expect((await list()).map((s: any) => [s.name, s.default])).toEqual([['mx1', true], ['mx2', false], ['mx3', false]]);
    });

    it('a wrong, empty, missing or oversized key file is refused, and nothing is stored', async () => {
      const before = await list();
      const origin = new URL(doveadm).origin;
      expect(await run(add('mx-w', { '--doveadm-key-file': files.wrong }))).toEqual({
        code: 1,
        stdout: '',
        stderr: `hostplane: doveadm at ${origin} refused the key from --doveadm-key-file (HTTP 401): give the file holding that Dovecot's doveadm_api_key.\n`,
      });
      const cases: [string[], string, string][] = [
        [add('mx-e', { '--doveadm-key-file': files.empty }), 'invalid_api_data', 'The doveadm key file is empty: it must hold the doveadm_api_key of that Dovecot.'],
        [add('mx-m', { '--doveadm-key-file': files.missing }), 'invalid_input', `Cannot read --doveadm-key-file ${files.missing}: there is no such file.`],
        [add('mx-d', { '--doveadm-key-file': path.dirname(files.good) }), 'invalid_input', `--doveadm-key-file ${path.dirname(files.good)} is not a file.`],
        [add('mx-b', { '--doveadm-key-file': files.big }), 'invalid_input', `--doveadm-key-file ${files.big} holds more than 4096 bytes: give the file holding only the doveadm key.`],
      ];
      for (const [args, code, message] of cases) expect(await run([...args, '--json']), args.join(' ')).toEqual(jsonFailed(code, message));
      expect(await list()).toEqual(before);
    });

    it('an unreachable doveadm, or a server that is not doveadm, is refused', async () => {
      const before = await list();
      const closed = await freePort();
      expect(await run([...add('mx-u', { '--doveadm-url': `http://127.0.0.1:${closed}` }), '--json'])).toEqual(
        jsonFailed('service_unavailable', `Cannot register the mail server: doveadm at http://127.0.0.1:${closed} did not answer: connect ECONNREFUSED 127.0.0.1:${closed}`),
      );
      expect(await run([...add('mx-n', { '--doveadm-url': notDoveadmUrl }), '--json'])).toEqual(
        jsonFailed('invalid_api_data', `doveadm at ${notDoveadmUrl} does not offer user, kick, fsStat, fsDelete, quotaGet over HTTP; hostplane needs Dovecot 2.3 with the doveadm HTTP API.`),
      );
      expect(await list()).toEqual(before);
    });

    it('bad names, URLs, host:port values and duplicates are refused; set-default of an unknown server too', async () => {
      const before = await list();
      const cases: [string[], string, string][] = [
        [add('MX_1'), 'invalid_api_data', '"MX_1" is not a server name: 1 to 32 of a-z, 0-9 and "-", starting and ending with a letter or digit, e.g. mx1.'],
        [add('mx1'), 'conflict', 'A mail server named "mx1" exists already.'],
        [add('mx-x', { '--doveadm-url': 'not a url' }), 'invalid_api_data', '--doveadm-url must be the URL of the doveadm HTTP API, e.g. http://127.0.0.1:8080; got "not a url".'],
        [add('mx-x', { '--doveadm-url': `${doveadm}/doveadm/v1` }), 'invalid_api_data',
          `--doveadm-url must be http://host:port (or https://) of the doveadm HTTP API, without a path, e.g. http://127.0.0.1:8080; got "${doveadm}/doveadm/v1".`],
        [add('mx-x', { '--doveadm-url': `http://user:${key}@127.0.0.1:1` }), 'invalid_api_data',
          '--doveadm-url must be http://host:port (or https://) of the doveadm HTTP API, without a path, e.g. http://127.0.0.1:8080; got "http://127.0.0.1:1/".'],
        [add('mx-x', { '--smtp': '127.0.0.1' }), 'invalid_api_data', '--smtp must be host:port, e.g. mx1.example.com:25 or [2001:db8::25]:25; got "127.0.0.1".'],
        [add('mx-x', { '--smtp': '::1:25' }), 'invalid_api_data', '--smtp must be host:port, e.g. mx1.example.com:25 or [2001:db8::25]:25; got "::1:25".'],
        [add('mx-x', { '--imap': 'imap host:143' }), 'invalid_api_data', '--imap must be host:port, e.g. mx1.example.com:25 or [2001:db8::25]:25; got "imap host:143".'],
        [add('mx-x', { '--imap': 'imap.example.com:70000' }), 'invalid_api_data', '--imap must be host:port, e.g. mx1.example.com:25 or [2001:db8::25]:25; got "imap.example.com:70000".'],
        [['admin', 'mail-server', 'set-default', 'nope'], 'resource_not_found', 'No mail server is named "nope".'],
      ];
      for (const [args, code, message] of cases) {
        const text = await run(args);
        expect({ code: text.code, stdout: text.stdout, stderr: text.stderr }, args.join(' ')).toEqual({ code: 1, stdout: '', stderr: `hostplane: ${message}\n` });
        expect(await run([...args, '--json']), args.join(' ')).toEqual(jsonFailed(code, message));
      }
      expect(await list()).toEqual(before);
    });
  });
});
