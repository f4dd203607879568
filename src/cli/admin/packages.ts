// `hostplane admin package …`: hosting packages, a customer's contract for a plan (API guide
// "Packages"; a plan change resets base DNS records, API guide "DNS records").
import { Command } from 'commander';
import { parseId, withStore, type CliIo } from '../context.js';
import { leaf, listLeaf, packageView, printResult, type Json } from './views.js';

export function packageCommand(io: CliIo): Command {
  const pkg = new Command('package').description('hosting packages (a customer\'s contract for a plan)');
  leaf(pkg.command('create').description('create a package'))
    .requiredOption('--customer <id>', 'customer id', parseId)
    .requiredOption('--plan <id>', 'plan id', parseId)
    .requiredOption('--name <name>', 'package name')
    .option('--linux-user <user>', 'Linux user of the webspace [generated]')
    .option('--web-server <name>', 'the web server of its sites [the default web server at its first subdomain]')
    .option('--mail-server <name>', 'the mail server of its e-mail addresses [the default mail server at its first address]')
    .action((o: Json & { customer: number; plan: number; name: string; linuxUser?: string; webServer?: string; mailServer?: string }) =>
      withStore(io, async ({ admin, out }) => {
        const { packageId } = await admin.packages.createPackage({ customerId: o.customer, planId: o.plan, name: o.name, linuxUser: o.linuxUser, webServer: o.webServer, mailServer: o.mailServer });
        const p = packageView(await admin.packages.package(packageId));
        printResult(out, o, p, `Created package ${p.id} (Linux user ${p.linux_user}).\n`);
      }),
    );
  leaf(pkg.command('set-plan').description('move a package to another plan; resets base DNS records unless a domain\'s dns_update_lock is on'))
    .requiredOption('--package <id>', 'package id', parseId)
    .requiredOption('--plan <id>', 'the new plan', parseId)
    .action((o: Json & { package: number; plan: number }) =>
      withStore(io, async ({ admin, out }) => {
        const r = await admin.packages.setPackagePlan(o.package, o.plan);
        if (o.json) return out.json({ package_id: String(r.packageId), plan_id: String(r.planId), domains: r.domains });
        out.text(`Package ${r.packageId} now uses plan ${r.planId}.\n`);
        for (const d of r.domains) {
          out.text(
            d.base_records === 'locked'
              ? `  ${d.domain}: base records kept (dns_update_lock is on)\n`
              : `  ${d.domain}: base records reset (${d.removed} removed, ${d.inserted} added${d.skipped ? `, ${d.skipped} left out: they clash with kept records` : ''})\n`,
          );
        }
      }),
    );
  listLeaf(pkg, io, 'list packages', async (admin) => (await admin.packages.listPackages()).map(packageView), [
    'id', 'name', 'customer_id', 'plan_id', 'linux_user',
  ]);
  return pkg;
}
