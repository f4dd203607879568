// `hostplane admin ssh-key add|list|remove` (API guide "SSH keys"), run in-process on each engine:
// the same rules and messages as POST /ssh-keys, the same jobs (run afterwards by a worker of the
// web server, whose key file then holds the keys: a worker beside the in-process CLI would wait on
// SQLite's lock inside one event loop), and refusals that store nothing.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, createTestApp } from '../helpers/app.js';
import { newDatabase, runCli, type TestDb } from '../helpers/cli.js';
import { ED25519, newKey, sshKeygenView } from '../helpers/ssh-keys.js';
import { waitFor } from '../helpers/wait.js';
import { authorizedKeysPath } from '../../src/provisioning/web/ssh-keys.js';

describe.each(ENGINES)('hostplane admin ssh-key on %s', (engine) => {
  let db: TestDb;
  let root: string;
  let pkg: { id: string };
  const env = () => ({ DATABASE_URL: db.url });
  const json = async (args: string[]) => {
    const r = await runCli([...args, '--json'], env());
    expect({ code: r.code, stderr: r.stderr }, args.join(' ')).toEqual({ code: 0, stderr: '' });
    return JSON.parse(r.stdout);
  };
  const keyFile = async () => (await fs.readFile(authorizedKeysPath({ stateDir: path.join(root, 'state') }, 'cli_keys'), 'utf8').catch(() => '')).split('\n').filter(Boolean);
  /** Runs every pending job with a worker of web1, as `serve` with WEB_SERVER=web1 would, then stops it. */
  const runJobs = async () => {
    const worker = await createTestApp(engine, { WEB_SERVER: 'web1', JOB_POLL_MS: '50' }, { worker: true, reconcileMs: 3_600_000, store: { store: db.store, url: db.url, drop: async () => {} } });
    try {
      await waitFor('the jobs', async () => !(await db.store.db.selectFrom('queue_jobs').select('id').where('job_type', '=', 'ssh-key').where('status', '=', 'pending').executeTakeFirst()));
    } finally {
      await worker.close();
    }
    return db.store.db.selectFrom('queue_jobs').select(['job_type', 'action', 'status', 'queue', 'from_menu']).where('job_type', '=', 'ssh-key').orderBy('id').execute();
  };

  beforeAll(async () => {
    db = await newDatabase(engine);
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'hostplane-ssh-cli-'));
    expect((await runCli(['migrate'], env())).code).toBe(0);
    await json(['admin', 'web-server', 'add', '--name', 'web1', '--caddy-admin', 'http://127.0.0.1:9', '--http-listen', '127.0.0.1:9', '--address', '192.0.2.10',
      '--home-root', path.join(root, 'www'), '--state-dir', path.join(root, 'state')]);
    const customer = await json(['admin', 'customer', 'create', '--name', 'Keys GmbH', '--email', 'keys@kunde.example']);
    const plan = await json(['admin', 'plan', 'create', '--name', 'Keys', '--ssh-keys-per-package', '2']);
    pkg = await json(['admin', 'package', 'create', '--customer', customer.id, '--plan', plan.id, '--name', 'keys', '--linux-user', 'cli_keys']);
  });
  afterAll(async () => {
    await db?.drop();
    if (root) await fs.rm(root, { recursive: true, force: true });
  });

  it('add (from --key or --key-file), list, remove: the key file follows once each job is done', async () => {
    const a = ED25519[0];
    const added = await json(['admin', 'ssh-key', 'add', '--package', pkg.id, '--key', a.line, '--description', 'laptop']);
    expect(added).toEqual({
      id: expect.stringMatching(/^[1-9][0-9]*$/), package_id: pkg.id, public_key: a.line, fingerprint: sshKeygenView(a.line).fingerprint, algorithm: 'ssh-ed25519',
      description: 'laptop', state: 'pending', created_at: expect.any(String), last_used_at: null, queue_job: expect.stringMatching(/^[1-9][0-9]*$/),
    });
    expect(await runJobs()).toEqual([{ job_type: 'ssh-key', action: 'create', status: 'done', queue: 'web:web1', from_menu: 1 }]);
    expect(await keyFile()).toEqual([a.line]);
    const file = path.join(root, 'id_ecdsa.pub');
    const b = newKey('p256', 'desk@office');
    await fs.writeFile(file, `${b.line}\n`);
    const text = await runCli(['admin', 'ssh-key', 'add', '--package', pkg.id, '--key-file', file], env());
    expect(text).toMatchObject({ code: 0, stderr: '' });
    const fp = sshKeygenView(b.line).fingerprint;
    expect(text.stdout).toMatch(new RegExp(`^Added SSH key (\\d+) \\(ecdsa-sha2-nistp256 ${fp.replace(/[+/]/g, '\\$&')}\\) to package ${pkg.id}; job (\\d+) writes it to the key file\\.\\n$`));
    const listed = await json(['admin', 'ssh-key', 'list', '--package', pkg.id]);
    expect(listed.map((k: any) => [k.algorithm, k.fingerprint])).toEqual([['ssh-ed25519', added.fingerprint], ['ecdsa-sha2-nistp256', fp]]);
    await runJobs();
    expect(await keyFile()).toEqual([a.line, b.line]);
    const table = await runCli(['admin', 'ssh-key', 'list', '--package', pkg.id], env());
    expect(table.stdout.split('\n')[0].split(/\s+/)).toEqual(['id', 'package_id', 'algorithm', 'fingerprint', 'state', 'description', 'last_used_at']);
    const removed = await json(['admin', 'ssh-key', 'remove', added.id, '--package', pkg.id]);
    expect(removed).toEqual({ id: added.id, removed: true, queue_job: expect.any(String) });
    expect((await runJobs()).map((j) => `${j.action} ${j.status}`)).toEqual(['create done', 'create done', 'delete done']);
    expect(await keyFile()).toEqual([b.line]);
    expect((await json(['admin', 'ssh-key', 'list', '--package', pkg.id])).map((k: any) => k.id)).toEqual([listed[1].id]);
  });

  it('the same refusals as the API, one line each (JSON with --json), exit 1, and nothing is stored', async () => {
    const before = await json(['admin', 'ssh-key', 'list', '--package', pkg.id]);
    const inFile = before.map((k: any) => k.public_key);
    const cases: [string[], string, string][] = [
      [['--key', newKey('rsa2048').line], 'invalid_api_data', 'This RSA key has 2048 bits; RSA keys need at least 3072 (ssh-keygen -t rsa -b 4096), or use ssh-ed25519.'],
      [['--key', `no-pty ${ED25519[1].line}`], 'invalid_api_data', 'Options or a command before the key (e.g. command="…", no-pty, from="…") are not accepted: send only `<algorithm> <base64> [comment]`.'],
      [['--key', ED25519[1].privatePem], 'invalid_api_data', 'This is a private key. Never send it anywhere; send the public key (the .pub file, e.g. ~/.ssh/id_ed25519.pub) instead. It was not stored.'],
      [['--key', inFile[0]], 'conflict', 'This key is in this package already.'],
      [[], 'usage', 'Give the key with --key <line> or --key-file <path> (one of them).'],
    ];
    for (const [more, code, message] of cases) {
      const args = ['admin', 'ssh-key', 'add', '--package', pkg.id, ...more];
      const text = await runCli(args, env());
      expect({ code: text.code, stdout: text.stdout, stderr: text.stderr }, message).toEqual({ code: 1, stdout: '', stderr: `hostplane: ${message}\n` });
      const j = await runCli([...args, '--json'], env());
      expect(JSON.parse(j.stderr), message).toEqual({ error: { code, message } });
    }
    // The plan allows two keys: one more fits, the next is refused.
    await json(['admin', 'ssh-key', 'add', '--package', pkg.id, '--key', ED25519[2].line]);
    const over = await runCli(['admin', 'ssh-key', 'add', '--package', pkg.id, '--key', ED25519[3].line], env());
    expect(over).toEqual({ code: 1, stdout: '', stderr: 'hostplane: This package has reached its limit of 2 SSH keys (ssh_keys_per_package of its plan).\n' });
    expect(await runCli(['admin', 'ssh-key', 'list', '--package', '99999'], env())).toEqual({ code: 1, stdout: '', stderr: 'hostplane: No package 99999.\n' });
    expect(await runCli(['admin', 'ssh-key', 'remove', '99999', '--package', pkg.id], env())).toEqual({ code: 1, stdout: '', stderr: 'hostplane: No such ssh-key.\n' });
    expect((await json(['admin', 'ssh-key', 'list', '--package', pkg.id])).length).toBe(before.length + 1);
  });
});
