// Debian 13's Dovecot 2.4 running on the files of the private profile
// (docs/decisions/0018-nodes-on-debian.md "One renderer, two profiles"), chrooted in a Debian 13
// root filesystem (test/helpers/trixie.ts) and reading a PostgreSQL store's mail directory
// (docs/decisions/0009-mail-directory.md) as a mail client and hostplane see it: IMAP logins with the
// mailbox password and an application password (the SHA-256 in 2.4's variables), the quota through
// the doveadm HTTP API, the login report with the application password's id and nothing else, and a
// deleted address refused at login while doveadm still finds it. Needs root, PostgreSQL
// (TEST_DATABASE_URL) and a Debian 13 root filesystem with Dovecot.
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freshStore, type TestStore } from '../helpers/app.js';
import { imapLogin } from '../helpers/imap.js';
import { addAppPassword, addDomain, addUser, deactivateUser, STACK_SERVER } from '../helpers/mail-directory.js';
import { renderCli } from '../helpers/mail-render.js';
import { describeDovecot24, openTrixie, type Trixie } from '../helpers/trixie.js';
import { waitFor } from '../helpers/wait.js';
import { alive } from '../helpers/procs.js';

const BASE = 47400;
const IMAP = `127.0.0.1:${BASE + 11}`;
const DOVEADM = `http://127.0.0.1:${BASE + 13}/doveadm/v1`;
const KEY = 'a1b2c3d4'.repeat(4);

describeDovecot24('Dovecot 2.4 on the private profile and a PostgreSQL store', () => {
  let trixie: Trixie;
  let ts: TestStore;
  let dir: string;
  let dovecot: ChildProcess;
  let app: { id: number; secret: string };
  /** The login reports Dovecot sent: hostplane's /internal/mail-auth-report, played here. */
  const reports: { key: unknown; body: Record<string, unknown> }[] = [];
  const policy = http.createServer((req, res) => {
    let b = '';
    req.on('data', (d) => (b += d));
    req.on('end', () => {
      reports.push({ key: req.headers['x-hostplane-mail-key'], body: JSON.parse(b) });
      res.end('{"status":0}');
    });
  });

  const doveadm = async (command: string, params: Record<string, unknown>) => {
    const res = await fetch(DOVEADM, {
      method: 'POST',
      headers: { authorization: `X-Dovecot-API ${Buffer.from(KEY).toString('base64')}`, 'content-type': 'application/json' },
      body: JSON.stringify([[command, params, 't']]),
    });
    return (await res.json()) as [string, unknown, string][];
  };

  beforeAll(async () => {
    trixie = await openTrixie();
    ts = await freshStore('postgres');
    await addDomain(ts.store, 'd.example');
    await addUser(ts.store, { address: 'a@d.example', password: 'P-a-1', quotaBytes: 10 * 1024 * 1024 });
    app = await addAppPassword(ts.store, 'a@d.example');
    await new Promise<void>((r) => policy.listen(BASE + 99, '127.0.0.1', r));

    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hp-render-'));
    fs.chmodSync(dir, 0o755);
    for (const d of ['mail', 'mail/run', 'mail/state', 'mail/vmail']) fs.mkdirSync(path.join(dir, d), { mode: 0o755 });
    fs.chownSync(`${dir}/mail/vmail`, 8, 8);
    fs.writeFileSync(`${dir}/mail/doveadm.key`, KEY, { mode: 0o600 });
    const db = new URL(ts.url);
    await renderCli('private', {
      dir, portBase: BASE, name: STACK_SERVER, apiUrl: `http://127.0.0.1:${BASE + 99}`, doveadmKey: KEY,
      store: { driver: 'pgsql', host: db.hostname, port: Number(db.port || 5432), dbname: db.pathname.slice(1), user: decodeURIComponent(db.username), password: decodeURIComponent(db.password), schema: ts.schema! },
      mailUid: 8, mailGid: 8, dovecotVersion: '2.4', rspamd: null,
    }, dir, `${dir}.json`);
    dovecot = trixie.start(['dovecot', '-F', '-c', `${dir}/mail/dovecot/dovecot.conf`]);
    await waitFor('Dovecot 2.4 answering IMAP', async () => (await imapLogin(IMAP, 'nobody@d.example', 'x').catch(() => null)) === 'NO', 20_000);
  }, 240_000);

  afterAll(async () => {
    if (dovecot?.pid && (await alive(dovecot.pid))) {
      dovecot.kill('SIGTERM');
      await waitFor('Dovecot 2.4 stopped', async () => !(await alive(dovecot.pid!)), 15_000).catch(() => dovecot.kill('SIGKILL'));
    }
    policy.close();
    await ts?.drop();
    trixie?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('IMAP LOGIN: the mailbox password and an application password work, a wrong one is refused', async () => {
    expect(await imapLogin(IMAP, 'a@d.example', 'P-a-1')).toBe('OK');
    expect(await imapLogin(IMAP, 'A@D.example', app.secret)).toBe('OK');
    expect(await imapLogin(IMAP, 'a@d.example', 'P-a-2')).toBe('NO');
  });

  it("the login report names the application password and nothing else of the login", async () => {
    await waitFor('the login reports', async () => reports.filter((r) => r.body.success === true).length >= 2);
    const withApp = reports.find((r) => r.body.app_password_id === String(app.id));
    expect(withApp?.key).toBe((await import('../../src/provisioning/mail/servers.repository.js')).mailReportKey(KEY));
    expect(Object.keys(withApp!.body).sort()).toEqual(['app_password_id', 'login', 'policy_reject', 'success', 'tls']);
  });

  it("doveadm's HTTP API with the key: the mailbox's quota of 10 MiB; a deleted address is refused at login, doveadm still finds it", async () => {
    const quota = await doveadm('quotaGet', { user: 'a@d.example' });
    expect(quota[0][0]).toBe('doveadmResponse');
    expect(quota[0][1]).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'STORAGE', limit: '10240' })]));
    await deactivateUser(ts.store, 'a@d.example');
    expect(await imapLogin(IMAP, 'a@d.example', 'P-a-1')).toBe('NO');
    expect((await doveadm('quotaGet', { user: 'a@d.example' }))[0][0]).toBe('doveadmResponse');
  });
});
