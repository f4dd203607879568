// `hostplane migrate`: brings the database named by DATABASE_URL to the newest schema. `serve`
// does the same at start; this command lets an operator run it once before starting N instances.
import { Command } from 'commander';
import { migrate } from '../db/migrate.js';
import { withStore, type CliIo } from './context.js';

export function migrateCommand(io: CliIo): Command {
  return new Command('migrate')
    .description('apply pending database migrations (DATABASE_URL)')
    .option('--json', 'print {"database":…,"applied":[…]}')
    .action((o: { json?: boolean }) =>
      withStore(io, async ({ store, out }) => {
        const applied = await migrate(store);
        if (o.json) return out.json({ database: store.where, applied });
        out.text(
          applied.length ? `Applied to ${store.where}: ${applied.join(', ')}\n` : `${store.where} is up to date.\n`,
        );
      }),
    );
}
