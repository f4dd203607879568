// A hosting company on booted Debian 13 hosts (decision 0018 "The lab"), every host set up by
// `hostplane node setup` alone, used from the client namespace as customers use it: the API over
// HTTPS, a webspace's PHP and a redirect over HTTPS with certificates issued on demand, a database
// reached from the client and from PHP on the web host, a mailbox receiving mail at its MX and read
// over IMAPS, plaintext logins refused, sending over 587 and 465 signed with its domain's DKIM key,
// incoming mail's SPF/DKIM/DMARC checked through the lab's DNS, the hourly sending limit, a DKIM
// rotation and antispam modes live at `done`; a Knot secondary on a host of its own following every
// zone; then a rebooted web host serving again, a mail host cut from its store deferring mail, and
// a second setup run changing nothing.
import { expect, it } from 'vitest';
import { preflight } from '../../src/lab/lab.js';
import { useLab } from '../helpers/lab.js';
import { demoCustomers, labClient } from '../helpers/lab-client.js';
import { apiOverHttps, databaseFromClientAndPhp, mailboxReceivesAndReads, webspaceAndRedirect, webspacePage } from '../helpers/lab-journeys.js';
import { requirable } from '../helpers/required.js';
import { packagesApart, sftpKeyLife, type SftpKey } from '../helpers/lab-sftp.js';
import { mailLeaves } from '../helpers/lab-mail-journeys.js';
import { inboundChecked, LAB_SPAM_RULE, limitDefers, rotationSeenByReceivers, smtpSession, spamModeLiveAtDone, type Mailbox } from '../helpers/lab-mail-checks.js';
import { setupCommand } from '../../src/lab/nodes.js';
import { LAB_ROOT_IN_HOST } from '../../src/lab/plan.js';

