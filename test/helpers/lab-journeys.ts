// What a customer does with a lab's hosting company, from the client namespace (decision 0018 "The
// lab"): the same steps on a company of hosts and on one server, each role found where lab.json's
// role_hosts says. Each step asserts what the customer sees.
import { expect } from 'vitest';
import type { Lab } from './lab.js';
import type { DemoCustomer, labClient } from './lab-client.js';
import { addSftpKey, sftpPut, type SftpKey } from './lab-sftp.js';

type Client = ReturnType<typeof labClient>;

/** The API over HTTPS with a certificate the lab CA verifies; plain HTTP redirected to it. */
export function apiOverHttps(lab: Lab, c: Client, shop: DemoCustomer): void {
  const r = c.api('GET', '/customers', shop.token);
  expect(r.status, r.stderr).toBe(200);
  expect(r.body!.data).toEqual([expect.objectContaining({ type: 'customer', id: shop.id })]);
  const host = new URL(c.j.api).hostname;
  const plain = lab.client('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code} %{redirect_url}', ...c.resolve(host, 80, c.at('api')), `http://${host}/customers`]);
  expect(plain.stdout).toBe(`301 https://${host}/customers`);
}

/**
 * A webspace `www` answering its PHP over HTTPS (certificate on demand), its index.php uploaded over
 * SFTP with a key added through the API (returned for the next steps), and a redirect subdomain `old`.
 */
export async function webspaceAndRedirect(lab: Lab, c: Client, shop: DemoCustomer): Promise<SftpKey> {
  const post = c.api('POST', '/subdomains', shop.token, {
    data: { type: 'subdomain', attributes: { subdomain_type: 'webspace', domain: shop.domain, subdomain: 'www', webspace: { path: '/htdocs/www/', php_version: '8.4' } } },
  });
  expect(post.status, JSON.stringify(post.body)).toBe(202);
  expect((await c.job(post, shop.token)).data.attributes.status).toBe('done');
  const key = await addSftpKey(c, shop, 'lab laptop');
  sftpPut(lab, c, shop, key, '/htdocs/www/index.php', '<?php echo "php " . PHP_VERSION . " as " . posix_getpwuid(posix_geteuid())["name"];\n');
  expect(webspacePage(lab, c, shop)).toMatch(/^php 8\.4\.\d+ as demo_shop$/);
  // The file is the package user's, as PHP runs.
  expect((await lab.sh(c.j.role_hosts.web, 'stat -c %U /srv/www/demo_shop/htdocs/www/index.php')).stdout.trim()).toBe('demo_shop');
  const redirect = c.api('POST', '/subdomains', shop.token, {
    data: { type: 'subdomain', attributes: { subdomain_type: 'redirect', domain: shop.domain, subdomain: 'old', redirect: { target: `https://www.${shop.domain}/`, dynamic: true } } },
  });
  expect((await c.job(redirect, shop.token)).data.attributes.status).toBe('done');
  const r = lab.client('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code} %{redirect_url}', ...c.resolve(`old.${shop.domain}`, 80, c.at('web')), `http://old.${shop.domain}/a?b=1`]);
  expect(r.stdout).toBe(`301 https://www.${shop.domain}/a?b=1`);
  return key;
}

/** What https://www.<domain>/<file> answers (empty when nothing does within 5 s). */
export function webspacePage(lab: Lab, c: Client, shop: DemoCustomer, file = ''): string {
  return lab.client('curl', ['-s', '--max-time', '5', '--cacert', c.j.ca, ...c.resolve(`www.${shop.domain}`, 443, c.at('web')), `https://www.${shop.domain}/${file}`]).stdout;
}

/**
 * A database created through the API, logged in to from the client; an application uploaded over
 * SFTP with `key` makes a table in it, adds a row and prints it through mysqli over HTTPS.
 */
