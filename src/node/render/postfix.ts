// Postfix 3.7+ for hostplane's mail directory: accepts mail for its domains, mailboxes and forwards
// and hands it to Dovecot over LMTP; mail clients submit through it (API guide "Sending mail"). The
// maps are SQL queries through proxymap, read at every lookup: a change is live when hostplane
// commits it.
import { readersAsRoot, saslSocket, tablePrefix, type MailFacts } from './facts.js';
import { REMOTE_PQ } from './dovecot-sql.js';

export type PostfixMap = 'domains' | 'mailboxes' | 'aliases' | 'senders';
export const POSTFIX_MAPS: PostfixMap[] = ['domains', 'mailboxes', 'aliases', 'senders'];

export function postfixMainCf(f: MailFacts): string {
  const p = f.postfix;
  const map = (m: PostfixMap) => `proxy:${f.store.driver}:${p.confDir}/${f.store.driver}-${m}.cf`;
  const log = p.log ? `maillog_file = ${p.log.file}\nmaillog_file_prefixes = /var, /dev/stdout, ${p.log.prefix}\n` : '';
  return `# hostplane's Postfix, rendered by \`hostplane node render\`; smtpd's own port is in master.cf.
compatibility_level = 3.6
queue_directory = ${p.queueDir}
data_directory = ${p.dataDir}
meta_directory = /etc/postfix
mail_owner = postfix
setgid_group = postdrop
${log}
myhostname = ${f.hostname}
myorigin = $myhostname
mydestination =
inet_interfaces = ${p.inetInterfaces}
inet_protocols = ipv4
mynetworks = ${p.mynetworks}
smtpd_relay_restrictions = permit_mynetworks, reject_unauth_destination
smtpd_recipient_restrictions = permit_mynetworks, reject_unauth_destination
${p.outboundDns ? '' : 'smtp_dns_support_level = disabled\n'}smtputf8_enable = no
biff = no
alias_maps =
alias_database =
local_recipient_maps =
# b+tag@example.com is delivered to b@example.com (Dovecot strips the same delimiter).
recipient_delimiter = +
${tls(f)}
# hostplane's mail directory: domains (ACE, lower case), mailboxes (active = 1), forwards and the
# forward_to of mailboxes (a mailbox that keeps a copy has an alias row to itself).
virtual_mailbox_domains = ${map('domains')}
virtual_mailbox_maps = ${map('mailboxes')}
virtual_alias_maps = ${map('aliases')}
virtual_transport = lmtp:inet:${f.dovecot.lmtp.address}:${f.dovecot.lmtp.port}
proxy_read_maps = $virtual_mailbox_domains $virtual_mailbox_maps $virtual_alias_maps $smtpd_sender_login_maps
${submission(f, map('senders'))}
# rspamd decides what is spam (docs/decisions/0011-antispam-and-autoresponder.md): mail that comes in
# over SMTP is checked, not bounces. While rspamd is down or slow, mail is accepted unchecked: nothing
# is lost or deferred because of the filter.
smtpd_milters = ${f.rspamd ? `inet:${f.rspamd.milter.address}:${f.rspamd.milter.port}` : ''}
non_smtpd_milters =
milter_protocol = 6
milter_default_action = accept
`;
}

/** STARTTLS offered on port 25 (senders may still send in clear: MX-to-MX mail); AUTH never in clear. */
function tls(f: MailFacts): string {
  const t = f.postfix.tls;
  if (!t) return '';
  return `
smtpd_tls_cert_file = ${t.cert}
smtpd_tls_key_file = ${t.key}
smtpd_tls_security_level = may
smtpd_tls_auth_only = yes
smtp_tls_security_level = may
`;
}

/**
 * Submission (ports 587 and 465, master.cf): a mailbox logs in through Dovecot (its password or an
 * application password) and may send only as its own address; the mail is checked and signed by
 * rspamd, and deferred while rspamd cannot (milter_default_action tempfail: nothing leaves unsigned
 * or unchecked, nothing is lost). Port 25 never offers AUTH.
 */
