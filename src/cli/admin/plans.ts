// `hostplane admin plan …`: hosting plans and their limits (API guide "Plans"), and the DMARC
// policy their domains publish (API guide "DNS records").
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
    .option('--dmarc-policy <policy>', 'what its domains\' DMARC record asks receivers to do with mail that fails: none, quarantine or reject [quarantine]')
    .action(
      (o: Json & {
        name: string; maxDatabases?: number; maxEmailAddresses?: number; mailboxQuotaMb?: number; maxSubdomains?: number;
        webspaceMb?: number; databaseVersions?: string[]; phpVersions?: string[]; resellerId?: number; dnsTemplate?: unknown[]; dmarcPolicy?: string;
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
            dmarcPolicy: o.dmarcPolicy,
          });
          const p = planView(await admin.packages.plan(planId));
          printResult(out, o, p, `Created plan ${p.id} (${p.name}).\n`);
        }),
    );
  leaf(plan.command('show').description('show a plan, its limits and its DMARC policy'))
    .argument('<id>', 'plan id', parseId)
    .action((id: number, o: Json) =>
      withStore(io, async ({ admin, out }) => {
        const p = planView(await admin.packages.plan(id));
        printResult(out, o, p, `${Object.entries(p).map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(',') : (v ?? '-')}`).join('\n')}\n`);
      }),
    );
  leaf(plan.command('set-dmarc-policy').description("set the DMARC policy of a plan's domains (none, quarantine or reject); their _dmarc records follow unless a domain's dns_update_lock is on"))
    .argument('<id>', 'plan id', parseId)
    .argument('<policy>', 'none, quarantine or reject')
    .action((id: number, policy: string, o: Json) =>
      withStore(io, async ({ admin, out }) => {
        const r = await admin.packages.setDmarcPolicy(id, policy);
        if (o.json) return out.json({ plan_id: String(r.planId), dmarc_policy: r.dmarcPolicy, domains: r.domains });
        out.text(`Plan ${r.planId} now publishes DMARC policy ${r.dmarcPolicy}.\n`);
        for (const d of r.domains) {
          out.text(
            d.dmarc_record === 'updated'
              ? `  ${d.domain}: _dmarc updated\n`
              : d.dmarc_record === 'locked'
                ? `  ${d.domain}: _dmarc kept (dns_update_lock is on)\n`
                : `  ${d.domain}: no base _dmarc record (deleted, or the domain is older than DMARC records); its next base-record reset adds it\n`,
          );
        }
      }),
    );
  listLeaf(plan, io, 'list plans', async (admin) => (await admin.packages.listPlans()).map(planView), [
    'id', 'name', 'reseller_id', 'max_databases', 'max_email_addresses', 'max_subdomains', 'webspace_mb', 'php_versions', 'dmarc_policy',
  ]);
  return plan;
}
