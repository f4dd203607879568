// What scripts see from `hostplane admin … --json` (ids as strings, like the API), and the small
// helpers every admin leaf command shares.
import { Command } from 'commander';
import type { Selectable } from 'kysely';
import type { Database } from '../../db/schema.js';
import { planAttributes } from '../../resources/plans/plans.schema.js';
import type { Admin } from '../../admin/index.js';
import { withStore, type CliIo, type Output } from '../context.js';
import { describeStoredScope, type StoredScope } from '../../admin/token-options.js';

type Row<T extends keyof Database> = Selectable<Database[T]>;
const str = (id: number | null | undefined) => (id === null || id === undefined ? null : String(id));

export function customerView(c: {
  id: number; organization: string | null; name: string | null; email: string | null; phone: string | null;
  is_reseller: number; reseller_id: number | null; is_login_disabled: number; external_customer_id: string | null;
  legacy_password_hash: string | null; contact_id: number | null; created_at: string;
}) {
  return {
    id: String(c.id),
    organization: c.organization,
    name: c.name,
    email: c.email,
    phone: c.phone,
    is_reseller: c.is_reseller === 1,
    reseller_id: str(c.reseller_id),
    is_login_disabled: c.is_login_disabled === 1,
    external_customer_id: c.external_customer_id,
    has_legacy_password: c.legacy_password_hash !== null,
    main_contact_id: str(c.contact_id),
    created_at: c.created_at,
  };
}

export const contactView = (c: Row<'contacts'>) => ({
  id: String(c.id),
  customer_id: String(c.customer_id),
  name: c.name,
  email: c.email,
  phone: c.phone,
  is_main: c.is_main === 1,
  created_at: c.created_at,
});

// Never the hash: the prefix is enough to recognise a token in a secret scanner's report. `scope`
// says its limits in a word or a few (API guide "Scoped tokens"); the members after it, one each.
export const tokenView = (t: {
  id: number; contact_id: number; customer_id: number; token_prefix: string; label: string | null; created_at: string; revoked_at: string | null;
  last_used_at: string | null;
} & StoredScope) => ({
  id: String(t.id),
  contact_id: String(t.contact_id),
  customer_id: String(t.customer_id),
  prefix: t.token_prefix,
  label: t.label,
  scope: describeStoredScope(t),
  read_only: t.read_only === 1,
  domains: t.scope_domains === null ? null : t.scope_domains.split(','),
  acme_challenge: t.acme_challenge === 1,
  allow_ips: t.allow_ips === null ? null : t.allow_ips.split(','),
  expires_at: t.expires_at,
  last_used_at: t.last_used_at,
  created_at: t.created_at,
  revoked_at: t.revoked_at,
});

export const planView = (p: Row<'plans'>) => ({
  id: String(p.id),
  ...planAttributes(p),
  dmarc_policy: p.dmarc_policy,
  reseller_id: str(p.reseller_id),
  created_at: p.created_at,
});

export const packageView = (p: Row<'packages'>) => ({
  id: String(p.id),
  name: p.name,
  customer_id: String(p.customer_id),
  plan_id: String(p.plan_id),
  linux_user: p.linux_user,
  web_server: p.web_server_name,
  mail_server: p.mail_server_name,
  created_at: p.created_at,
});

export const domainView = (d: Row<'domains'>) => ({
  id: d.name,
  name: d.name_unicode,
  customer_id: String(d.customer_id),
  package_id: str(d.package_id),
  registered: d.is_registered === 1,
  expires_at: d.registration_expires_at,
  presence: d.has_presence === 1,
  created_at: d.created_at,
});

// ---- shared by the commands --------------------------------------------------------------------

export interface Json {
  json?: boolean;
}

/** A leaf command: every one of them offers `--json`. */
export function leaf(cmd: Command) {
  return cmd.option('--json', 'print one compact JSON value for scripts');
}

/** One result: `value` with `--json` (a created object as its list shows it), `text` for people. */
export function printResult(out: Output, o: Json, value: unknown, text: string) {
  if (o.json) out.json(value);
  else out.text(text);
}

/** A list command's result: the rows with `--json`, a table of `columns` for people. */
export function printList(out: Output, o: Json, rows: Record<string, unknown>[], columns: string[]) {
  if (o.json) out.json(rows);
  else out.table(rows, columns);
}

/** `<noun> list` without filters: `listLeaf(plan, io, 'list plans', async (a) => (await a.listPlans()).map(planView), columns)`. */
export function listLeaf(
  parent: Command,
  io: CliIo,
  description: string,
  rows: (admin: Admin) => Promise<Record<string, unknown>[]>,
  columns: string[],
) {
  return leaf(parent.command('list').description(description)).action((o: Json) =>
    withStore(io, async ({ admin, out }) => printList(out, o, await rows(admin), columns)),
  );
}
