// The typed renderer of a mail node's files (docs/decisions/0018-nodes-on-debian.md "One renderer,
// two profiles"): one function per daemon file, the facts from a profile.
import type { MailFacts } from './facts.js';
import { dovecotConf23 } from './dovecot23.js';
import { dovecotConf24 } from './dovecot24.js';

export type { MailFacts, MailStore, DovecotVersion, Endpoint, RspamdFacts } from './facts.js';
export { dovecotSqlConf, dovecotSqlAppConf, dovecotDictSieveConf } from './dovecot23.js';
export { postfixMainCf, postfixMasterCf, postfixMap, type PostfixMap } from './postfix.js';
export { rspamdConf, rspamdHostplaneConf, rspamdOptions } from './rspamd.js';
export { mailFiles, type RenderedFile } from './files.js';
export { privateFacts, systemFacts, type Profile } from './profiles.js';
export { readPrivateInput, readSystemInput, readKnotInput, readMailPolicyConfig, FactsError, type PrivateInput, type SystemInput } from './input.js';
export { knotConf, type KnotFacts } from './knot.js';
export { mailPolicyConf, mailPolicyConfig, type MailPolicyConfig } from './mail-policy.js';

/** dovecot.conf in the syntax of the node's Dovecot (2.4 holds the SQL in it; 2.3 in sql*.conf.ext). */
export const dovecotConf = (f: MailFacts): string => (f.dovecot.version === '2.3' ? dovecotConf23(f) : dovecotConf24(f));