export async function databaseFromClientAndPhp(lab: Lab, c: Client, shop: DemoCustomer, key: SftpKey): Promise<void> {
  const plans = c.api('GET', '/plans', shop.token);
  // The plans offer the common default and what the registered server runs: the latter.
  const version: string = plans.body!.data[0].attributes.database_versions.at(-1);
  const post = c.api('POST', '/databases', shop.token, {
    data: { type: 'database', attributes: { package_id: shop.package_id, db_type: version.split('-')[0], version: version.split('-')[1], description: 'lab' } },
  });
  expect(post.status, JSON.stringify(post.body)).toBe(202);
  expect((await c.job(post, shop.token)).data.attributes.status).toBe('done');
  const { name, password } = { name: post.body!.data.attributes.name as string, password: post.body!.data.attributes.password as string };
  const login = lab.client('mariadb', [`--host=${c.at('db')}`, `--user=${name}`, `--password=${password}`, '--batch', '--skip-column-names', '--skip-ssl-verify-server-cert', '-e', 'select database(), current_user()', name]);
  expect(login.stdout.trim(), login.stderr).toBe(`${name}\t${name}@%`);
  const app = [
    '<?php',
    `$m = new mysqli('${c.j.db.host}', '${name}', '${password}', '${name}');`,
    "$m->query('create table if not exists visits (id int auto_increment primary key, who varchar(40))');",
    "$m->query(\"insert into visits (who) values ('lab')\");",
    "foreach ($m->query('select id, who from visits order by id') as $r) echo $r['id'], ' ', $r['who'], \"\\n\";",
    '',
  ].join('\n');
  sftpPut(lab, c, shop, key, '/htdocs/www/db.php', app);
  expect(webspacePage(lab, c, shop, 'db.php')).toBe('1 lab\n');
  expect(webspacePage(lab, c, shop, 'db.php')).toBe('1 lab\n2 lab\n');
}

/** A mailbox created through the API receiving mail at the domain's MX and read over IMAPS; no login without TLS. */
export async function mailboxReceivesAndReads(lab: Lab, c: Client, shop: DemoCustomer): Promise<{ address: string; password: string }> {
  const address = `lab@${shop.domain}`;
  const post = c.api('POST', '/email-addresses', shop.token, { data: { type: 'email-address', attributes: { address, address_type: 'mailbox' } } });
  expect(post.status, JSON.stringify(post.body)).toBe(202);
  const password: string = post.body!.data.attributes.password;
  expect((await c.job(post, shop.token)).data.attributes.status).toBe('done');
  const mx = c.dig(shop.domain, 'MX').split(' ')[1].replace(/\.$/, '');
  // The mail host's own name is the operator's zone, served by the lab's resolver ("the internet").
  const mxAddress = c.dig(mx, 'A', c.j.resolver);
  expect({ mx, mxAddress }).toEqual({ mx: c.j.mail.host, mxAddress: c.at('mail') });
  const message = `From: someone@elsewhere.example\r\nTo: ${address}\r\nSubject: across the lab\r\n\r\nhello from the client\r\n`;
  const send = lab.client('sh', ['-c', `printf '%s' "$0" | curl -s --url smtp://${mxAddress}:25 --mail-from someone@elsewhere.example --mail-rcpt ${address} --upload-file -`, message]);
  expect(send.code, send.stderr).toBe(0);
  const read = async () => lab.client('curl', ['-s', '--cacert', c.j.ca, ...c.resolve(mx, 993, mxAddress), '--user', `${address}:${password}`, `imaps://${mx}/INBOX;UID=1`]);
  let got = await read();
  for (let i = 0; i < 20 && !got.stdout.includes('hello from the client'); i++) {
    await new Promise((r) => setTimeout(r, 500));
    got = await read();
  }
  expect(got.stdout, got.stderr).toContain('Subject: across the lab');
  // Port 143 without STARTTLS: Dovecot offers no login at all (LOGINDISABLED).
  const plain = lab.client('curl', ['-s', ...c.resolve(mx, 143, mxAddress), '--user', `${address}:${password}`, `imap://${mx}/INBOX`]);
  expect(plain.code).not.toBe(0);
  return { address, password };
}
