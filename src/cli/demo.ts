// `hostplane demo [--json]` (docs/operator-guide.md "The operator CLI"): migrates a NEW database
// named by DATABASE_URL, loads the demo dataset and prints it. A database that already has
// customers is refused, so the command can never mix demo tokens into a real deployment.
import { Command } from 'commander';
import { migrate } from '../db/migrate.js';
import { loadDemoData, type DemoDataset, type DemoLoad } from '../admin/demo.js';
import { CliError, withStore, type CliIo } from './context.js';

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** The ready-to-paste first request: the reseller's token lists its customers. */
export function demoCurl(data: DemoDataset): string {
  const who = data.customers.find((c) => c.role === 'reseller') ?? data.customers[0];
  return `curl -s -H ${shellQuote(`Authorization: token ${who.token}`)} ${shellQuote(`${data.base_url}/customers`)}`;
}

/** How the demo's customers reach their databases, or why they cannot yet. */
function databaseLines({ data, databaseServer: s, warnings }: DemoLoad): string {
  const notes = warnings.map((w) => `Warning: ${w}\n`).join('');
  if (!s) return notes;
  const who = data.customers.find((c) => c.role === 'customer') ?? data.customers[0];
  const [host, port] = [s.host.replace(/:(\d+)$/, ''), /:(\d+)$/.exec(s.host)?.[1] ?? '3306'];
  const post = `curl -s -X POST -H ${shellQuote(`Authorization: token ${who.token}`)} -H 'Content-Type: application/vnd.api+json' ${shellQuote(`${data.base_url}/databases`)} -d ${shellQuote(JSON.stringify({ data: { type: 'database', attributes: { package_id: who.package_id, db_type: s.db_type, version: s.version } } }))}`;
  return (
    `${notes}\nDatabases are created on ${s.name} (${s.db_type} ${s.version} at ${s.host}):\n\n  ${post}\n\n` +
    `then, with the name and password it answers: mariadb -h ${host} -P ${port} -u <name> -p <name>\n`
  );
}

/** What people read after the dataset was loaded (`demo` without --json, and `serve` on first start). */
export function formatDemo(load: DemoLoad): string {
  const { data } = load;
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
    `Try it:\n\n  ${demoCurl(data)}\n` +
    databaseLines(load)
  );
}

export function demoCommand(io: CliIo): Command {
  return new Command('demo')
    .description('load the demo dataset into a new database (DATABASE_URL) and print its ids, domains and tokens')
    .option('--json', 'print the dataset as one JSON object')
    .action((o: { json?: boolean }) =>
      withStore(io, async ({ config, store, admin, out }) => {
        await migrate(store);
        if (!(await admin.customers.isEmpty())) {
          throw new CliError(
            `the database ${store.where} already has customers; \`hostplane demo\` loads the demo dataset only into a new database (point DATABASE_URL at a new one).`,
            'invalid_state',
          );
        }
        const load = await loadDemoData(admin, config.publicBaseUrl, { mariadbUrl: config.demoMariadbUrl, db: store.db });
        if (o.json) {
          for (const w of load.warnings) io.stderr.write(`hostplane: warning: ${w}\n`);
          return out.json(load.data);
        }
        out.text(formatDemo(load));
      }),
    );
}
