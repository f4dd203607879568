// GET/HEAD /internal/rspamd-settings: the settings map a mail server's rspamd polls to learn each
// address's antispam mode (rules hp_rewrite > hp_mark > hp_none, `reject` by default: decision
// 0011), served as every map of a mail server is (email-addresses.mail-server-map.ts).
import type { FastifyInstance } from 'fastify';
import type { Store } from '../../db/index.js';
import { EmailAddressesRepository, type AntispamModeRow } from './email-addresses.repository.js';
import { mailServerMap } from './email-addresses.mail-server-map.js';

type Row = AntispamModeRow;

/** The rules, highest priority first; the score is the default reject score (hostplane.conf). */
const RULES: Array<{ name: string; priority: number; has: (r: Row) => boolean; apply: string }> = [
  {
    name: 'hp_rewrite',
    priority: 30,
    has: (r) => r.kind === 'forward' && r.antispam === 'subject-rewrite',
    apply: 'actions { reject = null; "add header" = null; "rewrite subject" = 15.0; } subject = "***SPAM*** %s";',
  },
  {
    name: 'hp_mark',
    priority: 20,
    has: (r) => r.kind === 'mailbox',
    apply: 'actions { reject = null; "rewrite subject" = null; "add header" = 15.0; }',
  },
  {
    name: 'hp_none',
    priority: 10,
    has: (r) => r.kind === 'forward' && r.antispam === 'none',
    apply: 'actions { reject = null; "add header" = null; "rewrite subject" = null; }',
  },
];

/**
 * The settings map (UCL) for these addresses (stored form: lower case, ACE; none in `reject`): one
 * rule per kind of treatment that has any, `{}` when none has (rspamd then drops the rules it had;
 * an empty answer it would not take as a change).
 * `rspamdSettings([{ address: 'a@b.example', kind: 'forward', antispam: 'none' }])`.
 */
export function rspamdSettings(rows: Row[]): string {
  const out: string[] = [];
  for (const rule of RULES) {
    const rcpt = rows.filter(rule.has).map((r) => JSON.stringify(r.address));
    if (!rcpt.length) continue;
    out.push(`${rule.name} {\n  priority = ${rule.priority};\n  rcpt = [${rcpt.join(', ')}];\n  apply { ${rule.apply} }\n}\n`);
  }
  return out.length ? out.join('') : '{}\n';
}

export function rspamdSettingsRoute(app: FastifyInstance, store: Store): void {
  mailServerMap(app, store, '/internal/rspamd-settings', async (server) => rspamdSettings(await new EmailAddressesRepository(store.db).antispamModesOn(server)));
}
