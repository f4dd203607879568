// `hostplane migrate`: brings the database named by DATABASE_URL to the newest schema. `serve`
// does the same at start; this command lets an operator run it once before starting N instances.
import { Command } from 'commander';
import { migrate } from '../db/migrate.js';
import { printJson, withStore } from './context.js';

export function migrateCommand(): Command {
  return new Command('migrate')
    .description('apply pending database migrations (DATABASE_URL)')
    .option('--json', 'print {"database":…,"applied":[…]}')
    .action((o: { json?: boolean }) =>
      withStore(async ({ store }) => {
        const applied = await migrate(store);
        if (o.json) return printJson({ database: store.where, applied });
        process.stdout.write(
          applied.length ? `Applied to ${store.where}: ${applied.join(', ')}\n` : `${store.where} is up to date.\n`,
        );
      }),
    );
}
