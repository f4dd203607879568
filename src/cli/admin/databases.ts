// `hostplane admin database …`: operator actions on customer databases. `refresh-usage` measures
// now, so an operator need not wait a day after moving data (or after a first install).
import { Command } from 'commander';
import type { CliIo } from '../context.js';
import { mysqlDatabaseDriver } from '../../provisioning/databases/driver.js';
import { refreshDatabaseUsage } from '../../resources/databases/databases.usage.js';
import { refreshUsageCommand } from './usage.js';

export function databaseCommand(io: CliIo): Command {
  const cmd = new Command('database').description('customer databases');
  refreshUsageCommand(cmd, io, {
    what: ['database', 'databases'],
    describe: 'measure the size of every database now (the worker does it daily); exits 1 if a server did not answer',
    driver: mysqlDatabaseDriver,
    refresh: refreshDatabaseUsage,
  });
  return cmd;
}
