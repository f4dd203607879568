// What the /email-addresses tests share (docs/decisions/0009-mail-directory.md): POST/PATCH helpers,
// a mail server row for stores that only need placement (the rules tests run no worker, so nothing
// talks to it), and the suite of the mail-protocol tests on the local stack.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect } from 'vitest';
import type { Store } from '../../src/db/index.js';
import { nowIso } from '../../src/db/time.js';
import { MailServersRepository } from '../../src/provisioning/mail/servers.repository.js';
import { call, createTestApp, freshStore, processUrl, type EngineName, type TestApp, type TestStore } from './app.js';
import { DOWN, script, upOnFreePorts, STACK_UP_MS } from './stack.js';
import { seedTenants, type Tenants } from './tenants.js';

/** POST /email-addresses as `token`. */
export const postEmail = (t: TestApp, token: string, attributes: Record<string, unknown>) =>
  call(t.app, 'POST', '/email-addresses', { token, body: { data: { type: 'email-address', attributes } } });

/** PATCH /email-addresses/{id} as `token`. */
export const patchEmail = (t: TestApp, token: string, id: string, attributes: Record<string, unknown>) =>
  call(t.app, 'PATCH', `/email-addresses/${id}`, { token, body: { data: { type: 'email-address', id, attributes } } });

/** POST /email-addresses/{id}/application-passwords as `token`. */
export const postAppPassword = (t: TestApp, token: string, id: string, attributes: Record<string, unknown>) =>
  call(t.app, 'POST', `/email-addresses/${id}/application-passwords`, { token, body: { data: { type: 'application-password', attributes } } });

/** Registers a default mail server nobody talks to (no worker runs the jobs): `await placeholderMailServer(t.store)`. */
export async function placeholderMailServer(store: Store, name = 'mx-test'): Promise<void> {
  await new MailServersRepository(store.db).add({
    name, doveadm_url: 'http://127.0.0.1:9', doveadm_key: 'not-used', smtp: '127.0.0.1:9', imap: '127.0.0.1:9', is_default: 1, created_at: nowIso(),
  });
}

/** A password that passes every rule (for addresses at *.example): 20 characters, no runs, no names. */
export const GOOD_PASSWORD = 'Vq7#mZ2!xB9?kR4&wT6s';

/** What the mail-protocol suites share: the local stack's Dovecot and Postfix on a fresh store, an app with a worker. */
export interface MailSuite {
  t: TestApp;
  x: Tenants;
  /** DATABASE_URL of the store, for the CLI. */
  databaseUrl: string;
  /** The stack dir (mail/vmail/<domain>/<local part> holds the mailboxes). */
  dir: string;
  imap: string;
  smtp: string;
  /** Mail clients' submission: STARTTLS (the 587 of a node) and implicit TLS (465); the certificate to trust. */
  submission: string;
  submissions: string;
  tlsCa: string;
  /** The mail policy service (recipients per mailbox and hour), host:port. */
  policy: string;
  /** Lines the app logged (JSON), for the no-plaintext check. */
  logs: string[];
  /** Where the app listens (http://127.0.0.1:<port>): Dovecot's login reports, rspamd's settings map. */
  hostplaneUrl: string;
  /** The stack's rspamd (null when up.sh could not start it, e.g. not installed). */
  rspamd: { milter: string; controller: string } | null;
}

/**
 * `const s = useMailSuite(engine)`: up.sh on free ports (it registers its mail server as the default),
 * the app with a worker, the tenants. On PostgreSQL the read-only role up.sh made goes afterwards.
 */
export function useMailSuite(engine: EngineName): MailSuite {
  const s = { logs: [] as string[] } as MailSuite;
  let ts: TestStore | undefined;
  let root: string | undefined;
  beforeAll(async () => {
    ts = await freshStore(engine);
    s.databaseUrl = processUrl(ts);
    // The users mail, dovecot and postfix must be able to enter the stack's dir (as in production).
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'hostplane-mail-'));
    await fs.chmod(root, 0o755);
    s.dir = path.join(await fs.realpath(root), 'stack');
    // Dovecot reports logins to the app (application passwords' last_used_at) and rspamd reads
    // its settings map there: the app listens before up.sh, as rspamd asks again only 20 to 40 s
    // after a first request that failed.
    const logStream = new Writable({ write: (chunk, _enc, done) => { s.logs.push(String(chunk)); done(); } });
    s.t = await createTestApp(engine, { JOB_POLL_MS: '50', LOG_LEVEL: 'debug' }, { worker: true, store: ts, logStream });
    s.hostplaneUrl = await s.t.app.listen({ host: '127.0.0.1', port: 0 });
    const up = await upOnFreePorts(s.dir, { DATABASE_URL: s.databaseUrl, HOSTPLANE_URL: s.hostplaneUrl });
    expect(up.run, up.run.stderr).toMatchObject({ code: 0 });
    const stack = JSON.parse(await fs.readFile(path.join(s.dir, 'stack.json'), 'utf8'));
    s.imap = stack.mail.imap;
    s.smtp = stack.mail.smtp;
    s.submission = stack.mail.submission;
    s.submissions = stack.mail.submissions;
    s.tlsCa = stack.mail.tls_ca;
    s.policy = stack.mail.policy;
    s.rspamd = stack.mail.rspamd ?? null;
    s.x = await seedTenants(s.t.admin);
  }, STACK_UP_MS);
  afterAll(async () => {
    await s.t?.close();
    if (s.dir) await script(DOWN, [s.dir], {}).catch(() => undefined);
    if (root) await fs.rm(root, { recursive: true, force: true });
    if (ts?.schema) {
      const reader = `hostplane_mail_${new URL(ts.url).pathname.slice(1)}_${ts.schema}`;
      await sql`drop owned by ${sql.id(reader)}`.execute(ts.store.db).catch(() => undefined);
      await sql`drop role if exists ${sql.id(reader)}`.execute(ts.store.db).catch(() => undefined);
    }
    await ts?.drop();
  }, 60_000);
  return s;
}
