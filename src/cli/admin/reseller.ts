// `hostplane admin reseller …`: reseller settings; the legacy API password (API guide
// "Authentication") is printed once when generated and stored only as a hash. A chosen password
// comes from `--password` or, out of the shell history and `ps`, from stdin (`--password-stdin`).
import { Command, Option } from 'commander';
import { parseId, readSecret, withStore, type CliIo } from '../context.js';
import { leaf, printResult, type Json } from './views.js';

export function resellerCommand(io: CliIo): Command {
  const reseller = new Command('reseller').description('reseller settings');
  leaf(reseller.command('set-legacy-password').description('set the legacy API password (Basic auth on /domain-availability only)'))
    .requiredOption('--customer <id>', 'the reseller\'s customer id', parseId)
    .option('--password <password>', 'use this password (at least 12 characters) instead of a generated one; others can see it in `ps`, so prefer --password-stdin')
    .addOption(new Option('--password-stdin', 'read the password from stdin (one line) instead of the command line').conflicts('password'))
    .action(async (o: Json & { customer: number; password?: string; passwordStdin?: boolean }) => {
      // Read before the database is opened: nothing is held while a person types.
      const chosen = o.passwordStdin ? await readSecret(io, '--password-stdin') : o.password;
      await withStore(io, async ({ admin, out }) => {
        let generated: string | null = null;
        if (chosen !== undefined) await admin.customers.setLegacyPassword(o.customer, chosen);
        else generated = await admin.customers.setGeneratedLegacyPassword(o.customer);
        const customerId = String(o.customer);
        printResult(
          out,
          o,
          { customer_id: customerId, generated: generated !== null, legacy_password: generated },
          generated === null
            ? `Set the legacy password of reseller ${customerId}.\n`
            : `Legacy password of reseller ${customerId} (Basic auth user ${customerId}):\n\n  ${generated}\n\nStore it now: it is shown only this once.\n`,
        );
      });
    });
  return reseller;
}
