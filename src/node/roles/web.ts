// The web role (decision 0018 "One command per node"; operator guide "Web servers"): Caddy on ports
// 80 and 443 with hostplane's config, the web worker of this server (hostplane-web-worker@<name>,
// as root: it makes the packages' Linux users, homes and PHP-FPM masters), PHP 8.4 from Debian,
// and the web server registered as `admin web-server add` does; SFTP for the packages' users through
// a drop-in of Debian's sshd (decision 0023, src/node/sftp.ts).
import { WebServersService } from '../../admin/web-servers.service.js';
import { CADDY_ADMIN, CADDY_LISTEN, caddyFacts, ensureCaddy } from '../caddy.js';
import { withStore, type NodeContext } from '../context.js';
import { ensureSftp } from '../sftp.js';
import { enableUnit, run, type Log } from '../system.js';

export const HOME_ROOT = '/srv/www';
/** The state dir `admin web-server add` gives a server without --state-dir: `<home root>/.hostplane`. */
export const STATE_DIR = `${HOME_ROOT}/.hostplane`;
const PHP = ['8.4=/usr/sbin/php-fpm8.4'];

export const webRole = {
  async apply(ctx: NodeContext, log: Log): Promise<void> {
    // Debian's PHP-FPM service runs a pool nobody uses: the web worker starts a master per version.
    await run('systemctl', ['disable', '--now', '--quiet', 'php8.4-fpm.service']);
    await ensureCaddy(caddyFacts(ctx), log);
    const registered = await withStore(ctx, async (store) => {
      const servers = new WebServersService(store.db);
      const known = (await servers.list()).find((s) => s.name === ctx.shortName);
      // sshd's rules name the dirs of the registration (an operator may have given others).
      if (known) return { homeRoot: known.home_root, stateDir: known.state_dir, added: false };
      await servers.add({
        name: ctx.shortName,
        caddyAdmin: CADDY_ADMIN,
        httpListen: CADDY_LISTEN.http,
        httpsListen: CADDY_LISTEN.https,
        addresses: ctx.addresses,
        homeRoot: HOME_ROOT,
        php: PHP,
        // Caddy runs as Debian's caddy user: the PHP-FPM sockets are its group's.
        socketGroup: 'caddy',
        // Customers connect by the node's name: the one its host key and certificate are for.
        sftpHost: ctx.name,
      });
      return { homeRoot: HOME_ROOT, stateDir: STATE_DIR, added: true };
    });
    log(registered.added ? `registered web server ${ctx.shortName} (${ctx.addresses.join(', ')})` : `web server ${ctx.shortName} is registered already`);
    await ensureSftp(registered, log);
    await enableUnit(`hostplane-web-worker@${ctx.shortName}.service`, ctx.changed, log);
  },
};
