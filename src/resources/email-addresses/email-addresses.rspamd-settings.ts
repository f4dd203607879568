// GET/HEAD /internal/rspamd-settings: the settings map a mail server's rspamd polls to learn each
// address's antispam mode (rules hp_rewrite > hp_mark > hp_none, `reject` by default: decision
// 0011), served as every map of a mail server is (email-addresses.mail-server-map.ts); a change that
// alters a server's map bumps its version (decision 0019).
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { Store } from '../../db/index.js';
import type { Database } from '../../db/schema.js';
import { MapVersionsRepository } from '../../provisioning/mail/map-versions.repository.js';
import type { VersionedMaps } from '../../provisioning/mail/versioned-map.js';
import { mailServerMap } from './email-addresses.mail-server-map.js';
import { EmailAddressesRepository, type AntispamModeRow, type EmailAddressRow } from './email-addresses.repository.js';

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

/** The rule an address is in (null: `reject`, in none); its map changes when this does. */
export function settingsRuleOf(a: Pick<EmailAddressRow, 'kind' | 'antispam'>): string | null {
  const antispam = a.antispam;
  if (antispam === 'reject') return null;
  return RULES.find((r) => r.has({ address: '', kind: a.kind, antispam }))?.name ?? null;
}

/**
 * In the transaction of a change of an address on `server`: bumps the server's settings map when
 * the address moves between rules (`before` undefined: it is new; `after` undefined: it goes), and
 * answers the version to wait for, or undefined when the map stays as it was.
 */
export async function bumpSettings(
  trx: Kysely<Database>,
  server: string,
  before: Pick<EmailAddressRow, 'kind' | 'antispam'> | undefined,
  after: Pick<EmailAddressRow, 'kind' | 'antispam'> | undefined,
): Promise<number | undefined> {
  const was = before ? settingsRuleOf(before) : null;
  const is = after ? settingsRuleOf(after) : null;
  return was === is ? undefined : new MapVersionsRepository(trx).bump(server, 'settings');
}

export function rspamdSettingsRoute(app: FastifyInstance, store: Store, maps: VersionedMaps): void {
  mailServerMap(app, store, maps, '/internal/rspamd-settings', 'settings', async (db, server) => rspamdSettings(await new EmailAddressesRepository(db).antispamModesOn(server)));
}
