// The SSH keys sshd accepts for a package's Linux user on a web server (API guide "SSH keys";
// docs/decisions/0023-sftp.md, 0024-ssh-keys.md):
// one root-owned file per user under the server's state dir, named by sshd_config's
// `AuthorizedKeysFile <stateDir>/ssh/authorized_keys/%u` (the drop-in node setup places, and the
// local stack's sshd). Only hostplane writes these files; the package's user cannot change them.
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { WebServerConn } from './sites.js';
import { assertLinuxUser } from './webspace-dirs.js';

/**
 * A line of an authorized_keys file that hostplane writes: a key type sshd takes, the base64 blob,
 * a comment without control characters; never options (`command="…"` would start with none of these).
 */
// eslint-disable-next-line no-control-regex
const KEY_LINE_RE = /^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(256|384|521)|sk-ssh-ed25519@openssh\.com|sk-ecdsa-sha2-nistp256@openssh\.com) [A-Za-z0-9+/]+={0,2}( [^\u0000-\u001f\u007f]*)?$/;

/** The file sshd reads for `linuxUser`'s keys on this web server (AuthorizedKeysFile). */
export function authorizedKeysPath(server: Pick<WebServerConn, 'stateDir'>, linuxUser: string): string {
  assertLinuxUser(linuxUser);
  return `${server.stateDir}/ssh/authorized_keys/${linuxUser}`;
}

/** The dir of the per-user files; what sshd_config names with `%u` appended. */
export function authorizedKeysDir(stateDir: string): string {
  return `${stateDir}/ssh/authorized_keys`;
}

/**
 * Makes exactly `keys` (OpenSSH one-line public keys, no options) the keys sshd accepts for
 * `linuxUser`; atomic; root-owned 0644 in a 0755 dir when root. An empty list leaves an empty file:
 * no key logs in. A line that is not such a key throws, and nothing is written.
 */
export async function writeAuthorizedKeys(server: Pick<WebServerConn, 'stateDir'>, linuxUser: string, keys: string[]): Promise<void> {
  const file = authorizedKeysPath(server, linuxUser);
  for (const [i, key] of keys.entries()) {
    if (!KEY_LINE_RE.test(key)) throw new Error(`key ${i + 1} of ${linuxUser} is not a one-line OpenSSH public key without options`);
  }
  const dir = path.dirname(file);
  await fs.mkdir(dir, { recursive: true, mode: 0o755 });
  // sshd reads these files as the user: every dir on the way must let it through (umask aside).
  for (const d of [path.dirname(dir), dir]) await fs.chmod(d, 0o755);
  const tmp = path.join(dir, `.${linuxUser}.${crypto.randomBytes(6).toString('hex')}.tmp`);
  try {
    const handle = await fs.open(tmp, 'wx', 0o644);
    try {
      await handle.writeFile(keys.map((k) => `${k}\n`).join(''));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.chmod(tmp, 0o644);
    if (process.getuid?.() === 0) await fs.chown(tmp, 0, 0);
    await fs.rename(tmp, file);
  } catch (err) {
    await fs.rm(tmp, { force: true });
    throw err;
  }
}
