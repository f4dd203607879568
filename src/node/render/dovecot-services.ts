// The services of hostplane's Dovecot, the same in 2.3 and 2.4 but for the name of a listener's
// address (2.3 `address`, 2.4 `listen`): IMAP (imaps only with TLS), LMTP for Postfix, the doveadm
// HTTP API for hostplane; POP3 and submission off.
import type { MailFacts } from './facts.js';

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
  }
}
service auth-worker {
  user = ${reader}
}
service anvil {
  unix_listener anvil-auth-penalty {
    mode = ${d.loginPenalty ? '0600' : '0'}
  }
}
`;
}
