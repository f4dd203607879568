// The mail role (decision 0018 "One command per node"; operator guide "Mail servers"): Dovecot,
// Postfix and rspamd from Debian with the files the renderer's system profile writes, each checked
// by its daemon before it replaces the running one; the mailboxes' user vmail; a read-only store
// role of this server's own (over TLS); the node's ACME certificate; hostplane's mail policy
// service (hostplane-mail-policy.service, the outbound limits); registered as `admin mail-server
// add` does, with its doveadm HTTP API over HTTPS, and updated when the registration names another
// doveadm URL or key.
import { sql } from 'kysely';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { MailServersService } from '../../admin/mail-servers.service.js';
import { MapVersionsRepository, type MailMap } from '../../provisioning/mail/map-versions.repository.js';
import { mailFiles, systemFacts, type MailStore } from '../render/index.js';
import { withStore, type NodeContext } from '../context.js';
import { commandCheck, keptSecret, placeFiles, type NodeFile } from '../files.js';
import { enableUnit, run, type Log } from '../system.js';

const DOVEADM_KEY = '/etc/hostplane/doveadm.key';
const STORE_SECRET = '/etc/hostplane/store-mail.password';
/** The system's roots, with a private ACME CA's (--acme-ca-root): what libpq and the doveadm check trust. */
const SYSTEM_ROOTS = '/etc/ssl/certs/ca-certificates.crt';
/** The mail directory: all a mail server may read of the store (docs/decisions/0009-mail-directory.md). */
export const MAIL_DIRECTORY_TABLES = ['mail_domains', 'mail_users', 'mail_app_passwords', 'mail_aliases', 'mail_sieve'];

/** The system user owning the mailboxes, made once; its ids. */
async function ensureVmail(): Promise<{ uid: number; gid: number }> {
  const ids = async () => (await run('getent', ['passwd', 'vmail']).catch(() => '')).split(':');
  if ((await ids()).length < 4) await run('useradd', ['--system', '--user-group', '--home-dir', '/var/vmail', '--shell', '/usr/sbin/nologin', 'vmail']);
  const [, , uid, gid] = await ids();
  await fs.mkdir('/var/vmail', { recursive: true, mode: 0o750 });
  await fs.chown('/var/vmail', Number(uid), Number(gid));
  return { uid: Number(uid), gid: Number(gid) };
}

/** This server's read-only role in the store: made or brought up to date through the --store role (CREATEROLE). */
async function readOnlyStore(ctx: NodeContext): Promise<MailStore> {
  const url = new URL(ctx.store);
  const role = `hostplane_mail_${ctx.shortName.replaceAll('-', '_')}`;
  const password = await keptSecret(STORE_SECRET);
  const schema = await withStore(ctx, async (store) => {
    const db = store.db;
    const { rows } = await sql<{ schema: string; database: string }>`select current_schema() as schema, current_database() as database`.execute(db);
    const { schema, database } = rows[0];
    const id = (s: string) => sql.id(s);
    if (!(await sql`select 1 from pg_roles where rolname = ${role}`.execute(db)).rows.length) await sql`create role ${id(role)} login`.execute(db);
    await sql`alter role ${id(role)} login password ${sql.lit(password)}`.execute(db);
    await sql`alter role ${id(role)} set default_transaction_read_only = on`.execute(db);
    await sql`grant connect on database ${id(database)} to ${id(role)}`.execute(db);
    await sql`grant usage on schema ${id(schema)} to ${id(role)}`.execute(db);
    for (const table of MAIL_DIRECTORY_TABLES) await sql`grant select on ${sql.table(`${schema}.${table}`)} to ${id(role)}`.execute(db);
    return schema;
  });
  return {
    driver: 'pgsql',
    host: url.hostname,
    port: Number(url.port || 5432),
    dbname: decodeURIComponent(url.pathname.slice(1)),
    user: role,
    password,
    schema,
    // Over the network as the api node printed it (verify-full); the api node's own loopback URL is plain.
    ...(url.searchParams.get('sslmode') === 'verify-full' ? { sslRootCert: url.searchParams.get('sslrootcert') ?? SYSTEM_ROOTS } : {}),
  };
}

