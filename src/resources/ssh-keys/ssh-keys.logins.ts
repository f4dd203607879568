// The web worker's side of the SSH keys' last use (docs/decisions/0023-sftp.md "Last use"): on the
// host of WEB_SERVER, with WEB_SFTP_LOG set, sshd's log is followed and each login by key recorded.
import type { Store } from '../../db/index.js';
import { followSshdLog, type SshKeyUse } from '../../provisioning/web/sshd-log.js';
import { SshKeysService } from './ssh-keys.service.js';

export interface SftpLoginsLog {
  info(o: object, m: string): void;
  warn(o: object, m: string): void;
}

/** What a login does to the store: the key's last_used_at (API guide "SSH keys"), never back in time. */
export function recordSshKeyUse(store: Store, log: SftpLoginsLog): (use: SshKeyUse) => Promise<void> {
  const keys = new SshKeysService({ store });
  return async (use) => {
    const known = await keys.recordUse(use.user, use.fingerprint, use.at);
    log.info({ linuxUser: use.user, fingerprint: use.fingerprint, known }, 'SFTP login by key');
  };
}

/** Starts following sshd's log when this host runs a web server and WEB_SFTP_LOG names the log; its stop, or null. */
export function startSftpLogins(o: { config: { webServer: string | null; webSftpLog: string | null }; store: Store; log: SftpLoginsLog }): (() => Promise<void>) | null {
  if (!o.config.webServer || !o.config.webSftpLog) return null;
  return followSshdLog(o.config.webSftpLog, recordSshKeyUse(o.store, o.log), { log: o.log });
}
