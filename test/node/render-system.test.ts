// The system profile (docs/decisions/0018-nodes-on-debian.md "One renderer, two profiles"): a Debian
// mail node's files under a temporary root, accepted by the daemons' own checks — doveconf (Debian
// 12's Dovecot 2.3 here; 2.4 in a Debian 13 root filesystem), postfix check, rspamadm configtest
// with Debian's /etc/rspamd/rspamd.conf — with TLS required for IMAP logins, STARTTLS on SMTP, no
// login in clear and the doveadm HTTP API over HTTPS (the local stack's stays plain HTTP). Needs
// root, dovecot-core, postfix and rspamd; skipped without, failed under CI_REQUIRE_ALL=1.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requirable } from '../helpers/required.js';
import { mailFiles, privateFacts, systemFacts } from '../../src/node/render/index.js';
import { mailToolsMissing, renderCli, run } from '../helpers/mail-render.js';
import { describeDovecot24, openTrixie, type Trixie } from '../helpers/trixie.js';

const KEY = 'f00d'.repeat(8);

/** A node's facts under `root`, with a certificate made for it. */
async function nodeFacts(root: string, dovecotVersion: '2.3' | '2.4') {
  fs.mkdirSync(`${root}/etc/ssl`, { recursive: true });
  await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=mx1.example.net', '-days', '30', '-keyout', `${root}/etc/ssl/mail.key`, '-out', `${root}/etc/ssl/mail.pem`]);
  // What `node setup` makes before rendering: the doveadm key, Postfix's queue and data directories.
  fs.mkdirSync(`${root}/etc/dovecot`, { recursive: true });
  fs.writeFileSync(`${root}/etc/dovecot/doveadm.key`, KEY, { mode: 0o600 });
  fs.mkdirSync(`${root}/var/spool/postfix`, { recursive: true });
  fs.mkdirSync(`${root}/var/lib/postfix`, { recursive: true });
  fs.mkdirSync(`${root}/var/lib/rspamd`, { recursive: true });
  return {
    root,
    name: 'mx1',
    hostname: 'mx1.example.net',
    apiUrl: 'https://api.example.net',
    doveadmKey: KEY,
    store: { driver: 'pgsql', host: 'db.internal', port: 5432, dbname: 'hostplane', user: 'hostplane_mail', password: 'pw"1 x', schema: 'public' },
    mailUid: 5000,
    mailGid: 5000,
    dovecotVersion,
    tls: { cert: `${root}/etc/ssl/mail.pem`, key: `${root}/etc/ssl/mail.key` },
  };
}

/** The value of one setting as doveconf reads the file. */
const dovecotSetting = async (conf: string, name: string) => (await run('doveconf', ['-c', conf, '-h', name])).trim();

