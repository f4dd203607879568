// `hostplane admin …`: the operator's customer menu (spec §5.4–§5.6, issue 2 item 6). Thin over
// AdminService: parse, call, print. Every command prints for people by default and one compact
// JSON value with `--json` (ids as strings, like the API). A create command prints the object as
// the matching list command shows it, plus any one-time secret (`token`, `legacy_password`).
import { planAttributes } from '../resources/plans/plans.schema.js';
import { Command, InvalidArgumentError } from 'commander';
import type { Selectable } from 'kysely';
import type { Database } from '../db/schema.js';
import { parseCount, parseId, parseList, printJson, printTable, withStore } from './context.js';

/** commander argument parser for `--dns-template`: a JSON array. */
function parseJson(value: string): unknown[] {
  let v: unknown;
  try {
    v = JSON.parse(value);
  } catch {
    throw new InvalidArgumentError('must be JSON.');
  }
  if (!Array.isArray(v)) throw new InvalidArgumentError('must be a JSON array of records.');
  return v;
}

type Row<T extends keyof Database> = Selectable<Database[T]>;
const str = (id: number | null | undefined) => (id === null || id === undefined ? null : String(id));

// ---- what scripts see (`--json`) ------------------------------------------------------------

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

// Never the hash: the prefix is enough to recognise a token in a secret scanner's report.
export const tokenView = (t: {
  id: number; contact_id: number; customer_id: number; token_prefix: string; label: string | null; created_at: string; revoked_at: string | null;
}) => ({
  id: String(t.id),
  contact_id: String(t.contact_id),
  customer_id: String(t.customer_id),
  prefix: t.token_prefix,
  label: t.label,
  created_at: t.created_at,
  revoked_at: t.revoked_at,
});

export const planView = (p: Row<'plans'>) => ({
  id: String(p.id),
  ...planAttributes(p),
  reseller_id: str(p.reseller_id),
  created_at: p.created_at,
});