function submission(f: MailFacts, senders: string): string {
  if (!f.postfix.submission) return '';
  const policy = `check_policy_service inet:${f.policy.listen.address}:${f.policy.listen.port}`;
  return `
# Mail clients (the submission services in master.cf): SASL through Dovecot, never before TLS.
smtpd_sasl_type = dovecot
smtpd_sasl_path = ${saslSocket(f)}
smtpd_sasl_auth_enable = no
smtpd_sasl_security_options = noanonymous, noplaintext
smtpd_sasl_tls_security_options = noanonymous
smtpd_sasl_authenticated_header = no
broken_sasl_auth_clients = no
# A login owns its own address alone: the envelope sender must be it (rspamd checks From:).
smtpd_sender_login_maps = ${senders}
hp_submission_client = permit_sasl_authenticated, reject
hp_submission_sender = reject_non_fqdn_sender, reject_sender_login_mismatch, permit_sasl_authenticated, reject
hp_submission_relay = permit_sasl_authenticated, reject
# Recipients per mailbox and hour (docs/decisions/0020-outbound-limits.md): hostplane's policy service
# counts them at RCPT and settles them at the end of each message. While it does not answer,
# recipients are deferred (the client keeps the message), never let through unlimited.
hp_submission_recipient = reject_non_fqdn_recipient, ${policy}, permit_sasl_authenticated, reject
hp_submission_end_of_data = ${policy}
smtpd_policy_service_default_action = 451 4.3.0 The sending limits cannot be checked at the moment; try again later
`;
}

export function postfixMasterCf(f: MailFacts): string {
  const smtp = f.postfix.smtp ? `${f.postfix.smtp.address}:${f.postfix.smtp.port}` : 'smtp';
  // proxymap opens the SQL maps as postfix ("-"); on SQLite as root, so the store may stay in a
  // directory only root enters (operator guide "What a mail server needs").
  const unpriv = readersAsRoot(f) ? 'n' : '-';
  const rows: string[][] = [
    [smtp, 'inet', 'n', '-', 'n', '-', '-', 'smtpd'],
    ['pickup', 'unix', 'n', '-', 'n', '60', '1', 'pickup'],
    ['cleanup', 'unix', 'n', '-', 'n', '-', '0', 'cleanup'],
    ['qmgr', 'unix', 'n', '-', 'n', '300', '1', 'qmgr'],
    ['tlsmgr', 'unix', '-', '-', 'n', '1000?', '1', 'tlsmgr'],
    ['rewrite', 'unix', '-', '-', 'n', '-', '-', 'trivial-rewrite'],
    ['bounce', 'unix', '-', '-', 'n', '-', '0', 'bounce'],
    ['defer', 'unix', '-', '-', 'n', '-', '0', 'bounce'],
    ['trace', 'unix', '-', '-', 'n', '-', '0', 'bounce'],
    ['verify', 'unix', '-', '-', 'n', '-', '1', 'verify'],
    ['flush', 'unix', 'n', '-', 'n', '1000?', '0', 'flush'],
    ['proxymap', 'unix', '-', unpriv, 'n', '-', '-', 'proxymap'],
    ['proxywrite', 'unix', '-', unpriv, 'n', '-', '1', 'proxymap'],
    ['smtp', 'unix', '-', '-', 'n', '-', '-', 'smtp'],
    ['relay', 'unix', '-', '-', 'n', '-', '-', 'smtp'],
    ['showq', 'unix', 'n', '-', 'n', '-', '-', 'showq'],
    ['error', 'unix', '-', '-', 'n', '-', '-', 'error'],
    ['retry', 'unix', '-', '-', 'n', '-', '-', 'error'],
    ['discard', 'unix', '-', '-', 'n', '-', '-', 'discard'],
    ['lmtp', 'unix', '-', '-', 'n', '-', '-', 'lmtp'],
    ['anvil', 'unix', '-', '-', 'n', '-', '1', 'anvil'],
    ['scache', 'unix', '-', '-', 'n', '-', '1', 'scache'],
    ['postlog', 'unix-dgram', 'n', '-', 'n', '-', '1', 'postlogd'],
  ];
  return `# hostplane's Postfix services: Debian's master.cf without chroot (a chrooted smtpd could not
# reach the maps' sockets and files).
# service         type  private unpriv chroot wakeup maxproc command
${rows.map(columns).join('\n')}
${submissionServices(f)}`;
}

