// Dovecot 2.3 (Debian 12) for hostplane's mail directory (docs/decisions/0009-mail-directory.md):
// IMAP for the mailboxes, LMTP for Postfix, the doveadm HTTP API for hostplane. Users, passwords,
// application passwords, quotas and Sieve scripts are read from the store at every login and
// delivery: a change is live when hostplane commits it, nothing is pushed or reloaded.
import { readersAsRoot, submissionHost, tablePrefix, type MailFacts } from './facts.js';
import { sqlConnect, sqlQueries } from './dovecot-sql.js';
import { dovecotBase, dovecotServices } from './dovecot-shared.js';

export function dovecotConf23(f: MailFacts): string {
  const d = f.dovecot;
  const reader = readersAsRoot(f) ? 'root' : '$default_internal_user';
  return `# hostplane's Dovecot 2.3, rendered by \`hostplane node render\`. Keep the auth cache off
# (Dovecot's default): a revoked password would keep working until its entry expires.
${dovecotBase(f, tls23(f), '%Lu')}mail_home = ${f.mail.home}/%d/%n
mail_location = maildir:~/Maildir
mail_plugins = quota

${dovecotServices(f, reader, 'address')}# HTTP clients send "Authorization: X-Dovecot-API <base64 of the key>".
doveadm_api_key = <${d.doveadmKeyFile}

# After each login Dovecot reports it to hostplane (fire and forget: it never delays or decides a
# login): an application password's login sets its last_used_at. The nonce is required, unused.
auth_policy_server_url = ${f.apiUrl}/internal/mail-auth-report
auth_policy_server_api_header = <${d.policyHeaderFile}
auth_policy_hash_nonce = <${d.doveadmKeyFile}
auth_policy_check_before_auth = no
auth_policy_check_after_auth = no
auth_policy_report_after_auth = yes
auth_policy_request_attributes = login=%{requested_username} app_password_id=%{passdb:hostplane_app_password_id}

# 1. the mailbox password ({BLF-CRYPT} hash), 2. an application password (SHA-256 of the secret).
passdb {
  driver = sql
  args = ${d.confDir}/sql.conf.ext
}
passdb {
  driver = sql
  args = ${d.confDir}/sql-app.conf.ext
}
userdb {
  driver = sql
  args = ${d.confDir}/sql.conf.ext
}

protocol lmtp {
  postmaster_address = ${f.postmaster}
  # Each delivery runs the mailbox's Sieve script: antispam filing, the autoresponder.
  mail_plugins = $mail_plugins sieve
}
protocol imap {
  mail_plugins = $mail_plugins imap_quota
}
plugin {
  quota = count:User quota
  quota_vsizes = yes
}

# The Sieve scripts come from the mail directory through the SQL dict (dict-sieve.conf.ext), written
# in the transaction of the change; compiled once per script id into the home (bindir).
dict {
  sieve = ${f.store.driver}:${d.confDir}/dict-sieve.conf.ext
}
service dict {
  user = ${reader}
  # LMTP delivers as the mail user and asks the dict process over this socket.
  unix_listener dict {
    mode = 0660
    user = ${f.mail.user}
    group = ${f.mail.group}
  }
}
# Autoresponder replies leave through the MTA, without a sender (MAIL FROM:<>).
submission_host = ${submissionHost(f)}
# The host name in the replies' Message-IDs (else the machine's own name).
import_environment = $import_environment DOVECOT_HOSTDOMAIN=${f.hostname}
plugin {
  sieve = dict:proxy::sieve;name=active;bindir=~/.sieve-bin
  # subject-rewrite mailboxes prefix the subject of spam another recipient's mode let through.
  sieve_extensions = +editheader
  # Mail that came through an alias, a forward or a +tag is answered too.
  sieve_vacation_dont_check_recipient = yes
}
`;
}

/** TLS on IMAP: required (STARTTLS on imap, imaps), no plaintext login; none on loopback. */
function tls23(f: MailFacts): string {
  if (!f.tls) return 'ssl = no\ndisable_plaintext_auth = no\n';
  return `ssl = required
ssl_cert = <${f.tls.cert}
ssl_key = <${f.tls.key}
disable_plaintext_auth = yes
`;
}

/** The mailbox password and the userdb (quota); see dovecot-sql.ts for the queries' why. */
export function dovecotSqlConf(f: MailFacts): string {
  const q = sqlQueries(f, '2.3');
  return `# hostplane's mail directory for Dovecot 2.3: the mailbox password and the user (quota).
# \`active = 0\` is a deleted address: logins and deliveries stop at that commit; the service
# doveadm still sees the row until its mail is removed (through doveadm, which needs the home).
driver = ${f.store.driver}
connect = ${sqlConnect(f)}
default_pass_scheme = BLF-CRYPT
password_query = ${q.password}
user_query = ${q.user}
iterate_query = ${q.iterate}
`;
}

/** Application passwords: the SHA-256 of 128-bit random secrets, no salt needed. */
export function dovecotSqlAppConf(f: MailFacts): string {
  return `# hostplane's mail directory for Dovecot 2.3: application passwords. hostplane_app_password_id
# goes into the login report, which sets the password's last_used_at.
driver = ${f.store.driver}
connect = ${sqlConnect(f)}
password_query = ${sqlQueries(f, '2.3').app}
`;
}

/** Each mailbox's Sieve script through the SQL dict: its id (the text's SHA-256), then its text. */
export function dovecotDictSieveConf(f: MailFacts): string {
  const t = tablePrefix(f);
  return `# hostplane's mail directory for Dovecot 2.3: Sieve asks for priv/sieve/name/active (the script's
# id, the SHA-256 of its text) and then priv/sieve/data/<id>. A mailbox without a row is delivered as is.
connect = ${sqlConnect(f)}

map {
  pattern = priv/sieve/name/$script_name
  table = ${t}mail_sieve
  username_field = address
  value_field = id
  fields {
    name = $script_name
  }
}

map {
  pattern = priv/sieve/data/$script_id
  table = ${t}mail_sieve
  username_field = address
  value_field = script
  fields {
    id = $script_id
  }
}
`;
}
