// `hostplane admin domain …`: domains registered with the service, used in a package (presence),
// or both (API guide "Domains").
import { Command } from 'commander';
import { parseId, withStore, type CliIo } from '../context.js';
import { domainView, leaf, listLeaf, printResult, type Json } from './views.js';

export function domainCommand(io: CliIo): Command {
  const domain = new Command('domain').description('domains: registered with the service, used in a package (presence), or both');
  leaf(domain.command('create').description('add a domain'))
    .requiredOption('--name <domain>', 'domain name (Unicode or ACE)')
    .requiredOption('--customer <id>', 'owner', parseId)
    .option('--package <id>', 'use it in this package of the owner (presence)', parseId)
    .option('--registered', 'registered with the service (expires in one year)')
    .action((o: Json & { name: string; customer: number; package?: number; registered?: boolean }) =>
      withStore(io, async ({ admin, out }) => {
        const { domain: name } = await admin.domains.createDomain({ name: o.name, customerId: o.customer, packageId: o.package ?? null, registered: o.registered ?? false });
        const d = domainView(await admin.domains.domain(name));
        const parts = [d.registered && 'registered', d.presence && `in package ${d.package_id}`].filter(Boolean).join(', ');
        printResult(out, o, d, `Created domain ${d.id} (${parts}).\n`);
      }),
    );
  listLeaf(domain, io, 'list domains', async (admin) => (await admin.domains.listDomains()).map(domainView), [
    'id', 'name', 'customer_id', 'package_id', 'registered', 'presence', 'expires_at',
  ]);
  return domain;
}
