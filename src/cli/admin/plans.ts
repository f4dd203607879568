// `hostplane admin plan …`: hosting plans and their limits (API guide "Plans").
import { Command, InvalidArgumentError } from 'commander';
import { parseCount, parseId, parseList, withStore, type CliIo } from '../context.js';
import { leaf, listLeaf, planView, printResult, type Json } from './views.js';

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

export function planCommand(io: CliIo): Command {
  const plan = new Command('plan').description('hosting plans and their limits');
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
        withStore(io, async ({ admin, out }) => {
          const { planId } = await admin.packages.createPlan({
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
          const p = planView(await admin.packages.plan(planId));
          printResult(out, o, p, `Created plan ${p.id} (${p.name}).\n`);
        }),
    );
  listLeaf(plan, io, 'list plans', async (admin) => (await admin.packages.listPlans()).map(planView), [
    'id', 'name', 'reseller_id', 'max_databases', 'max_email_addresses', 'max_subdomains', 'webspace_mb', 'php_versions',
  ]);
  return plan;
}
