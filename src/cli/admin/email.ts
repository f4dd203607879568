// `hostplane admin email …`: operator actions on e-mail addresses (issue 10 item 6).
// `refresh-usage` measures every live mailbox now, as the daily scheduled job does.
import { Command } from 'commander';
import { CliError, withStore, type CliIo } from '../context.js';
import { dovecotMailDriver } from '../../provisioning/mail/driver.js';
import { refreshEmailUsage, usageFailures } from '../../resources/email-addresses/email-addresses.usage.js';
import { leaf, printResult, type Json } from './views.js';

export function emailCommand(io: CliIo): Command {
  const cmd = new Command('email').description('e-mail addresses');

  leaf(cmd.command('refresh-usage').description("measure every mailbox's usage now (the worker does it daily); exits 1 if a mail server did not answer"))
    .action((o: Json) =>
      withStore(io, async ({ store, out }) => {
        const driver = dovecotMailDriver();
        try {
          const r = await refreshEmailUsage(store, driver);
          const total = r.measured.reduce((n, m) => n + m.count, 0);
          const per = r.measured.map((m) => `${m.server}: ${m.count}`).join(', ');
          const view = { measured: r.measured.map((m) => ({ server: m.server, mailboxes: m.count })), failed: r.failed };
          printResult(out, o, view, `Measured ${total} mailbox${total === 1 ? '' : 'es'}${per ? ` (${per})` : ''}.\n`);
          const failed = usageFailures(r);
          if (failed) throw new CliError(`${failed}; their last figures stay`, 'unreachable');
        } finally {
          await driver.close();
        }
      }),
    );
  return cmd;
}
