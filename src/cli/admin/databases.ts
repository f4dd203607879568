// `hostplane admin database …`: operator actions on customer databases (issue 8 item 5).
// `refresh-usage` measures every live database now, as the daily scheduled job does, so an operator
// need not wait a day after moving data (or to see usage right after a first install).
import { Command } from 'commander';
import { CliError, withStore, type CliIo } from '../context.js';
import { mysqlDatabaseDriver } from '../../provisioning/databases/driver.js';
import { refreshDatabaseUsage, usageFailures } from '../../resources/databases/databases.usage.js';
import { leaf, printResult, type Json } from './views.js';

export function databaseCommand(io: CliIo): Command {
  const cmd = new Command('database').description('customer databases');

  leaf(cmd.command('refresh-usage').description('measure the size of every database now (the worker does it daily); exits 1 if a server did not answer'))
    .action((o: Json) =>
      withStore(io, async ({ store, out }) => {
        const driver = mysqlDatabaseDriver();
        try {
          const r = await refreshDatabaseUsage(store, driver);
          const total = r.measured.reduce((n, m) => n + m.databases, 0);
          const per = r.measured.map((m) => `${m.server}: ${m.databases}`).join(', ');
          printResult(out, o, r, `Measured ${total} database${total === 1 ? '' : 's'}${per ? ` (${per})` : ''}.\n`);
          const failed = usageFailures(r);
          if (failed) throw new CliError(`${failed}; their last figures stay`, 'unreachable');
        } finally {
          await driver.close();
        }
      }),
    );
  return cmd;
}