/** A candidate of Postfix's main.cf or master.cf, read by postconf beside the other running file. */
function postfixCheck(file: string): (candidate: string) => Promise<void> {
  return async (candidate) => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'hostplane-postfix-'));
    try {
      for (const name of ['main.cf', 'master.cf']) await fs.copyFile(name === path.basename(file) ? candidate : path.join(path.dirname(file), name), path.join(dir, name)).catch(() => {});
      await commandCheck('postconf', ['-c', dir, '-n'])(candidate);
      await commandCheck('postconf', ['-c', dir, '-M'])(candidate);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  };
}

/**
 * Checks of one run's rspamd files: `rspamadm configtest` reads the whole tree, so each candidate is
 * tested in a copy of the running LOCAL_CONFDIR together with every rspamd file rendered in this run.
 */
export function rspamdCheck(localConfDir: string, rendered: { path: string; text: string }[], confFile = '/etc/rspamd/rspamd.conf'): (file: string) => (candidate: string) => Promise<void> {
  // The candidates of one run usually make the same tree: rspamadm (seconds on a fresh node) reads it once.
  const tested = new Map<string, Promise<void>>();
  return (file) => async (candidate) => {
    const tree = [...rendered.filter((r) => r.path !== file), { path: file, text: await fs.readFile(candidate, 'utf8') }].sort((x, y) => x.path.localeCompare(y.path));
    const key = JSON.stringify(tree);
    if (!tested.has(key)) tested.set(key, testTree(localConfDir, tree, confFile));
    return tested.get(key)!;
  };
}

