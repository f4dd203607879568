// `hostplane demo [--json]` (API-NOTES §8): migrates a NEW database named by DATABASE_URL, loads
// the demo dataset and prints it. A database that already has customers is refused, so the
// command can never mix demo tokens into a real deployment.
import { Command } from 'commander';
import { migrate } from '../db/migrate.js';
import { loadDemoData, type DemoDataset } from '../admin/demo.js';
import { CliError, withStore, type CliIo } from './context.js';

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** The ready-to-paste first request: the reseller's token lists its customers. */
export function demoCurl(data: DemoDataset): string {
  const who = data.customers.find((c) => c.role === 'reseller') ?? data.customers[0];
  return `curl -s -H ${shellQuote(`Authorization: token ${who.token}`)} ${shellQuote(`${data.base_url}/customers`)}`;
}

/** What people read after the dataset was loaded (`demo` without --json, and `serve` on first start). */
export function formatDemo(data: DemoDataset): string {
  const rows = data.customers.map((c) => [
    `customer ${c.id}`,
    c.role + (c.reseller_id ? ` of ${c.reseller_id}` : ''),
    `package ${c.package_id}`,
    c.domain,
    c.token,
  ]);
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const table = rows.map((r) => `  ${r.map((v, i) => v.padEnd(widths[i])).join('  ').trimEnd()}`).join('\n');
  const reseller = data.customers.find((c) => c.legacy_password);
  const legacy = reseller
    ? `\nLegacy password of reseller ${reseller.id} (Basic auth on /domain-availability only): ${reseller.legacy_password}\n`
    : '';
  return (
    'Loaded the demo dataset. Its API tokens are shown only now; later, issue new ones with\n' +
    '`hostplane admin token create --contact <id>` (see `hostplane admin contact list`).\n\n' +
    `${table}\n${legacy}\n` +
    `Try it:\n\n  ${demoCurl(data)}\n`
  );
}

export function demoCommand(io: CliIo): Command {
  return new Command('demo')
    .description('load the demo dataset into a new database (DATABASE_URL) and print its ids, domains and tokens')
    .option('--json', 'print the dataset as one JSON object')
    .action((o: { json?: boolean }) =>
      withStore(io, async ({ config, store, admin, out }) => {
        await migrate(store);
        if (!(await admin.isEmpty())) {
          throw new CliError(
            `the database ${store.where} already has customers; \`hostplane demo\` loads the demo dataset only into a new database (point DATABASE_URL at a new one).`,
            'invalid_state',
          );
        }
        const data = await loadDemoData(admin, config.publicBaseUrl);
        if (o.json) return out.json(data);
        out.text(formatDemo(data));
      }),
    );
}