requirable(mailToolsMissing())('node render --profile system: a Debian mail node', () => {
  let root: string;
  beforeAll(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'hp-render-'));
    await renderCli('system', await nodeFacts(root, '2.3'), root, path.join(os.tmpdir(), `${path.basename(root)}.json`));
  }, 60_000);
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it("Debian's layout: /etc/dovecot, /etc/postfix, /etc/rspamd's LOCAL_CONFDIR files, no private rspamd", () => {
    const files = (d: string) => fs.readdirSync(path.join(root, d), { recursive: true }).map(String).sort();
    expect(files('etc/dovecot')).toEqual(['dict-sieve.conf.ext', 'doveadm.key', 'dovecot.conf', 'hostplane-header', 'sql-app.conf.ext', 'sql.conf.ext']);
    expect(files('etc/postfix')).toEqual(['main.cf', 'master.cf', 'pgsql-aliases.cf', 'pgsql-domains.cf', 'pgsql-mailboxes.cf', 'pgsql-senders.cf']);
    expect(files('etc/rspamd')).toEqual(['override.d', 'override.d/options.inc', 'rspamd.conf.override', 'rspamd.local.lua']);
  });

  it('Dovecot 2.3 accepts it: TLS required (STARTTLS on 143, imaps on 993), no login in clear, LMTP on loopback 24, doveadm over HTTPS on 8080', async () => {
    const conf = `${root}/etc/dovecot/dovecot.conf`;
    const n = await run('doveconf', ['-n', '-c', conf]);
    expect(await dovecotSetting(conf, 'ssl')).toBe('required');
    expect(await dovecotSetting(conf, 'disable_plaintext_auth')).toBe('yes');
    expect(n).toContain(`ssl_cert = <${root}/etc/ssl/mail.pem`);
    expect(n).toMatch(/inet_listener imap \{\n\s+address = \*, ::\n\s+port = 143\n/);
    expect(n).toMatch(/inet_listener imaps \{\n\s+port = 993\n/);
    expect(n).toMatch(/inet_listener lmtp \{\n\s+address = 127\.0\.0\.1\n\s+port = 24\n/);
    expect(n).toContain('service doveadm {\n  inet_listener http {\n    address = *, ::\n    port = 8080\n    ssl = yes\n  }\n}\n');
    expect(n).toContain('mail_uid = vmail');
    expect(n).toContain(`mail_home = ${root}/var/vmail/%d/%n`);
  });

  it('Postfix accepts it (postfix check): STARTTLS with the certificate on port 25, AUTH never in clear, mail to rspamd', async () => {
    await run('postfix', ['-c', `${root}/etc/postfix`, 'check']);
    const n = (await run('postconf', ['-n', '-c', `${root}/etc/postfix`])).split('\n');
    expect(n).toEqual(
      expect.arrayContaining([
        'smtpd_tls_security_level = may',
        `smtpd_tls_cert_file = ${root}/etc/ssl/mail.pem`,
        `smtpd_tls_key_file = ${root}/etc/ssl/mail.key`,
        'smtpd_tls_auth_only = yes',
        'inet_interfaces = all',
        'myhostname = mx1.example.net',
        'smtpd_milters = inet:127.0.0.1:11332',
      ]),
    );
    expect(n.filter((l) => l.startsWith('smtp_dns_support_level') || l.startsWith('maillog_file'))).toEqual([]);
    const master = await run('postconf', ['-M', '-c', `${root}/etc/postfix`]);
    expect(master).toMatch(/^smtp +inet +n +- +n +- +- +smtpd$/m);
    // Submission (API guide "Sending mail"): 587 with STARTTLS required, 465 with implicit TLS, AUTH
    // through Dovecot, rspamd's verdict required (tempfail while it cannot answer).
    expect(master).toMatch(/^587 +inet +n +- +n +- +- +smtpd -o syslog_name=postfix\/submission -o smtpd_tls_security_level=encrypt /m);
    expect(master).toMatch(/^465 +inet +n +- +n +- +- +smtpd -o syslog_name=postfix\/submissions -o smtpd_tls_wrappermode=yes /m);
    for (const port of ['587', '465']) {
      const block = new RegExp(`^${port} .*$`, 'm').exec(master)![0];
      for (const o of ['smtpd_sasl_auth_enable=yes', 'smtpd_tls_auth_only=yes', 'smtpd_sender_restrictions=$hp_submission_sender', 'milter_default_action=tempfail']) expect(block).toContain(`-o ${o}`);
    }
    expect(n).toEqual(
      expect.arrayContaining([
        'smtpd_sasl_type = dovecot',
        `smtpd_sasl_path = ${root}/run/dovecot/auth-postfix`,
        'smtpd_sasl_auth_enable = no',
        `smtpd_sender_login_maps = proxy:pgsql:${root}/etc/postfix/pgsql-senders.cf`,
        'hp_submission_sender = reject_non_fqdn_sender, reject_sender_login_mismatch, permit_sasl_authenticated, reject',
      ]),
    );
  });

  it('the outbound limits (docs/decisions/0020-outbound-limits.md): the submission services alone ask the policy service on loopback 10040, at RCPT and at the end of data; its config holds the store as the maps do', async () => {
    const n = (await run('postconf', ['-n', '-c', `${root}/etc/postfix`])).split('\n');
    expect(n).toEqual(
      expect.arrayContaining([
        'hp_submission_recipient = reject_non_fqdn_recipient, check_policy_service inet:127.0.0.1:10040, permit_sasl_authenticated, reject',
        'hp_submission_end_of_data = check_policy_service inet:127.0.0.1:10040',
        'smtpd_policy_service_default_action = 451 4.3.0 The sending limits cannot be checked at the moment; try again later',
      ]),
    );
    // Port 25's own restrictions never name it.
    expect(n.filter((l) => /^smtpd_(recipient|relay|end_of_data)_restrictions/.test(l))).toEqual([
      'smtpd_recipient_restrictions = permit_mynetworks, reject_unauth_destination',
      'smtpd_relay_restrictions = permit_mynetworks, reject_unauth_destination',
    ]);
    const master = await run('postconf', ['-M', '-c', `${root}/etc/postfix`]);
    expect(new RegExp('^smtp .*$', 'm').exec(master)![0]).not.toContain('hp_submission');
    for (const port of ['587', '465']) {
      const block = new RegExp(`^${port} .*$`, 'm').exec(master)![0];
      for (const o of ['smtpd_recipient_restrictions=$hp_submission_recipient', 'smtpd_end_of_data_restrictions=$hp_submission_end_of_data']) expect(block).toContain(`-o ${o}`);
    }
    const conf = `${root}/etc/hostplane/mail-policy.json`;
    expect(JSON.parse(fs.readFileSync(conf, 'utf8'))).toEqual({
      name: 'mx1',
      listen: '127.0.0.1:10040',
      store: { driver: 'pgsql', host: 'db.internal', port: 5432, dbname: 'hostplane', user: 'hostplane_mail', password: 'pw"1 x', schema: 'public' },
    });
    const st = fs.statSync(conf);
    expect([(st.mode & 0o777).toString(8), st.gid]).toEqual(['640', Number((await run('getent', ['group', 'postfix'])).split(':')[2])]);
  });

  it("rspamd accepts it with Debian's rspamd.conf: the settings map of mx1, reject at 15, maps asked every 2 s (jobs wait for the next request)", async () => {
    const vars = [`--var=LOCAL_CONFDIR=${root}/etc/rspamd`, `--var=DBDIR=${root}/var/lib/rspamd`];
    expect(await run('rspamadm', [...vars, 'configtest', '-c', '/etc/rspamd/rspamd.conf'])).toContain('syntax OK');
    const dump = JSON.parse(await run('rspamadm', [...vars, 'configdump', '-C', '-c', '/etc/rspamd/rspamd.conf']));
    expect(dump.settings).toMatch(/^https:\/\/mx1:[0-9a-f]{64}@api\.example\.net\/internal\/rspamd-settings$/);
    expect(dump.actions.reject).toBe(15);
    expect(dump.options.map_watch_interval).toBe(2);
    // DKIM signing from the two tables hostplane serves mx1; only this server itself is local.
    expect(dump.dkim_signing).toMatchObject({
      enabled: true,
      signing_table: expect.stringMatching(/^https:\/\/mx1:[0-9a-f]{64}@api\.example\.net\/internal\/rspamd-dkim-signing$/),
      key_table: expect.stringMatching(/^https:\/\/mx1:[0-9a-f]{64}@api\.example\.net\/internal\/rspamd-dkim-keys$/),
      sign_authenticated: true,
      sign_local: true,
      sign_inbound: false,
    });
    expect(dump.options.local_addrs).toEqual(expect.arrayContaining(['127.0.0.0/8', '::1']));
    expect(dump.options.local_addrs).not.toContain('10.0.0.0/8');
  });
});

describeDovecot24('node render, Dovecot 2.4 (Debian 13)', () => {
  let tmp: string;
  let trixie: Trixie;
  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hp-render-'));
    trixie = await openTrixie();
  }, 180_000);
  afterAll(() => {
    trixie?.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('system: doveconf 2.4 accepts it; TLS required with the certificate, no login in clear, doveadm over HTTPS, the SQL in dovecot.conf', async () => {
    const root = path.join(tmp, 'system');
    await renderCli('system', await nodeFacts(root, '2.4'), root, path.join(tmp, 'system.json'));
    const conf = `${root}/etc/dovecot/dovecot.conf`;
    expect(fs.readdirSync(`${root}/etc/dovecot`).sort()).toEqual(['doveadm.key', 'dovecot.conf']);
    const n = await trixie.doveconf(conf);
    expect(n).toMatch(/^# 2\.4\./);
    expect(n).toContain('ssl = required');
    expect(n).toMatch(/ssl_server \{\n\s+cert_file = .*\/etc\/ssl\/mail\.pem\n\s+key_file = .*\/etc\/ssl\/mail\.key\n/);
    expect((await trixie.doveconf(conf, ['-h', 'auth_allow_cleartext'])).trim()).toBe('no');
    expect(n).toMatch(/inet_listener imaps \{\n\s+port = 993\n/);
    expect(n).toContain('service doveadm {\n  inet_listener http {\n    port = 8080\n    ssl = yes\n    listen = * ::\n  }\n}\n');
    expect(n).toContain('password = pw"1 x');
    expect(n).toContain("quota_bytes || 'B' AS quota_storage_size");
  }, 60_000);

  it.for(['pgsql', 'sqlite'] as const)('private on %s: doveconf 2.4 accepts the local stack; no TLS, logins in clear and doveadm in clear on loopback', { timeout: 60_000 }, async (driver, { skip }) => {
    // The lab's repository has only the PostgreSQL driver.
    if (driver === 'sqlite' && !trixie.sqlite) skip('no dovecot-sqlite in that root filesystem');
    const dir = path.join(tmp, `private-${driver}`);
    fs.mkdirSync(dir);
    const store = driver === 'sqlite' ? { driver, path: `${dir}/store.db` } : { driver, host: '127.0.0.1', port: 5432, dbname: 'test', user: 'reader', password: 'x', schema: 's 1' };
    const input = { dir, portBase: 47200, name: 'local', apiUrl: 'http://127.0.0.1:8080', doveadmKey: KEY, store, mailUid: 8, mailGid: 8, dovecotVersion: '2.4', rspamd: null };
    await renderCli('private', input, dir, path.join(tmp, `private-${driver}.json`));
    const conf = `${dir}/mail/dovecot/dovecot.conf`;
    const n = await trixie.doveconf(conf);
    expect(n).toContain('ssl = no');
    expect((await trixie.doveconf(conf, ['-h', 'auth_allow_cleartext'])).trim()).toBe('yes');
    expect(n).toMatch(/inet_listener imap \{\n\s+port = 47211\n\s+listen = 127\.0\.0\.1\n/);
    expect(n).toContain('service doveadm {\n  inet_listener http {\n    port = 47213\n    listen = 127.0.0.1\n  }\n}\n');
    if (driver === 'sqlite') {
      expect(n).toContain(`sqlite_path = ${dir}/store.db`);
      expect(n).toMatch(/service auth-worker \{\n\s+user = root\n/);
    } else {
      expect(n).toContain('sql_table = "s 1".mail_sieve');
      expect(n).toMatch(/service auth-worker \{\n\s+user = \$SET:default_internal_user\n/);
    }
  });
});

describe('system, the store over TLS (a node: sslRootCert)', () => {
  const facts = (dovecotVersion: '2.3' | '2.4') =>
    systemFacts({
      root: '/', name: 'mx1', hostname: 'mx1.example.net', postmaster: 'postmaster@mx1.example.net', apiUrl: 'https://api.example.net', doveadmKey: KEY,
      store: { driver: 'pgsql', host: 'api.example.net', port: 5432, dbname: 'hostplane', user: 'hostplane_mail_mx1', password: 'p@ss/word', schema: 'public', sslRootCert: '/etc/ssl/certs/ca-certificates.crt' },
      mailUid: 5000, mailGid: 5000, dovecotVersion, tls: { cert: '/etc/hostplane/tls/mx1.example.net.crt', key: '/etc/hostplane/tls/mx1.example.net.key' },
    });
  const file = (f: ReturnType<typeof facts>, name: string, profile: 'system' | 'private' = 'system') => mailFiles(f, profile).find((x) => x.path.endsWith(name))!.text;

  it("the doveadm HTTP API: HTTPS on a node (the certificate of IMAP), plain HTTP in the local stack's", () => {
    const listener = (key: string, address: string, port: number, tls: boolean) =>
      `service doveadm {\n  inet_listener http {\n    ${key} = ${address}\n    port = ${port}\n${tls ? '    # The API key crosses the network: HTTPS with the certificate of IMAP.\n    ssl = yes\n' : ''}  }\n}\n`;
    expect(file(facts('2.3'), 'dovecot.conf')).toContain(listener('address', '*, ::', 8080, true));
    expect(file(facts('2.4'), 'dovecot.conf')).toContain(listener('listen', '*, ::', 8080, true));
    for (const version of ['2.3', '2.4'] as const) {
      const local = privateFacts({ dir: '/srv/stack', portBase: 47200, name: 'local', apiUrl: 'http://127.0.0.1:8080', doveadmKey: KEY, store: { driver: 'sqlite', path: '/srv/stack/store.db' }, mailUid: 8, mailGid: 8, dovecotVersion: version, rspamd: null });
      const text = file(local, 'dovecot.conf', 'private');
      expect(text).toContain(listener(version === '2.3' ? 'address' : 'listen', '127.0.0.1', 47213, false));
      expect(text).not.toContain('ssl = yes');
    }
  });

  it('Dovecot and Postfix ask libpq for verify-full against the roots and give up on a silent store within seconds; Postfix takes a URI with the login percent-encoded', () => {
    const remote = 'sslmode=verify-full sslrootcert=/etc/ssl/certs/ca-certificates.crt connect_timeout=5 keepalives_idle=5 keepalives_interval=2 keepalives_count=2 tcp_user_timeout=5000';
    expect(file(facts('2.3'), 'sql.conf.ext')).toContain(`connect = host=api.example.net port=5432 dbname=hostplane user=hostplane_mail_mx1 password='p@ss/word' ${remote}\n`);
    expect(file(facts('2.4'), 'dovecot.conf')).toContain(`    password = p@ss/word\n${remote.split(' ').map((kv) => `    ${kv.replace('=', ' = ')}\n`).join('')}  }`);
    expect(file(facts('2.4'), 'pgsql-domains.cf')).toContain(
      `hosts = postgresql://hostplane_mail_mx1:p%40ss%2Fword@api.example.net:5432/hostplane?${remote.replaceAll(' ', '&').replace('/etc/ssl/certs/ca-certificates.crt', '%2Fetc%2Fssl%2Fcerts%2Fca-certificates.crt')}\n`,
    );
  });
});