/** `rspamadm configtest` of the running LOCAL_CONFDIR with `tree`'s files in place, in a copy. */
async function testTree(localConfDir: string, tree: { path: string; text: string }[], confFile: string): Promise<void> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'hostplane-rspamd-'));
  const copy = path.join(dir, 'conf');
  try {
    await fs.cp(localConfDir, copy, { recursive: true, filter: (src) => !src.endsWith('.hostplane-new') });
    for (const f of tree) {
      const at = path.join(copy, path.relative(localConfDir, f.path));
      await fs.mkdir(path.dirname(at), { recursive: true });
      await fs.writeFile(at, f.text);
    }
    await fs.mkdir(path.join(dir, 'db'));
    const args = [`--var=LOCAL_CONFDIR=${copy}`, `--var=DBDIR=${path.join(dir, 'db')}`, 'configtest', '-c', confFile];
    const r = await promisify(execFile)('rspamadm', args, { timeout: 120_000 }).then(
      (o) => ({ ...o, ok: true }),
      (e: { stdout?: string; stderr?: string; message: string }) => ({ stdout: e.stdout ?? '', stderr: e.stderr || e.message, ok: false }),
    );
    // rspamd's words name the copy, which is gone afterwards: they name the running tree instead.
    const words = [r.stderr, r.stdout].map((s) => s.trim()).filter(Boolean).join('\n');
    if (!r.ok || !/^syntax OK$/m.test(r.stdout)) throw new Error(`rspamadm configtest: ${words.replaceAll(copy, localConfDir)}`);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/**
 * Registers this server, or brings its registration to this doveadm URL and key: both are checked
 * by asking that doveadm, trusting `ca` (node setup: the system's roots; Node's own list lacks a
 * private CA's, and NODE_EXTRA_CA_CERTS is read only when a process starts).
 */
export async function registerMailServer(ctx: Pick<NodeContext, 'name' | 'shortName' | 'store'>, o: { doveadmUrl: string; doveadmKey: string; ca: string }, log: Log): Promise<void> {
  const name = ctx.shortName;
  const doveadm = { doveadmUrl: o.doveadmUrl, doveadmKey: o.doveadmKey };
  const said = await withStore(ctx, async (s) => {
    const servers = new MailServersService(s.db, { ca: o.ca });
    if (!(await servers.list()).some((m) => m.name === name)) {
      await servers.add({ name, ...doveadm, smtp: `${ctx.name}:25`, imap: `${ctx.name}:993` });
      return `registered mail server ${name} (smtp ${ctx.name}:25, imap ${ctx.name}:993)`;
    }
    if (await servers.doveadmMatches(name, doveadm)) return `mail server ${name} is registered already`;
    const updated = await servers.setDoveadm(name, doveadm);
    return `updated mail server ${name} (doveadm ${updated.doveadm_url})`;
  });
  log(said);
}

/** The unit that reads a rendered file, restarted when the file changed. */
const UNIT_OF = (file: string): string =>
  file.includes('/dovecot/') ? 'dovecot.service'
    : file.includes('/postfix/') ? 'postfix.service'
      : file.includes('/hostplane/') ? POLICY_UNIT
        : 'rspamd.service';
/** The outbound limits' policy service (docs/decisions/0020-outbound-limits.md), before Postfix asks it. */
const POLICY_UNIT = 'hostplane-mail-policy.service';

export const mailRole = {
  async apply(ctx: NodeContext, log: Log): Promise<void> {
    const vmail = await ensureVmail();
    const doveadmKey = await keptSecret(DOVEADM_KEY);
    const store = await readOnlyStore(ctx);
    const tls = await ctx.certificate();
    const version = (await run('dovecot', ['--version'])).startsWith('2.3') ? '2.3' : '2.4';
    const facts = systemFacts({ root: '/', hostname: ctx.name, postmaster: `postmaster@${ctx.name}`, name: ctx.shortName, apiUrl: ctx.publicBaseUrl, doveadmKey, store, mailUid: vmail.uid, mailGid: vmail.gid, dovecotVersion: version, tls });
    const rendered = mailFiles(facts, 'system').map((f) => ({ ...f, path: `/${f.path}` }));
    const rspamdDir = facts.rspamd!.localConfDir;
    const rspamd = rspamdCheck(rspamdDir, rendered.filter((f) => f.path.startsWith(`${rspamdDir}/`)));
    const files: NodeFile[] = rendered.map((f) => {
      const file = f.path;
      const check = file.endsWith('/dovecot.conf')
        ? commandCheck('doveconf', ['-n', '-c', '{}'])
        : /\/postfix\/(main|master)\.cf$/.test(file)
          ? postfixCheck(file)
          : file.startsWith(`${rspamdDir}/`)
            ? rspamd(file)
            : undefined;
      return { path: file, text: f.text, mode: f.mode, group: f.group, check };
    });
    const placed = await placeFiles(files);
    const changed = new Set(files.filter((_, i) => placed[i] === 'written').map((f) => UNIT_OF(f.path)));
    // A newer hostplane (ctx.changed) restarts the policy service too: it is hostplane's own code.
    if (ctx.changed) changed.add(POLICY_UNIT);
    for (const unit of [POLICY_UNIT, 'dovecot.service', 'postfix.service']) await enableUnit(unit, changed.has(unit), log);
    // Registered before rspamd asks for its maps: a refused first request (401) makes it wait 20
    // intervals, and meanwhile new addresses' spam modes and DKIM keys would not apply.
    await registerMailServer(ctx, { doveadmUrl: `https://${ctx.name}:8080`, doveadmKey, ca: await fs.readFile(SYSTEM_ROOTS, 'utf8') }, log);
    await enableUnit('rspamd.service', changed.has('rspamd.service'), log);
    await rspamdFetched(ctx, log);
  },
};

/** Maps rspamd must hold before this server's jobs can rely on it (decision 0019). */
const RSPAMD_MAPS: MailMap[] = ['settings', 'dkim-signing', 'dkim-keys'];

/**
 * Waits (up to 2 minutes) until this server's rspamd has fetched each of its maps from hostplane,
 * so the setup ends with the spam modes and DKIM keys live; says so, or what is missing.
 */
async function rspamdFetched(ctx: NodeContext, log: Log, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const missing = await withStore(ctx, async (s) => {
    const maps = new MapVersionsRepository(s.db);
    for (;;) {
      const left: MailMap[] = [];
      for (const map of RSPAMD_MAPS) if ((await maps.hold(ctx.shortName, map, 0)).fetchedAt === null) left.push(map);
      if (left.length === 0 || Date.now() > deadline) return left;
      await new Promise((r) => setTimeout(r, 500));
    }
  });
  log(missing.length === 0 ? 'rspamd has fetched its maps from hostplane' : `rspamd has not fetched its maps yet (${missing.join(', ')}): see /var/log/rspamd/rspamd.log`);
}
