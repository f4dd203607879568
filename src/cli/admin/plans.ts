// `hostplane admin plan …`: hosting plans and their limits (API guide "Plans"), the DMARC policy
// their domains publish (API guide "DNS records") and the recipients per mailbox and hour that
// reach its mailboxes at once (docs/decisions/0020-outbound-limits.md), and the SSH keys its packages
// may hold (API guide "SSH keys").
import { Command, InvalidArgumentError } from 'commander';
import { CliError, parseCount, parseId, parseList, withStore, type CliIo } from '../context.js';
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

/** commander argument parser for `--recipients-per-hour`: 1 to 1,000,000 (the service checks it too). */
function parseRecipientsPerHour(value: string): number {
  if (!/^[0-9]{1,7}$/.test(value) || Number(value) < 1 || Number(value) > 1_000_000) {
    throw new InvalidArgumentError('must be a whole number from 1 to 1000000.');
  }
  return Number(value);
}

/** commander argument parser for `--ssh-keys-per-package`: 0 to 1000 (the service checks it too). */
function parseSshKeysPerPackage(value: string): number {
  if (!/^[0-9]{1,4}$/.test(value) || Number(value) > 1000) throw new InvalidArgumentError('must be a whole number from 0 to 1000.');
  return Number(value);
}

/** A plan for people: its name, then one limit per line. */
function planText(p: ReturnType<typeof planView>): string {
  const { id, name, ...rest } = p;
  const width = Math.max(...Object.keys(rest).map((k) => k.length));
  const value = (v: unknown) => (v === null ? '-' : Array.isArray(v) ? v.join(',') : String(v));
  return `Plan ${id} (${name})\n${Object.entries(rest).map(([k, v]) => `  ${k.padEnd(width)}  ${value(v)}\n`).join('')}`;
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
    .option('--recipients-per-hour <n>', 'recipients each mailbox may send to per hour through authenticated SMTP [500]', parseRecipientsPerHour)
    .option('--ssh-keys-per-package <n>', 'SSH keys a package may hold for SFTP logins [10]', parseSshKeysPerPackage)
    .action(
      (o: Json & {
        name: string; maxDatabases?: number; maxEmailAddresses?: number; mailboxQuotaMb?: number; maxSubdomains?: number;
        webspaceMb?: number; databaseVersions?: string[]; phpVersions?: string[]; resellerId?: number; dnsTemplate?: unknown[]; dmarcPolicy?: string;
        recipientsPerHour?: number; sshKeysPerPackage?: number;
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
            recipientsPerHour: o.recipientsPerHour,
            sshKeysPerPackage: o.sshKeysPerPackage,
          });
          const p = planView(await admin.packages.plan(planId));
          printResult(out, o, p, `Created plan ${p.id} (${p.name}).\n`);
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
    'id', 'name', 'reseller_id', 'max_databases', 'max_email_addresses', 'max_subdomains', 'webspace_mb', 'php_versions', 'dmarc_policy', 'recipients_per_hour', 'ssh_keys_per_package',
  ]);
  leaf(plan.command('show').description('show one plan with all its limits'))
    .argument('<id>', 'plan id', parseId)
    .action((id: number, o: Json) =>
      withStore(io, async ({ admin, out }) => {
        const p = planView(await admin.packages.plan(id));
        printResult(out, o, p, planText(p));
      }),
    );
  leaf(plan.command('set').description("change a plan's settings; its packages follow at once (mailboxes from their next message, SSH keys from the next one added)"))
    .argument('<id>', 'plan id', parseId)
    .option('--recipients-per-hour <n>', 'recipients each mailbox may send to per hour through authenticated SMTP; more are deferred (4xx) until the hour allows them', parseRecipientsPerHour)
    .option('--ssh-keys-per-package <n>', 'SSH keys a package may hold; a package holding more keeps them but cannot add another', parseSshKeysPerPackage)
    .action((id: number, o: Json & { recipientsPerHour?: number; sshKeysPerPackage?: number }) =>
      withStore(io, async ({ admin, out }) => {
        if (o.recipientsPerHour === undefined && o.sshKeysPerPackage === undefined) {
          throw new CliError('Give --recipients-per-hour <n> or --ssh-keys-per-package <n> (or both).', 'usage');
        }
        const lines: string[] = [];
        if (o.recipientsPerHour !== undefined) {
          const r = await admin.packages.setPlanRecipientsPerHour(id, o.recipientsPerHour);
          const follow = r.mailboxes === 0 ? 'no mailbox has it yet' : r.mailboxes === 1 ? '1 mailbox follows from its next message on' : `${r.mailboxes} mailboxes follow from their next message on`;
          lines.push(`${o.recipientsPerHour} recipients per mailbox and hour (was ${r.was}); ${follow}.`);
        }
        if (o.sshKeysPerPackage !== undefined) {
          const r = await admin.packages.setPlanSshKeysPerPackage(id, o.sshKeysPerPackage);
          lines.push(`${o.sshKeysPerPackage} SSH key${o.sshKeysPerPackage === 1 ? '' : 's'} per package (was ${r.was}).`);
        }
        const p = planView(await admin.packages.plan(id));
        printResult(out, o, p, lines.map((l) => `Plan ${p.id} (${p.name}): ${l}\n`).join(''));
      }),
    );
  return plan;
}