export const packageView = (p: Row<'packages'>) => ({
  id: String(p.id),
  name: p.name,
  customer_id: String(p.customer_id),
  plan_id: String(p.plan_id),
  linux_user: p.linux_user,
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

// ---- commands --------------------------------------------------------------------------------

interface Json {
  json?: boolean;
}

/** A leaf command: every one of them offers `--json`. */
function leaf(cmd: Command) {
  return cmd.option('--json', 'print one compact JSON value for scripts');
}

export function adminCommand(): Command {
  const admin = new Command('admin').description('operator actions: customers, contacts, tokens, plans, packages, domains');

  // customers -----------------------------------------------------------------------------------
  const customer = admin.command('customer').description('customers and their main contact');
  leaf(customer.command('create').description('create a customer with its main contact'))
    .option('--org <organization>', 'organization name')
    .requiredOption('--name <name>', 'main contact name')
    .requiredOption('--email <email>', 'main contact e-mail address')
    .option('--phone <phone>', 'main contact phone number')
    .option('--reseller', 'the customer is a reseller (may have end customers)')
    .option('--reseller-id <id>', 'make it an end customer of this reseller', parseId)
    .action((o: Json & { org?: string; name: string; email: string; phone?: string; reseller?: boolean; resellerId?: number }) =>
      withStore(async ({ admin }) => {
        const { customerId } = await admin.createCustomer({
          organization: o.org ?? null,
          reseller: o.reseller ?? false,
          resellerId: o.resellerId ?? null,
          contact: { name: o.name, email: o.email, phone: o.phone ?? null },
        });
        const c = customerView(await admin.customer(customerId));
        if (o.json) return printJson(c);
        process.stdout.write(`Created customer ${c.id} (main contact ${c.main_contact_id}).\n`);
      }),
    );
  leaf(customer.command('list').description('list customers'))
    .action((o: Json) =>
      withStore(async ({ admin }) => {
        const rows = (await admin.listCustomers()).map(customerView);
        if (o.json) return printJson(rows);
        printTable(rows, ['id', 'organization', 'name', 'email', 'is_reseller', 'reseller_id', 'main_contact_id', 'has_legacy_password']);
      }),
    );

  // contacts ------------------------------------------------------------------------------------
  const contact = admin.command('contact').description('contacts of a customer (tokens belong to contacts)');
  leaf(contact.command('create').description('add a contact to a customer'))
    .requiredOption('--customer <id>', 'customer id', parseId)
    .requiredOption('--name <name>', 'contact name')
    .requiredOption('--email <email>', 'contact e-mail address')
    .option('--phone <phone>', 'contact phone number')
    .action((o: Json & { customer: number; name: string; email: string; phone?: string }) =>
      withStore(async ({ admin }) => {
        const { contactId } = await admin.createContact(o.customer, { name: o.name, email: o.email, phone: o.phone ?? null });
        const c = contactView(await admin.contact(contactId));
        if (o.json) return printJson(c);
        process.stdout.write(`Created contact ${c.id} of customer ${c.customer_id}.\n`);
      }),
    );
  leaf(contact.command('list').description('list contacts'))
    .option('--customer <id>', 'only this customer\'s contacts', parseId)
    .action((o: Json & { customer?: number }) =>
      withStore(async ({ admin }) => {
        const rows = (await admin.listContacts(o.customer)).map(contactView);
        if (o.json) return printJson(rows);
        printTable(rows, ['id', 'customer_id', 'name', 'email', 'phone', 'is_main']);
      }),
    );
  leaf(contact.command('delete').description('delete a contact; its tokens stop working at once (spec §5.5)'))
    .argument('<id>', 'contact id', parseId)
    .action((id: number, o: Json) =>
      withStore(async ({ admin }) => {
        await admin.deleteContact(id);
        if (o.json) return printJson({ id: String(id), deleted: true });
        process.stdout.write(`Deleted contact ${id}; its tokens no longer work.\n`);
      }),
    );

  // tokens --------------------------------------------------------------------------------------
  const token = admin.command('token').description('API tokens of contacts (spec §5.4)');
  leaf(token.command('create').description('issue a token; it is printed once and stored only as a hash'))
    .requiredOption('--contact <id>', 'contact id', parseId)
    .option('--label <label>', 'what the token is for')
    .action((o: Json & { contact: number; label?: string }) =>
      withStore(async ({ admin }) => {
        const { tokenId, token: secret } = await admin.issueToken(o.contact, o.label ?? null);
        const t = tokenView(await admin.token(tokenId));
        if (o.json) return printJson({ ...t, token: secret });
        process.stdout.write(
          `Token ${t.id} for contact ${t.contact_id} (customer ${t.customer_id}):\n\n  ${secret}\n\n` +
            'Store it now: it is shown only this once. Use it as "Authorization: token <token>".\n',
        );
      }),
    );
  leaf(token.command('list').description('list tokens (prefix only; the secret is never stored)'))
    .option('--contact <id>', 'only this contact\'s tokens', parseId)
    .action((o: Json & { contact?: number }) =>
      withStore(async ({ admin }) => {
        if (o.contact !== undefined) await admin.contact(o.contact);
        const rows = (await admin.listTokens(o.contact)).map(tokenView);
        if (o.json) return printJson(rows);
        printTable(rows, ['id', 'contact_id', 'customer_id', 'prefix', 'label', 'created_at', 'revoked_at']);
      }),
    );
  leaf(token.command('revoke').description('revoke a token; it stops working at once'))
    .argument('<id>', 'token id', parseId)
    .action((id: number, o: Json) =>
      withStore(async ({ admin }) => {
        await admin.revokeToken(id);
        const t = tokenView(await admin.token(id));
        if (o.json) return printJson(t);
        process.stdout.write(`Revoked token ${t.id} (${t.prefix}…).\n`);
      }),
    );

  // plans ---------------------------------------------------------------------------------------
  const plan = admin.command('plan').description('hosting plans and their limits');
  leaf(plan.command('create').description('create a plan'))
    .requiredOption('--name <name>', 'plan name')
    .option('--max-databases <n>', 'databases per package [5]', parseCount)
    .option('--max-email-addresses <n>', 'e-mail addresses per package [50]', parseCount)
    .option('--mailbox-quota-mb <n>', 'mailbox quota in MB [2048]', parseCount)
    .option('--max-subdomains <n>', 'subdomains per package [20]', parseCount)
    .option('--webspace-mb <n>', 'webspace in MB [10240]', parseCount)
    .option('--database-versions <list>', 'comma-separated, e.g. mariadb-10.11,mysql-8.0 [mariadb-10.11]', parseList)
    .option('--php-versions <list>', 'comma-separated, e.g. 8.3,8.4 [8.3,8.4,8.5]', parseList)
    .option('--reseller-id <id>', 'a plan this reseller sells to its end customers', parseId)
    .option('--dns-template <json>', 'base DNS records of its domains, e.g. \'[{"name":"","record_type":"A","data":"192.0.2.10"}]\' [DNS_BASE_* settings]', parseJson)
    .action(
      (o: Json & {
        name: string; maxDatabases?: number; maxEmailAddresses?: number; mailboxQuotaMb?: number; maxSubdomains?: number;
        webspaceMb?: number; databaseVersions?: string[]; phpVersions?: string[]; resellerId?: number; dnsTemplate?: unknown[];
      }) =>
        withStore(async ({ admin }) => {
          const { planId } = await admin.createPlan({
            name: o.name,
            resellerId: o.resellerId ?? null,
            maxDatabases: o.maxDatabases,
            maxEmailAddresses: o.maxEmailAddresses,
            mailboxQuotaMb: o.mailboxQuotaMb,
            maxSubdomains: o.maxSubdomains,
            webspaceMb: o.webspaceMb,
            databaseVersions: o.databaseVersions,
            phpVersions: o.phpVersions,
            dnsTemplate: o.dnsTemplate,
          });
          const p = planView(await admin.plan(planId));
          if (o.json) return printJson(p);
          process.stdout.write(`Created plan ${p.id} (${p.name}).\n`);
        }),
    );
  leaf(plan.command('list').description('list plans'))
    .action((o: Json) =>
      withStore(async ({ admin }) => {
        const rows = (await admin.listPlans()).map(planView);
        if (o.json) return printJson(rows);
        printTable(rows, ['id', 'name', 'reseller_id', 'max_databases', 'max_email_addresses', 'max_subdomains', 'webspace_mb', 'php_versions']);
      }),
    );

  // packages ------------------------------------------------------------------------------------
  const pkg = admin.command('package').description('hosting packages (a customer\'s contract for a plan)');
  leaf(pkg.command('create').description('create a package'))
    .requiredOption('--customer <id>', 'customer id', parseId)
    .requiredOption('--plan <id>', 'plan id', parseId)
    .requiredOption('--name <name>', 'package name')
    .option('--linux-user <user>', 'Linux user of the webspace [generated]')
    .action((o: Json & { customer: number; plan: number; name: string; linuxUser?: string }) =>
      withStore(async ({ admin }) => {
        const { packageId } = await admin.createPackage({ customerId: o.customer, planId: o.plan, name: o.name, linuxUser: o.linuxUser });
        const p = packageView(await admin.package(packageId));
        if (o.json) return printJson(p);
        process.stdout.write(`Created package ${p.id} (Linux user ${p.linux_user}).\n`);
      }),
    );
  leaf(pkg.command('set-plan').description('move a package to another plan; resets base DNS records unless a domain\'s dns_update_lock is on (spec §4.3.6)'))
    .requiredOption('--package <id>', 'package id', parseId)
    .requiredOption('--plan <id>', 'the new plan', parseId)
    .action((o: Json & { package: number; plan: number }) =>
      withStore(async ({ admin }) => {
        const r = await admin.setPackagePlan(o.package, o.plan);
        if (o.json) return printJson({ package_id: String(r.packageId), plan_id: String(r.planId), domains: r.domains });
        process.stdout.write(`Package ${r.packageId} now uses plan ${r.planId}.\n`);
        for (const d of r.domains) {
          process.stdout.write(
            d.base_records === 'locked'
              ? `  ${d.domain}: base records kept (dns_update_lock is on)\n`
              : `  ${d.domain}: base records reset (${d.removed} removed, ${d.inserted} added${d.skipped ? `, ${d.skipped} left out: they clash with kept records` : ''})\n`,
          );
        }
      }),
    );
  leaf(pkg.command('list').description('list packages'))
    .action((o: Json) =>
      withStore(async ({ admin }) => {
        const rows = (await admin.listPackages()).map(packageView);
        if (o.json) return printJson(rows);
        printTable(rows, ['id', 'name', 'customer_id', 'plan_id', 'linux_user']);
      }),
    );

  // domains -------------------------------------------------------------------------------------
  const domain = admin.command('domain').description('domains: registered with the service, used in a package (presence), or both');
  leaf(domain.command('create').description('add a domain'))
    .requiredOption('--name <domain>', 'domain name (Unicode or ACE)')
    .requiredOption('--customer <id>', 'owner', parseId)
    .option('--package <id>', 'use it in this package of the owner (presence)', parseId)
    .option('--registered', 'registered with the service (expires in one year)')
    .action((o: Json & { name: string; customer: number; package?: number; registered?: boolean }) =>
      withStore(async ({ admin }) => {
        const { domain: name } = await admin.createDomain({ name: o.name, customerId: o.customer, packageId: o.package ?? null, registered: o.registered ?? false });
        const d = domainView(await admin.domain(name));
        if (o.json) return printJson(d);
        const parts = [d.registered && 'registered', d.presence && `in package ${d.package_id}`].filter(Boolean).join(', ');
        process.stdout.write(`Created domain ${d.id} (${parts}).\n`);
      }),
    );
  leaf(domain.command('list').description('list domains'))
    .action((o: Json) =>
      withStore(async ({ admin }) => {
        const rows = (await admin.listDomains()).map(domainView);
        if (o.json) return printJson(rows);
        printTable(rows, ['id', 'name', 'customer_id', 'package_id', 'registered', 'presence', 'expires_at']);
      }),
    );

  // resellers -----------------------------------------------------------------------------------
  const reseller = admin.command('reseller').description('reseller settings');
  leaf(reseller.command('set-legacy-password').description('set the legacy API password (Basic auth on /domain-availability only, spec §5.6)'))
    .requiredOption('--customer <id>', 'the reseller\'s customer id', parseId)
    .option('--password <password>', 'use this password (at least 12 characters) instead of a generated one')
    .action((o: Json & { customer: number; password?: string }) =>
      withStore(async ({ admin }) => {
        let generated: string | null = null;
        if (o.password !== undefined) await admin.setLegacyPassword(o.customer, o.password);
        else generated = await admin.setGeneratedLegacyPassword(o.customer);
        const customerId = String(o.customer);
        if (o.json) return printJson({ customer_id: customerId, generated: generated !== null, legacy_password: generated });
        process.stdout.write(
          generated === null
            ? `Set the legacy password of reseller ${customerId}.\n`
            : `Legacy password of reseller ${customerId} (Basic auth user ${customerId}):\n\n  ${generated}\n\nStore it now: it is shown only this once.\n`,
        );
      }),
    );

  return admin;
}
