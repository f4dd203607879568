// `hostplane admin subdomain create`: subdomains made in the customer menu (API guide
// "Subdomains"). The menu alone can make a redirect without a target (an uninitialized redirect),
// which the API shows as `"redirect":null` until a PATCH sets `redirect.target`.
import { Command } from 'commander';
import { withStore, type CliIo } from '../context.js';
import { leaf, printResult, type Json } from './views.js';

export function subdomainCommand(io: CliIo): Command {
  const cmd = new Command('subdomain').description('subdomains, as the customer menu makes them');
  leaf(cmd.command('create').description('create a subdomain; a redirect without --target is left uninitialized'))
    .requiredOption('--domain <domain>', 'a presence domain')
    .requiredOption('--subdomain <label>', 'the label(s) in front of the domain, e.g. blog')
    .requiredOption('--type <type>', 'webspace, redirect or email')
    .option('--target <url>', 'redirect: the target URL')
    .option('--dynamic', 'redirect: keep the request path (the target must end with /)')
    .option('--path <path>', 'webspace: the document directory relative to the home, e.g. /htdocs/')
    .option('--php <version>', 'webspace: the PHP version [the package default]')
    .option('--description <text>', 'free text')
    .action((o: Json & { domain: string; subdomain: string; type: string; target?: string; dynamic?: boolean; path?: string; php?: string; description?: string }) =>
      withStore(io, async ({ admin, out }) => {
        const { row, job } = await admin.domains.createSubdomain(o);
        const fqdn = `${row.name}.${row.domain}`;
        const view = { id: String(row.id), fqdn, subdomain_type: row.kind, initialized: row.kind !== 'redirect' || row.redirect_target !== null, queue_job: String(job.id) };
        printResult(out, o, view, `Created subdomain ${row.id} (${fqdn}, ${row.kind}${view.initialized ? '' : ', no target yet'}); job ${job.id} makes it live.\n`);
      }),
    );
  return cmd;
}
