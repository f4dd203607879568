// `hostplane admin database-server …`: the MariaDB/MySQL servers databases are created on
// (operator data). The admin credentials in --url (or on stdin) are stored for the
// driver and never printed: list and --json show host:port and the admin user only.
import { Command, Option } from 'commander';
import { readSecret, withStore, type CliIo } from '../context.js';
import { DB_TYPES, DatabaseServersService, type DbType } from '../../admin/database-servers.service.js';
import { leaf, printList, printResult, type Json } from './views.js';

/** Test-only: lets the suites label a MariaDB as `mysql` (no MySQL server can be installed there). */
export const ALLOW_LABEL_MISMATCH_ENV = 'HOSTPLANE_TEST_ALLOW_DB_TYPE_MISMATCH';

const COLUMNS = ['name', 'db_type', 'version', 'host', 'admin_user', 'access_hosts', 'default', 'dedicated'];
const collect = (value: string, previous: string[]) => [...previous, value];

export function databaseServerCommand(io: CliIo): Command {
  const servers = (db: ConstructorParameters<typeof DatabaseServersService>[0]) =>
    new DatabaseServersService(db, { allowLabelMismatch: io.env[ALLOW_LABEL_MISMATCH_ENV] === '1' });
  const cmd = new Command('database-server').description('the MariaDB/MySQL servers customer databases are created on');

  leaf(cmd.command('add').description('register a server after checking that it answers and is what --db-type and --db-version say'))
    .requiredOption('--name <name>', 'a short name customers see as the database\'s server, e.g. db22')
    .addOption(new Option('--db-type <type>', 'what the server is').choices(DB_TYPES).makeOptionMandatory())
    .requiredOption('--db-version <version>', 'major.minor of the server, e.g. 10.11')
    .requiredOption('--url <url>', 'mysql://<admin>@<host>:<port> of an account that may create databases and users; prefer --password-stdin to a password in the URL')
    .option('--password-stdin', 'read the admin password from stdin (one line) instead of the URL')
    .addOption(
      new Option('--access-host <host>', 'host pattern the customers\' accounts may log in from; repeat for several').argParser(collect).default([], '%'),
    )
    .option('--default', 'make it the default for its type and version (the first server of a type and version is anyway)')
    .option('--dedicated', 'never place new databases on it through the API (it is never the default)')
    .action(
      async (o: Json & {
        name: string; dbType: DbType; dbVersion: string; url: string; passwordStdin?: boolean; accessHost: string[]; default?: boolean; dedicated?: boolean;
      }) => {
        // Read before the database is opened: nothing is held while a person types.
        const password = o.passwordStdin ? await readSecret(io, '--password-stdin') : undefined;
        await withStore(io, async ({ store, out }) => {
          const { server, warnings } = await servers(store.db).add({
            name: o.name, dbType: o.dbType, version: o.dbVersion, url: o.url, password,
            accessHosts: o.accessHost, isDefault: o.default, isDedicated: o.dedicated,
          });
          for (const w of warnings) io.stderr.write(`hostplane: warning: ${w}\n`);
          const role = server.default ? `the default for ${server.db_type} ${server.version}` : server.dedicated ? 'dedicated' : 'not the default';
          printResult(out, o, server, `Registered database server ${server.name} (${server.db_type} ${server.version} at ${server.host}, ${role}).\n`);
        });
      },
    );

  leaf(cmd.command('list').description('list the servers; admin passwords are never shown')).action((o: Json) =>
    withStore(io, async ({ store, out }) => printList(out, o, await servers(store.db).list(), COLUMNS)),
  );

  leaf(cmd.command('set-default').description('make a server the default for its type and version: new databases go there, existing ones stay'))
    .argument('<name>', 'server name')
    .action((name: string, o: Json) =>
      withStore(io, async ({ store, out }) => {
        const s = await servers(store.db).setDefault(name);
        printResult(out, o, s, `${s.name} is now the default for ${s.db_type} ${s.version}.\n`);
      }),
    );

  leaf(cmd.command('remove').description('forget a server; refused while a database lives on it'))
    .argument('<name>', 'server name')
    .action((name: string, o: Json) =>
      withStore(io, async ({ store, out }) => {
        await servers(store.db).remove(name);
        printResult(out, o, { name, removed: true }, `Removed database server ${name}; nothing on the server itself was changed.\n`);
      }),
    );
  return cmd;
}