/** 587 with STARTTLS required, 465 with implicit TLS; both only for logins (see submission()). */
function submissionServices(f: MailFacts): string {
  const s = f.postfix.submission;
  if (!s) return '';
  const options = (name: string, tls: string) =>
    [
      `syslog_name=postfix/${name}`,
      tls,
      'smtpd_tls_auth_only=yes',
      'smtpd_sasl_auth_enable=yes',
      'smtpd_client_restrictions=$hp_submission_client',
      'smtpd_sender_restrictions=$hp_submission_sender',
      'smtpd_relay_restrictions=$hp_submission_relay',
      'smtpd_recipient_restrictions=$hp_submission_recipient',
      'smtpd_end_of_data_restrictions=$hp_submission_end_of_data',
      'milter_macro_daemon_name=ORIGINATING',
      ...(f.rspamd ? ['milter_default_action=tempfail'] : []),
    ].map((o) => `  -o ${o}`).join('\n');
  return `# Mail clients: submission with STARTTLS (required before AUTH) and with implicit TLS.
${columns([s.starttls, 'inet', 'n', '-', 'n', '-', '-', 'smtpd'])}
${options('submission', 'smtpd_tls_security_level=encrypt')}
${columns([s.implicit, 'inet', 'n', '-', 'n', '-', '-', 'smtpd'])}
${options('submissions', 'smtpd_tls_wrappermode=yes')}
`;
}

const WIDTHS = [17, 6, 8, 7, 7, 7, 8];
const columns = (r: string[]) => r.map((c, i) => (i < WIDTHS.length ? c.padEnd(Math.max(WIDTHS[i], c.length + 1)) : c)).join('');

/** One of the maps: the row of a domain, an active mailbox or a forward's destinations (joined). */
export function postfixMap(f: MailFacts, map: PostfixMap): string {
  const t = tablePrefix(f);
  const mine = `server = '${f.name}'`;
  const query = {
    domains: `SELECT domain FROM ${t}mail_domains WHERE domain = '%s' AND ${mine}`,
    mailboxes: `SELECT 'OK' FROM ${t}mail_users WHERE address = '%s' AND active = 1 AND ${mine}`,
    aliases: `SELECT destination FROM ${t}mail_aliases WHERE source = '%s' AND ${mine}`,
    // The login that owns an envelope sender: a mailbox owns its own address (forwards have no login).
    senders: `SELECT address FROM ${t}mail_users WHERE address = '%s' AND active = 1 AND ${mine}`,
  }[map];
  const s = f.store;
  // Over TLS Postfix takes the server as a libpq URI (Postfix 3.1 and later), which must carry the
  // login too: libpq then ignores the user and password lines.
  const e = encodeURIComponent;
  const host =
    s.driver !== 'pgsql' ? '' : s.sslRootCert
        ? `postgresql://${e(s.user)}:${e(s.password)}@${s.host}:${s.port}/${e(s.dbname)}?${REMOTE_PQ.map(([k, v]) => `${k}=${e(k === 'sslrootcert' ? s.sslRootCert! : v)}`).join('&')}`
        : `inet:${s.host}:${s.port}`;
  const connect = s.driver === 'sqlite' ? `dbpath = ${s.path}\n` : `hosts = ${host}\nuser = ${s.user}\npassword = ${s.password}\ndbname = ${s.dbname}\n`;
  return `# hostplane's mail directory for Postfix, ${s.driver}: ${MAP_WHAT[map]}.
${connect}query = ${query}
`;
}

const MAP_WHAT: Record<PostfixMap, string> = {
  domains: 'the domains it accepts mail for',
  mailboxes: 'the active mailboxes',
  aliases: 'forwards and forward_to (a mailbox that keeps a copy has a row to itself)',
  senders: 'the login that may send as an address (a mailbox, as itself)',
};
