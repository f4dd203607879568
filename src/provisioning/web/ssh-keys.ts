// The key file sshd reads for a package's Linux user on a web server (API guide "SSH keys";
// docs/decisions/0024-ssh-keys.md): `<state-dir>/ssh/authorized_keys/<linux user>`, one public key
// per line, rewritten whole and atomically, so sshd never reads half a file. sshd's
// `AuthorizedKeysFile` names this path; StrictModes wants it and its directories writable by
// their owner only, hence 0644 and 0755.
import fs from 'node:fs/promises';
import path from 'node:path';
import crypto from 'node:crypto';
import type { WebServerConn } from './sites.js';
import { assertLinuxUser } from './webspace-dirs.js';

/** `authorizedKeysPath({ stateDir: '/srv/www/.hostplane', … }, 'u10002')` → `/srv/www/.hostplane/ssh/authorized_keys/u10002`. */
export function authorizedKeysPath(server: Pick<WebServerConn, 'stateDir'>, linuxUser: string): string {
  assertLinuxUser(linuxUser);
  return `${server.stateDir}/ssh/authorized_keys/${linuxUser}`;
}

/**
 * Makes the key file of `linuxUser` hold exactly `keys`, one per line (an empty file for none):
 * written beside it and renamed over it. `await writeAuthorizedKeys(server, 'u10002', ['ssh-ed25519 AAAA… me'])`.
 */
export async function writeAuthorizedKeys(server: Pick<WebServerConn, 'stateDir'>, linuxUser: string, keys: string[]): Promise<void> {
  for (const k of keys) if (/[\r\n]/.test(k)) throw new Error('an SSH key must be one line');
  const file = authorizedKeysPath(server, linuxUser);
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o755 });
  const tmp = `${file}.${crypto.randomBytes(6).toString('hex')}.tmp`;
  const handle = await fs.open(tmp, 'wx', 0o644);
  try {
    await handle.writeFile(keys.map((k) => `${k}\n`).join(''));
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await fs.rename(tmp, file);
  } catch (e) {
    await fs.rm(tmp, { force: true });
    throw e;
  }
}
