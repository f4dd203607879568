// `hostplane admin database|email refresh-usage`: measure now what the daily scheduled job measures,
// print per server, exit 1 naming the servers that did not answer.
import type { Command } from 'commander';
import { CliError, withStore, type CliIo } from '../context.js';
import type { Store } from '../../db/index.js';
import { usageFailures, type UsageRefresh } from '../../queue/usage-refresh.js';
import { leaf, printResult, type Json } from './views.js';

/** `refreshUsageCommand(cmd, io, { what: ['database', 'databases'], describe, driver: mysqlDatabaseDriver, refresh })`. */
export function refreshUsageCommand<D extends { close(): Promise<void> }>(
  parent: Command,
  io: CliIo,
  o: { what: [one: string, many: string]; describe: string; driver(): D; refresh(store: Store, driver: D): Promise<UsageRefresh> },
): void {
  const [one, many] = o.what;
  leaf(parent.command('refresh-usage').description(o.describe)).action((flags: Json) =>
    withStore(io, async ({ store, out }) => {
      const driver = o.driver();
      const r = await o.refresh(store, driver).finally(() => driver.close());
      const total = r.measured.reduce((n, m) => n + m.count, 0);
      const per = r.measured.map((m) => `${m.server}: ${m.count}`).join(', ');
      const view = { measured: r.measured.map((m) => ({ server: m.server, [many]: m.count })), failed: r.failed };
      printResult(out, flags, view, `Measured ${total} ${total === 1 ? one : many}${per ? ` (${per})` : ''}.\n`);
      const failed = usageFailures(r);
      if (failed) throw new CliError(`${failed}; their last figures stay`, 'unreachable');
    }),
  );
}
