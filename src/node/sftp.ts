// SFTP on a web node (docs/decisions/0023-sftp.md; operator guide "SFTP on web servers"): Debian's
// sshd gets a drop-in whose rules match only the packages' users (group hostplane-sftp), checked by
// `sshd -t` together with the running configuration before it is placed; sshd is reloaded only
// when the drop-in changed, so a second run changes nothing.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { SFTP_GROUP } from '../provisioning/web/private-users.js';
import { authorizedKeysDir } from '../provisioning/web/ssh-keys.js';
import { commandCheck, placeFile } from './files.js';
import { sftpDropIn } from './render/sshd.js';
import { isActive, run, type Log } from './system.js';

export const SFTP_DROP_IN = '/etc/ssh/sshd_config.d/hostplane-sftp.conf';
const SSHD = '/usr/sbin/sshd';

/**
 * A check of a candidate drop-in: `sshd -t` of a config that includes the candidate first, then the
 * running sshd_config (which includes the other drop-ins), as sshd reads them at its next reload.
 */
export function sshdCheck(mainConfig = '/etc/ssh/sshd_config', sshd = SSHD, o: { privsepDir?: string | null } = {}): (candidate: string) => Promise<void> {
  const privsepDir = o.privsepDir === undefined ? '/run/sshd' : o.privsepDir;
  return async (candidate) => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'hostplane-sshd-'));
    try {
      const config = path.join(dir, 'sshd_config');
      await fs.writeFile(config, `Include ${candidate}\nInclude ${mainConfig}\n`);
      // sshd -t refuses to run without its privilege separation dir (Debian's unit makes it at start).
      if (privsepDir) await fs.mkdir(privsepDir, { recursive: true, mode: 0o755 });
      await commandCheck(sshd, ['-t', '-f', config])(candidate);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  };
}

/** The drop-in, the group and the keys' dir; sshd reloaded when the drop-in changed. */
export async function ensureSftp(o: { homeRoot: string; stateDir: string }, log: Log): Promise<void> {
  await run('groupadd', ['-f', '--system', SFTP_GROUP]);
  // sshd reads the key files as the user: root's dirs, open to all on the way (0755).
  for (const dir of [o.stateDir, path.dirname(authorizedKeysDir(o.stateDir)), authorizedKeysDir(o.stateDir)]) {
    await fs.mkdir(dir, { recursive: true, mode: 0o755 });
    await fs.chmod(dir, 0o755);
  }
  const placed = await placeFile({ path: SFTP_DROP_IN, text: sftpDropIn({ chrootRoot: o.homeRoot, stateDir: o.stateDir }), mode: 0o644, check: sshdCheck() });
  // Debian may run sshd per connection (ssh.socket): each reads the files anew.
  if (await isActive('ssh.service')) {
    if (placed === 'written') {
      log(`reloading ssh.service: ${SFTP_DROP_IN} changed`);
      await run('systemctl', ['reload', 'ssh.service']);
    }
  } else if (!(await isActive('ssh.socket'))) {
    log('starting ssh.service');
    await run('systemctl', ['enable', '--now', '--quiet', 'ssh.service']);
  }
}
