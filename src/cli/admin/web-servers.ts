// `hostplane admin web-server …`: the web servers subdomains are served by (operator data;
// docs/decisions/0008-web-servers.md).
import { Command, InvalidArgumentError } from 'commander';
import { CliError, withStore, type CliIo } from '../context.js';
import { WebServersService } from '../../admin/web-servers.service.js';
import { leaf, printList, printResult, type Json } from './views.js';

const COLUMNS = ['name', 'http_listen', 'https_listen', 'addresses', 'home_root', 'php', 'sftp', 'default'];

/** commander argument parser for `--sftp-port`: 1 to 65535. */
function parsePort(value: string): number {
  if (!/^[0-9]{1,5}$/.test(value) || Number(value) < 1 || Number(value) > 65535) throw new InvalidArgumentError('must be a port from 1 to 65535.');
  return Number(value);
}
const collect = (value: string, previous: string[]) => [...previous, value];
const list = (value: string, previous: string[]) => [...previous, ...value.split(',').map((s) => s.trim()).filter(Boolean)];

export function webServerCommand(io: CliIo): Command {
  const cmd = new Command('web-server').description('the web servers (Caddy and PHP-FPM) that serve subdomains');

  leaf(cmd.command('add').description('register a web server; the first one is the default'))
    .requiredOption('--name <name>', 'a short name, e.g. web1')
    .requiredOption('--caddy-admin <url>', "Caddy's admin API as the web server's host reaches it, e.g. http://127.0.0.1:2019")
    .requiredOption('--http-listen <host:port>', 'where Caddy serves plain HTTP, e.g. 0.0.0.0:80')
    .option('--https-listen <host:port>', 'where Caddy serves HTTPS with on-demand certificates, e.g. 0.0.0.0:443')
    .requiredOption('--address <ip[,ip]>', 'the IP address(es) DNS serves for the sites (A/AAAA); repeat or separate with commas', list, [])
    .requiredOption('--home-root <dir>', 'the directory holding every package\'s home (<dir>/<linux user>)')
    .option('--state-dir <dir>', "hostplane's own files on that host (PHP-FPM configs, sockets) [<home-root>/.hostplane]")
    .option('--php <version=binary>', 'an installed PHP version and its php-fpm binary, e.g. 8.2=/usr/sbin/php-fpm8.2; repeat for several', collect, [])
    .option('--socket-group <group>', "Caddy's group, when Caddy runs as another user than the web worker: it may then use the PHP-FPM sockets")
    .option('--sftp-host <host>', "the host name customers connect to for SFTP (sshd on that server) [the first --address]")
    .option('--sftp-port <port>', "sshd's port for SFTP there [22]", parsePort)
    .option('--default', 'make it the default (the first server is anyway)')
    .action((o: Json & {
      name: string; caddyAdmin: string; httpListen: string; httpsListen?: string; address: string[]; homeRoot: string; stateDir?: string; php: string[];
      socketGroup?: string; default?: boolean; sftpHost?: string; sftpPort?: number;
    }) =>
      withStore(io, async ({ store, out }) => {
        const s = await new WebServersService(store.db).add({
          name: o.name, caddyAdmin: o.caddyAdmin, httpListen: o.httpListen, httpsListen: o.httpsListen ?? null,
          addresses: o.address, homeRoot: o.homeRoot, stateDir: o.stateDir, php: o.php, socketGroup: o.socketGroup ?? null, isDefault: o.default,
          sftpHost: o.sftpHost ?? null, sftpPort: o.sftpPort,
        });
        printResult(out, o, s, `Registered web server ${s.name} (HTTP on ${s.http_listen}${s.https_listen ? `, HTTPS on ${s.https_listen}` : ''}${s.default ? ', the default' : ''}).\n`);
      }),
    );

  leaf(cmd.command('list').description('list the web servers')).action((o: Json) =>
    withStore(io, async ({ store, out }) => {
      const servers = await new WebServersService(store.db).list();
      // People get the lists as short cells; --json gets them as they are.
      const cells = (s: (typeof servers)[number]) => ({ ...s, addresses: s.addresses.join(','), php: Object.keys(s.php).join(',') || '-', https_listen: s.https_listen ?? '-', sftp: `${s.sftp_host}:${s.sftp_port}` });
      printList(out, o, o.json ? servers : servers.map(cells), COLUMNS);
    }),
  );

  leaf(cmd.command('set-default').description('make a web server the default: packages without one are placed there at their first subdomain'))
    .argument('<name>', 'server name')
    .action((name: string, o: Json) =>
      withStore(io, async ({ store, out }) => {
        const s = await new WebServersService(store.db).setDefault(name);
        printResult(out, o, s, `${s.name} is now the default web server.\n`);
      }),
    );

  leaf(cmd.command('set').description('change where customers connect for SFTP to a web server; its packages show it at once'))
    .argument('<name>', 'server name')
    .option('--sftp-host <host>', 'the host name customers connect to for SFTP; "" goes back to the first address')
    .option('--sftp-port <port>', "sshd's port for SFTP there", parsePort)
    .action((name: string, o: Json & { sftpHost?: string; sftpPort?: number }) =>
      withStore(io, async ({ store, out }) => {
        if (o.sftpHost === undefined && o.sftpPort === undefined) throw new CliError('Give --sftp-host <host> or --sftp-port <port> (or both).', 'usage');
        const s = await new WebServersService(store.db).setSftp(name, { sftpHost: o.sftpHost === undefined ? undefined : o.sftpHost || null, sftpPort: o.sftpPort });
        printResult(out, o, s, `${s.name}: SFTP on ${s.sftp_host} port ${s.sftp_port}.\n`);
      }),
    );

  leaf(cmd.command('remove').description('forget a web server (Caddy, PHP-FPM and the files stay); refused while a package lives on it'))
    .argument('<name>', 'server name')
    .action((name: string, o: Json) =>
      withStore(io, async ({ store, out }) => {
        await new WebServersService(store.db).remove(name);
        printResult(out, o, { name, removed: true }, `Removed web server ${name}; nothing on the server itself was changed.\n`);
      }),
    );
  return cmd;
}
