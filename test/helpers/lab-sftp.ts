// Webspaces filled over SFTP on the lab (API guide "SSH keys", "Subdomains"; decision 0023): a key
// made with ssh-keygen is added through the API, and the real OpenSSH sftp client in the client
// namespace uploads with it to where the package's sftp_host, sftp_port and sftp_user say.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { expect } from 'vitest';
import type { Lab } from './lab.js';
import type { DemoCustomer, labClient } from './lab-client.js';

type Client = ReturnType<typeof labClient>;

export interface SftpKey {
  id: string;
  file: string;
  fingerprint: string;
}

/** A new ed25519 key of `shop`'s package, added through the API, its job done. */
export async function addSftpKey(c: Client, shop: DemoCustomer, description: string): Promise<SftpKey> {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'hp-lab-key-')), 'id_ed25519');
  const made = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', description, '-f', file], { encoding: 'utf8' });
  expect(made.status, made.stderr).toBe(0);
  const post = c.api('POST', '/ssh-keys', shop.token, { data: { type: 'ssh-key', attributes: { package_id: shop.package_id, public_key: fs.readFileSync(`${file}.pub`, 'utf8').trim(), description } } });
  expect(post.status, JSON.stringify(post.body)).toBe(202);
  expect((await c.job(post, shop.token)).data.attributes.status).toBe('done');
  return { id: post.body!.data.id as string, file, fingerprint: post.body!.data.attributes.fingerprint as string };
}

/** Where the package says to connect: { host, port, user }. */
export function sftpTarget(c: Client, shop: DemoCustomer): { host: string; port: number; user: string } {
  const a = c.api('GET', `/packages/${shop.package_id}`, shop.token).body!.data.attributes;
  return { host: a.sftp_host, port: a.sftp_port, user: a.sftp_user };
}

/** ssh's options for `key`: the package's host name pinned to the web host's address, any host key taken. */
function sshOptions(c: Client, shop: DemoCustomer, key: SftpKey): { opts: string[]; port: string; at: string } {
  const t = sftpTarget(c, shop);
  const opts = ['-i', key.file, '-o', 'BatchMode=yes', '-o', 'IdentitiesOnly=yes', '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', `HostKeyAlias=${t.host}`, '-o', 'ConnectTimeout=10', '-o', 'LogLevel=ERROR'];
  return { opts, port: String(t.port), at: `${t.user}@${c.at('web')}` };
}

/** `sftp -b -` with `batch` as the package's user with `key`, from the client namespace. */
export function sftpAs(lab: Lab, c: Client, shop: DemoCustomer, key: SftpKey, batch: string) {
  const { opts, port, at } = sshOptions(c, shop, key);
  return lab.client('sh', ['-c', 'printf "%s" "$0" | sftp -b - "$@"', batch, ...opts, '-P', port, at]);
}

/** `ssh <options…> <user@host> <command…>` as the package's user with `key`, from the client namespace. */
export function sshAs(lab: Lab, c: Client, shop: DemoCustomer, key: SftpKey, options: string[], command: string[] = []) {
  const { opts, port, at } = sshOptions(c, shop, key);
  return lab.client('ssh', [...opts, ...options, '-p', port, at, ...command]);
}

/** Puts `text` at `file` (a path in the package's home, as SFTP shows it) over SFTP. */
export function sftpPut(lab: Lab, c: Client, shop: DemoCustomer, key: SftpKey, file: string, text: string): void {
  const local = path.join(path.dirname(key.file), path.basename(file));
  fs.writeFileSync(local, text);
  const put = sftpAs(lab, c, shop, key, `put ${local} ${file}\n`);
  expect(put.code, put.stderr).toBe(0);
}

/**
 * The SFTP key's life: it logs in (and that login is its last_used_at), the chroot holds (`..` of
 * the home is the home, no shell, no forwarding), and once DELETEd (job done) it no longer logs in.
 */
export async function sftpKeyLife(lab: Lab, c: Client, shop: DemoCustomer, key: SftpKey): Promise<void> {
  expect(sftpTarget(c, shop)).toEqual({ host: expect.stringMatching(/^(web1|host)\.lab\.test$/), port: 22, user: 'demo_shop' });
  const up = sftpAs(lab, c, shop, key, 'cd /..\npwd\nls -a /\n');
  expect(up.code, up.stderr).toBe(0);
  expect(up.stdout).toContain('Remote working directory: /\n');
  expect(up.stdout).toMatch(/htdocs/);
  expect(up.stdout).not.toMatch(/\b(etc|usr|srv)\b/);
  const shell = sshAs(lab, c, shop, key, ['-T'], ['id']);
  expect(shell.stdout).not.toMatch(/uid=/);
  const tunnel = sshAs(lab, c, shop, key, ['-W', `${c.at('db')}:3306`]);
  expect(tunnel.code).not.toBe(0);
  let used: string | null = null;
  for (let i = 0; i < 40 && !used; i++) {
    used = c.api('GET', `/ssh-keys/${key.id}`, shop.token).body!.data.attributes.last_used_at;
    if (!used) await new Promise((r) => setTimeout(r, 500));
  }
  expect(used).toMatch(/^\d{4}-\d\d-\d\dT/);

  const del = c.api('DELETE', `/ssh-keys/${key.id}`, shop.token);
  expect(del.status, JSON.stringify(del.body)).toBe(202);
  expect((await c.job(del, shop.token)).data.attributes.status).toBe('done');
  const refused = sftpAs(lab, c, shop, key, 'pwd\n');
  expect(refused.code).not.toBe(0);
  expect(refused.stderr).toMatch(/Permission denied \(publickey\)/);
}

/**
 * Two packages stay apart: `other`'s own PHP can read neither a file nor the home of `shop`'s
 * package, `other`'s SFTP login sees only its own home, and `shop`'s key is no login of `other`'s.
 */
export async function packagesApart(lab: Lab, c: Client, shop: DemoCustomer, other: DemoCustomer, shopKey: SftpKey): Promise<void> {
  const post = c.api('POST', '/subdomains', other.token, {
    data: { type: 'subdomain', attributes: { subdomain_type: 'webspace', domain: other.domain, subdomain: 'www', webspace: { path: '/htdocs/www/', php_version: '8.4' } } },
  });
  expect(post.status, JSON.stringify(post.body)).toBe(202);
  expect((await c.job(post, other.token)).data.attributes.status).toBe('done');
  const key = await addSftpKey(c, other, 'lab other');
  const home = `/srv/www/${sftpTarget(c, shop).user}`;
  sftpPut(lab, c, other, key, '/htdocs/www/peek.php', `<?php var_dump(@file_get_contents('${home}/htdocs/www/db.php'), @scandir('${home}'));\n`);
  const page = lab.client('curl', ['-s', '--max-time', '10', '--cacert', c.j.ca, ...c.resolve(`www.${other.domain}`, 443, c.at('web')), `https://www.${other.domain}/peek.php`]);
  expect(page.stdout, page.stderr).toBe('bool(false)\nbool(false)\n');
  const look = sftpAs(lab, c, other, key, `ls ${home}\nget ${home}/htdocs/www/db.php /dev/null\n`);
  expect(look.code).not.toBe(0);
  expect(look.stderr).toMatch(/not found|No such file/i);
  const wrongKey = sftpAs(lab, c, other, shopKey, 'pwd\n');
  expect(wrongKey.stderr).toMatch(/Permission denied \(publickey\)/);
}
