// The config file of the mail policy service (`hostplane node mail-policy --config <file>`,
// docs/decisions/0020-outbound-limits.md): the server's name, where it listens and the store as the
// mail server reads it (the read-only role; the same facts Dovecot's and Postfix's SQL use).
import type { MailFacts, MailStore } from './facts.js';

export interface MailPolicyConfig {
  /** The registered mail server name: it reads only this server's rows. */
  name: string;
  /** host:port on loopback; Postfix's submission services ask there. */
  listen: string;
  store: MailStore;
}

export function mailPolicyConfig(f: MailFacts): MailPolicyConfig {
  return { name: f.name, listen: `${f.policy.listen.address}:${f.policy.listen.port}`, store: f.store };
}

/** The file's text: JSON, one key a line, as an operator reads it. */
export const mailPolicyConf = (f: MailFacts): string => `${JSON.stringify(mailPolicyConfig(f), null, 2)}\n`;
