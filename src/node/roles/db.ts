// The db role: Debian's MariaDB, reachable from the other nodes, with an administrative account for
// hostplane, registered as a database server (docs/operator-guide.md "Database servers").
import { DatabaseServersService } from '../../admin/database-servers.service.js';
import { keptSecret, placeFile } from '../files.js';
import { enableUnit, run, type Log } from '../system.js';
import { withStore, type NodeContext } from '../context.js';

const CONF = '/etc/mysql/mariadb.conf.d/60-hostplane.cnf';
const SECRET = '/etc/hostplane/db-admin.password';
const ADMIN = 'hostplane';

export const dbRole = {
  async apply(ctx: NodeContext, log: Log): Promise<void> {
    // TLS with the node's ACME certificate: MariaDB reads the key through the group ssl-cert.
    const tls = await ctx.certificate();
    await run('usermod', ['--append', '--groups', 'ssl-cert', 'mysql']);
    // Debian's 50-server.cnf binds to loopback; the api node's worker and the web nodes connect here.
    // No reverse lookup of clients: a login would wait on DNS, and accounts name addresses anyway.
    const changed = await placeFile({
      path: CONF,
      mode: 0o644,
      text: `# Written by hostplane node setup (role db); changes here are replaced on its next run.\n[mariadbd]\nbind-address = 0.0.0.0\nskip-name-resolve = ON\nssl_cert = ${tls.cert}\nssl_key = ${tls.key}\n`,
    });
    await enableUnit('mariadb.service', changed === 'written', log);
    const password = await keptSecret(SECRET);
    // Over the root socket; the password is set every run, so a lost or changed one converges.
    const q = (s: string) => s.replaceAll('\\', '\\\\').replaceAll("'", "\\'");
    await run('mariadb', ['--batch'], {
      input:
        `CREATE USER IF NOT EXISTS '${ADMIN}'@'%' IDENTIFIED BY '${q(password)}';\n` +
        `ALTER USER '${ADMIN}'@'%' IDENTIFIED BY '${q(password)}';\n` +
        `GRANT ALL PRIVILEGES ON *.* TO '${ADMIN}'@'%' WITH GRANT OPTION;\n` +
        // Anonymous accounts would shadow a customer's user@'%' (operator guide "Database servers").
        `DROP USER IF EXISTS ''@'localhost';\nDROP USER IF EXISTS ''@'${q(ctx.shortName)}';\n`,
    });
    const registered = await withStore(ctx, async (store) => {
      const servers = new DatabaseServersService(store.db);
      if ((await servers.list()).some((s) => s.name === ctx.shortName)) return false;
      await servers.addAsItIs({ name: ctx.shortName, url: `mysql://${ADMIN}@${ctx.name}:3306`, password });
      return true;
    });
    log(registered ? `registered database server ${ctx.shortName} (mysql://${ADMIN}@${ctx.name}:3306)` : `database server ${ctx.shortName} is registered already`);
  },
};
