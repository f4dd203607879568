// Dovecot 2.4 (Debian 13) for hostplane's mail directory: the same service as dovecot23.ts in 2.4's
// syntax (named filters instead of args files, %{…} variables, settings instead of plugin {}), in
// one file: the SQL connection and the queries are settings of dovecot.conf now.
import { policyHeader, readersAsRoot, submissionHost, tablePrefix, type MailFacts } from './facts.js';
import { REMOTE_PQ, sqlQueries } from './dovecot-sql.js';
import { dovecotBase, dovecotServices } from './dovecot-shared.js';

export function dovecotConf24(f: MailFacts): string {
  const d = f.dovecot;
  const reader = readersAsRoot(f) ? 'root' : '$SET:default_internal_user';
  const q = sqlQueries(f, '2.4');
  return `# hostplane's Dovecot 2.4, rendered by \`hostplane node render\`. Keep the auth cache off
# (Dovecot's default): a revoked password would keep working until its entry expires.
dovecot_config_version = 2.4.0
dovecot_storage_version = 2.4.0

${dovecotBase(f, tls24(f), '%{user | lower}')}mail_home = ${f.mail.home}/%{user | domain}/%{user | username}
mail_driver = maildir
mail_path = ~/Maildir
mail_plugins {
  quota = yes
}
namespace inbox {
  inbox = yes
}

${dovecotServices(f, reader, 'listen')}# HTTP clients send "Authorization: X-Dovecot-API <base64 of the key>". Inline: 2.4 reads "<file"
# only for settings that are files, so this file is as secret as the key (mode 0640).
doveadm_api_key = ${f.doveadmKey}

# After each login Dovecot reports it to hostplane (fire and forget: it never delays or decides a
# login): an application password's login sets its last_used_at. The nonce is required, unused.
auth_policy_server_url = ${f.apiUrl}/internal/mail-auth-report
auth_policy_server_api_header = ${policyHeader(f)}
auth_policy_hash_nonce = ${f.doveadmKey}
auth_policy_check_before_auth = no
auth_policy_check_after_auth = no
auth_policy_report_after_auth = yes
# Only these two (the empty line drops 2.4's defaults, which would send a hash of the password too).
auth_policy_request_attributes =
auth_policy_request_attributes {
  login = %{requested_username}
  app_password_id = %{passdb:hostplane_app_password_id}
}

${sqlConnection24(f)}
# 1. the mailbox password ({BLF-CRYPT} hash), 2. an application password (SHA-256 of the secret).
# A deleted address (active = 0) still answers the userdb for doveadm, which removes its mail.
passdb sql {
  default_password_scheme = BLF-CRYPT
  query = ${q.password}
}
passdb app {
  driver = sql
  sql_query = ${q.app}
}
userdb sql {
  query = ${q.user}
  iterate_query = ${q.iterate}
}

protocol lmtp {
  postmaster_address = ${f.postmaster}
  # Each delivery runs the mailbox's Sieve script: antispam filing, the autoresponder.
  mail_plugins {
    sieve = yes
  }
}
protocol imap {
  mail_plugins {
    imap_quota = yes
  }
}
quota "User quota" {
  driver = count
}

# The Sieve scripts come from the mail directory through the SQL dict, written in the transaction of
# the change: Sieve asks for priv/sieve/name/active (the script's id, the SHA-256 of its text), then
# priv/sieve/data/<id>; compiled once per id into the home (bin_path). No row: delivered as is.
dict_server {
  dict sieve {
    driver = sql
${indent(sqlConnection24(f), 4)}
    dict_map priv/sieve/name/$script_name {
      sql_table = ${tablePrefix(f)}mail_sieve
      username_field = address
      value_field id {
      }
      key_field name {
        value = $script_name
      }
    }
    dict_map priv/sieve/data/$script_id {
      sql_table = ${tablePrefix(f)}mail_sieve
      username_field = address
      value_field script {
      }
      key_field id {
        value = $script_id
      }
    }
  }
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
sieve_script personal {
  driver = dict
  name = active
  bin_path = ~/.sieve-bin
  dict proxy {
    name = sieve
  }
}
# subject-rewrite mailboxes prefix the subject of spam another recipient's mode let through.
sieve_extensions {
  editheader = yes
}
# Mail that came through an alias, a forward or a +tag is answered too.
sieve_vacation_check_recipient = no
# Autoresponder replies leave through the MTA, without a sender (MAIL FROM:<>).
submission_host = ${submissionHost(f)}
# The host name in the replies' Message-IDs (else the machine's own name).
import_environment {
  DOVECOT_HOSTDOMAIN = ${f.hostname}
}
`;
}

/** TLS on IMAP: required (STARTTLS on imap, imaps), no cleartext login; none on loopback. */
function tls24(f: MailFacts): string {
  if (!f.tls) return 'ssl = no\nauth_allow_cleartext = yes\n';
  return `ssl = required
ssl_server_cert_file = ${f.tls.cert}
ssl_server_key_file = ${f.tls.key}
auth_allow_cleartext = no
`;
}

/** The SQL driver and its connection, for the passdbs and userdb and again inside the dict. */
function sqlConnection24(f: MailFacts): string {
  const s = f.store;
  if (s.driver === 'sqlite') return `sql_driver = sqlite\nsqlite_path = ${s.path}\n`;
  return `sql_driver = pgsql
pgsql ${s.host} {
  parameters {
    port = ${s.port}
    dbname = ${quote24(s.dbname)}
    user = ${quote24(s.user)}
    password = ${quote24(s.password)}
${s.sslRootCert ? REMOTE_PQ.map(([k, v]) => `    ${k} = ${k === 'sslrootcert' ? quote24(s.sslRootCert!) : v}\n`).join('') : ''}  }
}
`;
}

/** A value in double quotes when it holds what the 2.4 parser would read otherwise. */
const quote24 = (v: string) => (/^[A-Za-z0-9._/:+@-]+$/.test(v) ? v : `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`);

const indent = (text: string, n: number) =>
  text
    .split('\n')
    .map((l) => (l ? ' '.repeat(n) + l : l))
    .join('\n');
