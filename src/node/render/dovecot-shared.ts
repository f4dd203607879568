// What hostplane's Dovecot 2.3 and 2.4 configurations share, in either's words: the base settings
// (listening, directories, logins, the mail owner) and the services (IMAP, imaps only with TLS,
// LMTP for Postfix, the doveadm HTTP API, over HTTPS with TLS, SASL for Postfix's submission;
// POP3 and Dovecot's own submission off).
import { saslSocket, type MailFacts } from './facts.js';

/** `tls` is the version's TLS lines; the login name is lowered by `usernameFormat` (2.3 `%Lu`). */
export function dovecotBase(f: MailFacts, tls: string, usernameFormat: string): string {
  const d = f.dovecot;
  return `protocols = imap lmtp
listen = ${d.listen}
base_dir = ${d.baseDir}
state_dir = ${d.stateDir}
instance_name = ${d.instance}
${d.logPath === null ? '' : `log_path = ${d.logPath}\n`}${tls}auth_mechanisms = plain login
auth_failure_delay = ${d.authFailureDelay === 0 ? '0' : `${d.authFailureDelay} secs`}
auth_verbose = yes
auth_verbose_passwords = no
# Addresses are stored in lower case; the login name is lowered the same way.
auth_username_format = ${usernameFormat}
# b+tag@example.com is b@example.com (Postfix's recipient_delimiter is the same).
recipient_delimiter = +

mail_uid = ${f.mail.user}
mail_gid = ${f.mail.group}
first_valid_uid = ${f.mail.uid}
first_valid_gid = ${f.mail.gid}
`;
}

/** A listener's address is `address` in 2.3, `listen` in 2.4. */
export function dovecotServices(f: MailFacts, reader: string, key: 'address' | 'listen'): string {
  const d = f.dovecot;
  return `service imap-login {
  inet_listener imap {
    ${key} = ${d.listen}
    port = ${d.imap}
  }
  inet_listener imaps {
    port = ${d.imaps ?? 0}
  }
}
service pop3-login {
  inet_listener pop3 {
    port = 0
  }
  inet_listener pop3s {
    port = 0
  }
}
service submission-login {
  inet_listener submission {
    port = 0
  }
}
service lmtp {
  inet_listener lmtp {
    ${key} = ${d.lmtp.address}
    port = ${d.lmtp.port}
  }
}
service doveadm {
  inet_listener http {
    ${key} = ${d.doveadm.address}
    port = ${d.doveadm.port}
${f.tls ? '    # The API key crosses the network: HTTPS with the certificate of IMAP.\n    ssl = yes\n' : ''}  }
}
${saslListener(f)}service auth-worker {
  user = ${reader}
}
service anvil {
  unix_listener anvil-auth-penalty {
    mode = ${d.loginPenalty ? '0600' : '0'}
  }
}
`;
}

/** Postfix's submission services ask Dovecot's auth about logins (the passdbs of IMAP, its penalty). */
function saslListener(f: MailFacts): string {
  if (!f.postfix.submission) return '';
  return `service auth {
  unix_listener ${saslSocket(f)} {
    mode = 0660
    user = postfix
    group = postfix
  }
}
`;
}