requirable(preflight())('the lab: a hosting company of five Debian 13 nodes', () => {
  const lab = useLab();
  let c: ReturnType<typeof labClient>;
  let shop: ReturnType<typeof demoCustomers>[number];
  let key: SftpKey;
  /** The --store URL the api host printed for the other nodes. */
  const nodeStore = async () => {
    const password = (await lab.sh('api', 'cat /etc/hostplane/store.password')).stdout.trim();
    return `postgres://hostplane:${password}@api.lab.test:5432/hostplane?sslmode=verify-full&sslrootcert=/etc/ssl/certs/ca-certificates.crt`;
  };

  it('lab.json describes the company; the demo customers are loaded', () => {
    c = labClient(lab);
    expect(c.j).toMatchObject({
      ca: expect.stringMatching(/lab-root\.pem$/),
      dns: '198.18.0.10',
      api: 'https://api.lab.test',
      dns_secondary: '198.18.0.14',
      hosts: { api: '198.18.0.10', web: '198.18.0.11', mail: '198.18.0.12', db: '198.18.0.13', ns2: '198.18.0.14' },
      mail: { host: 'mx1.lab.test', smtp: 25, imap: 143, imaps: 993 },
      db: { host: 'db1.lab.test', port: 3306 },
    });
    shop = demoCustomers(c.j).find((x) => x.domain === 'shop-demo.example')!;
    expect(shop).toBeDefined();
  });

  it('the API answers over HTTPS with a certificate the lab CA verifies; plain HTTP is redirected', () => apiOverHttps(lab, c, shop));

  it("the lab's DNS serves the demo domains with their web and mail hosts", () => {
    expect(c.dig(shop.domain, 'A')).toBe(c.j.hosts.web);
    expect(c.dig(shop.domain, 'MX')).toBe('10 mx1.lab.test.');
    expect(c.dig(shop.domain, 'NS').split('\n').sort()).toEqual(['ns1.lab.test.', 'ns2.lab.test.']);
  });

  it("a Knot secondary on a host of its own serves every zone; a record's job is done only once it serves it; it serves after a restart without its primary", async () => {
    const listed = await lab.sh('api', 'set -a; . /etc/hostplane/hostplane.env; set +a; hostplane admin dns-secondary list --json');
    expect(JSON.parse(listed.stdout), listed.stderr).toEqual([expect.objectContaining({ name: 'ns2', address: `${c.j.dns_secondary}:53`, tsig_key: expect.stringMatching(/^ns2-[0-9a-f]{8}$/) })]);
    // The demo was loaded by the CLI at the end of lab up, not through jobs: ns2 follows it within seconds.
    for (const d of demoCustomers(c.j).map((x) => x.domain)) {
      let at = c.dig(d, 'SOA', c.j.dns_secondary);
      for (let i = 0; i < 60 && at !== c.dig(d, 'SOA'); i++) {
        await new Promise((r) => setTimeout(r, 1000));
        at = c.dig(d, 'SOA', c.j.dns_secondary);
      }
      expect(at, d).toBe(c.dig(d, 'SOA'));
    }
    const post = c.api('POST', '/dns-records', shop.token, { data: { type: 'dns-record', attributes: { record_type: 'TXT', name: 'lab-knot', domain: shop.domain, data: 'served by both' } } });
    expect(post.status, JSON.stringify(post.body)).toBe(202);
    expect((await c.job(post, shop.token)).data.attributes.status).toBe('done');
    // Done means live on every DNS server: no waiting here.
    expect(c.dig(`lab-knot.${shop.domain}`, 'TXT', c.j.dns_secondary)).toBe('"served by both"');
    // The zones are in Knot's journal: a restart serves them while the primary is out of reach.
    await lab.sh('ns2', `ip route add prohibit ${c.j.hosts.api}/32 && systemctl restart knot`);
    try {
      expect(c.dig(`lab-knot.${shop.domain}`, 'TXT', c.j.dns_secondary)).toBe('"served by both"');
    } finally {
      await lab.sh('ns2', `ip route del prohibit ${c.j.hosts.api}/32`);
    }
    // A second run of its setup changes nothing.
    const pid = async () => (await lab.sh('ns2', 'systemctl show -p MainPID --value knot')).stdout.trim();
    const before = await pid();
    const again = await lab.sh('ns2', setupCommand('ns2', { directory: c.j.acme, caInHost: LAB_ROOT_IN_HOST }, await nodeStore()).map((w) => `'${w}'`).join(' '));
    expect(again.stderr).toBe('node setup: role dns\nnode setup: DNS secondary ns2 is registered already\nnode setup: ns2.lab.test is set up as dns\n');
    expect(await pid()).toBe(before);
  }, 600_000);

  it('a webspace answers its PHP over HTTPS with a certificate issued on demand; a redirect subdomain redirects', async () => {
    key = await webspaceAndRedirect(lab, c, shop);
  }, 600_000);

  it('a database created through the API: its user logs in from the client and from PHP on the web host', () => databaseFromClientAndPhp(lab, c, shop, key), 600_000);

  it("two packages stay apart: another package's PHP and SFTP read nothing of this one's, and this one's key is no login there", () => packagesApart(lab, c, shop, demoCustomers(c.j).find((x) => x.domain === 'solo-demo.example')!, key), 600_000);

  it('an SSH key logs in over SFTP where the package says, chrooted to its home, without a shell or forwarding; its login is its last use; deleted, it no longer logs in', () => sftpKeyLife(lab, c, shop, key), 300_000);

  let box: { address: string; password: string };
  it('a mailbox created through the API receives mail at its MX and is read over IMAPS; a login without TLS is refused', async () => {
    box = await mailboxReceivesAndReads(lab, c, shop);
  }, 600_000);

  let to: Mailbox;
  it('it sends over 587 and 465 to a mailbox and a forward, signed with the key the DNS serves; a wrong sender and AUTH in clear are refused; SRV and autoconfig name the server', async () => {
    to = await mailLeaves(lab, c, shop, box);
  }, 600_000);

  it("incoming mail is checked through the lab's DNS: a signed message passes DKIM and DMARC from anywhere, a forged From: fails DMARC with the domain's policy", () => inboundChecked(lab, c, box, to, 'lab-587'), 300_000);

  it('the 501st recipient within the hour is deferred with a reply that says why (the plan default of 500)', () => limitDefers(lab, c, shop, to), 300_000);

  it('a DKIM rotation: every message verifies against the key both DNS servers serve, until mail is signed with the new selector', () => rotationSeenByReceivers(lab, c, box, to), 300_000);

  it("a new mailbox's antispam mode is live when its job is done: spam to a junk-folder mailbox goes to Junk at once, to a reject one is refused", async () => {
    await lab.sh('mail', `cat > /etc/rspamd/local.d/regexp.conf <<'EOF'\n${LAB_SPAM_RULE}EOF\nsystemctl reload rspamd`);
    // Ready once the default mode refuses the rule's spam (a reload recompiles rspamd's expressions:
    // minutes on a busy machine).
    const strict = { port: 25 as const, from: 'someone@elsewhere.example', rcpt: [box.address], message: 'Subject: ready?\r\nX-Lab-Spam: yes\r\n\r\nx\r\n' };
    let ready = smtpSession(lab, c, strict).end;
    for (let i = 0; i < 120 && ready[0] !== 554; i++) {
      await new Promise((r) => setTimeout(r, 2000));
      ready = smtpSession(lab, c, strict).end;
    }
    expect(ready[0], `the rule is active once rspamd reloaded: ${ready[1]}`).toBe(554);
    await spamModeLiveAtDone(lab, c, shop);
  }, 600_000);

  it('a port a stranger holds stops a setup before anything is installed, naming the port and the program', async () => {
    await lab.sh('mail', `systemd-run --unit=hpl-stranger node -e "require('net').createServer().listen(3306, '0.0.0.0')"; sleep 1`);
    const r = await lab.sh('mail', 'hostplane node setup --roles db --name mx1.lab.test --store postgres://x@api.lab.test/hostplane');
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("hostplane: nothing was changed:\n  - tcp port 3306 (db) is held by node, not by the role's own daemon\n");
    expect((await lab.sh('mail', 'dpkg-query -W -f="${db:Status-Status}" mariadb-server')).stdout).not.toBe('installed');
    await lab.sh('mail', 'systemctl stop hpl-stranger');
  }, 120_000);

  it('a second run changes nothing: no restart, registered once; drift is mended', async () => {
    // The command lab up ran on the db host, with the --store URL the api host printed.
    const cmd = setupCommand('db', { directory: c.j.acme, caInHost: LAB_ROOT_IN_HOST }, await nodeStore()).map((w) => `'${w}'`).join(' ');
    const pid = async () => (await lab.sh('db', 'systemctl show -p MainPID --value mariadb')).stdout.trim();
    const before = await pid();
    const again = await lab.sh('db', cmd);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toBe('node setup: role db\nnode setup: database server db1 is registered already\nnode setup: db1.lab.test is set up as db\n');
    expect(await pid()).toBe(before);
    await lab.sh('db', "sed -i 's/0.0.0.0/127.0.0.1/' /etc/mysql/mariadb.conf.d/60-hostplane.cnf && systemctl restart mariadb");
    const mended = await lab.sh('db', cmd);
    expect(mended.stderr).toContain('node setup: restarting mariadb.service: its configuration changed\n');
    const password = (await lab.sh('db', 'cat /etc/hostplane/db-admin.password')).stdout.trim();
    const login = lab.client('mariadb', [`--host=${c.j.hosts.db}`, '--user=hostplane', `--password=${password}`, '--connect-timeout=3', '-e', 'select 1']);
    expect(login.code, login.stderr).toBe(0);
  }, 600_000);

  it('a rebooted web host serves its sites again without a person: Caddy, the web worker and PHP-FPM come back', async () => {
    await lab.reboot('web');
    let got = webspacePage(lab, c, shop);
    for (let i = 0; i < 60 && !got.startsWith('php '); i++) {
      await new Promise((r) => setTimeout(r, 1000));
      got = webspacePage(lab, c, shop);
    }
    expect(got).toMatch(/^php 8\.4\.\d+ as demo_shop$/);
  }, 300_000);

  it("a mail host cut from its store defers mail (4xx) and delivers it once the store is back", async () => {
    const send = (subject: string) => {
      const message = `From: someone@elsewhere.example\r\nTo: lab@${shop.domain}\r\nSubject: ${subject}\r\n\r\nbody\r\n`;
      return lab.client('sh', ['-c', `printf '%s' "$0" | curl -s -v --max-time 45 --url smtp://${c.j.hosts.mail}:25 --mail-from someone@elsewhere.example --mail-rcpt lab@${shop.domain} --upload-file - 2>&1`, message]).stdout;
    };
    // A route that refuses every packet to the api host: the store and the API are gone for the mail host.
    await lab.sh('mail', `ip route add prohibit ${c.j.hosts.api}/32`);
    try {
      expect(send('during the cut')).toMatch(/^< 4\d\d 4\.\d\.\d /m);
    } finally {
      await lab.sh('mail', `ip route del prohibit ${c.j.hosts.api}/32`);
    }
    // An smtpd process keeps the failed answer for that address until it ends (after 100 s without
    // a client, max_idle); a sending MTA retries minutes later, as this one does.
    await new Promise((r) => setTimeout(r, 110_000));
    let said = send('after the cut');
    for (let i = 0; i < 10 && !/^< 250 2\.0\.0 Ok: queued/m.test(said); i++) {
      await new Promise((r) => setTimeout(r, 5000));
      said = send('after the cut');
    }
    expect(said).toMatch(/^< 250 2\.0\.0 Ok: queued/m);
  }, 300_000);

  it("a renewed certificate is served by Dovecot and Postfix without a restart; the timer's command renews nothing that is fresh", async () => {
    const served = (port: number, starttls: string[] = []) =>
      lab.client('sh', ['-c', `openssl s_client -connect ${c.j.hosts.mail}:${port} -servername mx1.lab.test ${starttls.join(' ')} </dev/null 2>/dev/null | openssl x509 -noout -serial`]).stdout.trim();
    const pids = async () => (await lab.sh('mail', 'systemctl show -p MainPID --value dovecot postfix@-')).stdout.trim();
    const before = { imaps: served(993), smtp: served(25, ['-starttls', 'smtp']), pids: await pids() };
    expect(before.imaps).toMatch(/^serial=/);
    const fresh = await lab.sh('mail', 'hostplane node certs');
    expect({ code: fresh.code, out: fresh.stdout }).toEqual({ code: 0, out: 'No certificate needed renewing.\n' });
    const forced = await lab.sh('mail', 'hostplane node certs --force');
    expect({ code: forced.code, out: forced.stdout }, forced.stderr).toEqual({ code: 0, out: 'Renewed: mx1.lab.test\n' });
    const after = { imaps: served(993), smtp: served(25, ['-starttls', 'smtp']), pids: await pids() };
    expect(after.imaps).not.toBe(before.imaps);
    expect(after.smtp).toBe(after.imaps);
    expect(after.pids).toBe(before.pids);
    expect((await lab.sh('mail', 'systemctl is-enabled hostplane-certs.timer')).stdout.trim()).toBe('enabled');
  }, 300_000);
});
