// The two profiles of docs/decisions/0018-nodes-on-debian.md "One renderer, two profiles": the
// facts of the local stack (deploy/local/up.sh: everything under <dir>, loopback ports from
// port-base, no TLS) and of a Debian node (Debian's paths and units, standard ports, TLS).
import type { MailFacts } from './facts.js';
import type { PrivateInput, SystemInput } from './input.js';

export type Profile = 'private' | 'system';

/**
 * The local stack: SMTP +10, IMAP +11, LMTP +12, doveadm +13, rspamd's milter +14 and controller
 * +15, submission +17 (STARTTLS) and +18 (implicit TLS) with the stack's own certificate, the
 * mail policy service +19.
 */
export function privateFacts(i: PrivateInput): MailFacts {
  const mail = `${i.dir}/mail`;
  const at = (n: number) => ({ address: '127.0.0.1', port: i.portBase + n });
  return {
    root: i.dir,
    name: i.name,
    hostname: 'mail.hostplane.test',
    postmaster: 'postmaster@mail.hostplane.test',
    store: i.store,
    tls: null,
    apiUrl: i.apiUrl,
    doveadmKey: i.doveadmKey,
    mail: { user: 'mail', group: 'mail', uid: i.mailUid, gid: i.mailGid, home: `${mail}/vmail` },
    dovecot: {
      version: i.dovecotVersion,
      instance: `hostplane-stack-${i.portBase}`,
      baseDir: `${mail}/run`,
      stateDir: `${mail}/state`,
      logPath: `${mail}/dovecot.log`,
      confDir: `${mail}/dovecot`,
      listen: '127.0.0.1',
      imap: i.portBase + 11,
      imaps: null,
      lmtp: at(12),
      doveadm: at(13),
      doveadmKeyFile: `${mail}/doveadm.key`,
      policyHeaderFile: `${mail}/policy-header`,
      // A test and development tool: failed logins answer at once, without anvil's growing penalty.
      authFailureDelay: 0,
      loginPenalty: false,
    },
    postfix: {
      confDir: `${mail}/postfix`,
      queueDir: `${mail}/spool`,
      dataDir: `${mail}/data`,
      log: { file: `${mail}/postfix.log`, prefix: mail },
      inetInterfaces: 'loopback-only',
      mynetworks: '127.0.0.0/8',
      smtp: at(10),
      outboundDns: false,
      tls: i.tls ?? null,
      submission: !i.tls ? null : { starttls: `127.0.0.1:${i.portBase + 17}`, implicit: `127.0.0.1:${i.portBase + 18}` },
    },
    rspamd: i.rspamd && {
      milter: at(14),
      controller: at(15),
      localConfDir: `${mail}/rspamd/local`,
      // rspamd asks every 2 to 4 s whatever is set below 2 s (jobs wait for it: decision 0019).
      mapWatchInterval: '1s',
      hsCacheDir: i.rspamd.hsCacheDir,
      instance: { topFile: `${mail}/rspamd/rspamd.conf`, logFile: `${mail}/rspamd/rspamd.log` },
    },
    // up.sh runs it as root, beside its pid file and log.
    policy: { listen: at(19), configFile: `${mail}/policy/mail-policy.json`, group: 'postfix' },
  };
}

/**
 * A Debian mail node: IMAP 143 (STARTTLS) and 993, SMTP 25, submission 587 and 465, LMTP on loopback 24, the doveadm HTTP
 * API over HTTPS on 8080 (operator guide "What a mail server needs": reachable by hostplane's workers
 * alone, by firewall), Debian's rspamd service (milter on localhost:11332), the mail policy service
 * on loopback 10040, logs to the journal.
 */
export function systemFacts(i: SystemInput): MailFacts {
  const p = i.root === '/' ? '' : i.root;
  return {
    root: i.root,
    name: i.name,
    hostname: i.hostname,
    postmaster: i.postmaster,
    store: i.store,
    tls: i.tls,
    apiUrl: i.apiUrl,
    doveadmKey: i.doveadmKey,
    mail: { user: 'vmail', group: 'vmail', uid: i.mailUid, gid: i.mailGid, home: `${p}/var/vmail` },
    dovecot: {
      version: i.dovecotVersion,
      instance: 'dovecot',
      baseDir: `${p}/run/dovecot`,
      stateDir: `${p}/var/lib/dovecot`,
      logPath: null,
      confDir: `${p}/etc/dovecot`,
      listen: '*, ::',
      imap: 143,
      imaps: 993,
      lmtp: { address: '127.0.0.1', port: 24 },
      doveadm: { address: '*, ::', port: 8080 },
      doveadmKeyFile: `${p}/etc/dovecot/doveadm.key`,
      policyHeaderFile: `${p}/etc/dovecot/hostplane-header`,
      authFailureDelay: 2,
      loginPenalty: true,
    },
    postfix: {
      confDir: `${p}/etc/postfix`,
      queueDir: `${p}/var/spool/postfix`,
      dataDir: `${p}/var/lib/postfix`,
      log: null,
      inetInterfaces: 'all',
      mynetworks: '127.0.0.0/8',
      smtp: null,
      outboundDns: true,
      tls: i.tls,
      submission: { starttls: '587', implicit: '465' },
    },
    rspamd: {
      milter: { address: '127.0.0.1', port: 11332 },
      controller: { address: '127.0.0.1', port: 11334 },
      localConfDir: `${p}/etc/rspamd`,
      // A job of an antispam change waits for rspamd's next request: 2 to 4 s, a 304 mostly (decision 0019).
      mapWatchInterval: '2s',
      hsCacheDir: `${p}/var/lib/rspamd`,
      instance: null,
    },
    // hostplane-mail-policy.service: user hostplane with the group postfix, which may read the
    // store's password in Postfix's maps already.
    policy: { listen: { address: '127.0.0.1', port: 10040 }, configFile: `${p}/etc/hostplane/mail-policy.json`, group: 'postfix' },
  };
}
