// One Debian 13 server with every role (decision 0018 "The lab"; operator guide "One Debian 13
// server"), set up by the one `hostplane node setup` command the guide gives, used from the client
// namespace as customers use it: DNS, the API over HTTPS, a webspace's PHP, a database reached from
// the client and from PHP, a mailbox receiving mail and read over IMAPS; a second run restarts
// nothing.
import { expect, it } from 'vitest';
import { preflight } from '../../src/lab/lab.js';
import { setupCommand } from '../../src/lab/nodes.js';
import { LAB_ROOT_IN_HOST } from '../../src/lab/plan.js';
import { useLab } from '../helpers/lab.js';
import { demoCustomers, labClient } from '../helpers/lab-client.js';
import { apiOverHttps, databaseFromClientAndPhp, mailboxReceivesAndReads, webspaceAndRedirect } from '../helpers/lab-journeys.js';
import { requirable } from '../helpers/required.js';
import { sftpKeyLife, type SftpKey } from '../helpers/lab-sftp.js';

/** The main process of each daemon of the server, by unit; Postfix's master by its pid file (its unit does not track it). */
const DAEMONS = 'systemctl show -p MainPID --value caddy dovecot rspamd mariadb redis-server hostplane-serve hostplane-dns hostplane-web-worker@host $(systemctl list-units --plain --no-legend "postgresql@*" | cut -d" " -f1); cat /var/spool/postfix/pid/master.pid';

requirable(preflight())('the lab: one Debian 13 server with every role', () => {
  const lab = useLab({ oneServer: true });
  let c: ReturnType<typeof labClient>;
  let shop: ReturnType<typeof demoCustomers>[number];
  let key: SftpKey;

  it('lab.json describes one server serving every role; the demo customers are loaded', () => {
    c = labClient(lab);
    expect(c.j).toMatchObject({
      shape: 'one-server',
      dns: '198.18.0.10',
      api: 'https://host.lab.test',
      role_hosts: { api: 'host', dns: 'host', web: 'host', mail: 'host', db: 'host' },
      mail: { host: 'host.lab.test', smtp: 25, imap: 143, imaps: 993 },
      db: { host: 'host.lab.test', port: 3306 },
    });
    expect(c.j.hosts).toEqual({ host: '198.18.0.10' });
    expect(c.j.dns_secondary).toBeUndefined();
    shop = demoCustomers(c.j).find((x) => x.domain === 'shop-demo.example')!;
    expect(shop).toBeDefined();
  });

  it("the server's DNS serves the demo domains, pointing at itself", () => {
    expect(c.dig(shop.domain, 'A')).toBe('198.18.0.10');
    expect(c.dig(shop.domain, 'MX')).toBe('10 host.lab.test.');
    expect(c.dig(shop.domain, 'NS')).toBe('host.lab.test.');
  });

  it('the API answers over HTTPS with a certificate the lab CA verifies; plain HTTP is redirected', () => apiOverHttps(lab, c, shop));

  it('a webspace answers its PHP over HTTPS beside the API, on the same Caddy; a redirect subdomain redirects', async () => {
    key = await webspaceAndRedirect(lab, c, shop);
  }, 600_000);

  it('a database created through the API: its user logs in from the client and from PHP', () => databaseFromClientAndPhp(lab, c, shop, key), 600_000);

  it('an SSH key logs in over SFTP where the package says, chrooted to its home, without a shell or forwarding; its login is its last use; deleted, it no longer logs in', () => sftpKeyLife(lab, c, shop, key), 300_000);

  it('a mailbox created through the API receives mail and is read over IMAPS; a login without TLS is refused', () => mailboxReceivesAndReads(lab, c, shop).then(() => {}), 600_000);

  it('a second run of the same command changes nothing: no daemon restarts, nothing is installed or registered again', async () => {
    const pids = async () => (await lab.sh('host', DAEMONS)).stdout.split(/\s+/).filter(Boolean);
    const before = await pids();
    expect(before.length).toBe(10);
    expect(before.filter((p) => p === '0'), before.join(' ')).toEqual([]);
    const cmd = setupCommand('host', { directory: c.j.acme, caInHost: LAB_ROOT_IN_HOST }).map((w) => `'${w}'`).join(' ');
    const again = await lab.sh('host', cmd);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).not.toMatch(/starting|restarting|installing|migrated|registered (?!already)/);
    expect(again.stderr).toMatch(/node setup: host\.lab\.test is set up as api, dns, web, mail, db\n$/);
    expect(await pids()).toEqual(before);
  }, 600_000);
});
