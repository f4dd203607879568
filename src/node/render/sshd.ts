// sshd's SFTP rules for the packages' Linux users of a web server (docs/decisions/0023-sftp.md):
// SFTP only (internal-sftp, no shell), chrooted into the package's home, public keys only from the
// file hostplane writes, no forwarding of any kind, and each login logged with the key's
// fingerprint (the keys' last_used_at). On a node these rules are a drop-in of Debian's sshd that
// matches only the group every package user is in, so the operator's own logins are untouched; the
// local stack runs a private sshd of its own with the same block.
import { SFTP_GROUP } from '../../provisioning/web/private-users.js';
import { authorizedKeysDir } from '../../provisioning/web/ssh-keys.js';

export interface SftpFacts {
  /** The dir sshd chroots into `<chrootRoot>/<user>`: the web server's home root as sshd sees it. */
  chrootRoot: string;
  /** The web server's state dir: the keys are `<stateDir>/ssh/authorized_keys/<user>`. */
  stateDir: string;
}

/** What sshd_config accepts as a path here: no spaces, quotes, `%` or control characters. */
const SAFE_PATH_RE = /^\/[A-Za-z0-9._+@/-]*$/;

function checked(f: SftpFacts): SftpFacts {
  for (const [what, p] of [['chrootRoot', f.chrootRoot], ['stateDir', f.stateDir]]) {
    if (!SAFE_PATH_RE.test(p)) throw new Error(`${what} "${p}" must be an absolute path of letters, digits and . _ + @ - /`);
  }
  return { chrootRoot: f.chrootRoot.replace(/\/+$/, '') || '/', stateDir: f.stateDir.replace(/\/+$/, '') };
}

/** The Match block: every rule for the package users, and nobody else. */
export function sftpMatchBlock(facts: SftpFacts): string {
  const f = checked(facts);
  return `Match Group ${SFTP_GROUP}
	ChrootDirectory ${f.chrootRoot === '/' ? '' : f.chrootRoot}/%u
	ForceCommand internal-sftp
	AuthorizedKeysFile ${authorizedKeysDir(f.stateDir)}/%u
	AuthorizedKeysCommand none
	AuthorizedPrincipalsFile none
	AuthenticationMethods publickey
	PubkeyAuthentication yes
	PasswordAuthentication no
	KbdInteractiveAuthentication no
	HostbasedAuthentication no
	DisableForwarding yes
	AllowTcpForwarding no
	AllowAgentForwarding no
	AllowStreamLocalForwarding no
	X11Forwarding no
	PermitTunnel no
	PermitListen none
	PermitOpen none
	PermitTTY no
	PermitUserRC no
	GatewayPorts no
	LogLevel VERBOSE
`;
}

/** /etc/ssh/sshd_config.d/hostplane-sftp.conf on a web node. */
export function sftpDropIn(facts: SftpFacts): string {
  return `# Written by hostplane node setup (role web): SFTP for the packages' Linux users (group ${SFTP_GROUP})
# only, chrooted into their homes with the keys hostplane writes. Every other login, the operator's
# own included, is left to the rest of sshd's configuration. Changes here are replaced on its next run.
${sftpMatchBlock(facts)}`;
}

export interface PrivateSshdFacts extends SftpFacts {
  /** 127.0.0.1:<port> */
  listen: string;
  hostKey: string;
  pidFile: string;
}

/** The local stack's own sshd_config: loopback, its own host key, only the package users, the same Match block. */
export function privateSshdConfig(facts: PrivateSshdFacts): string {
  for (const [what, p] of [['hostKey', facts.hostKey], ['pidFile', facts.pidFile]]) {
    if (!SAFE_PATH_RE.test(p)) throw new Error(`${what} "${p}" must be an absolute path of letters, digits and . _ + @ - /`);
  }
  if (!/^127\.\d+\.\d+\.\d+:\d{1,5}$/.test(facts.listen)) throw new Error(`listen "${facts.listen}" must be a loopback address and port`);
  return `# Written by hostplane's local stack (deploy/local/up.sh): SFTP for the packages' users, on loopback.
ListenAddress ${facts.listen}
HostKey ${facts.hostKey}
PidFile ${facts.pidFile}
# Only the package users: the machine's own accounts never log in here.
AllowGroups ${SFTP_GROUP}
PermitRootLogin no
# The private users have no shadow entries and PAM knows nothing of them.
UsePAM no
# The stack's dir may sit below /tmp (mode 1777), which sshd's check of the key files' dirs refuses;
# the key files are root's, written by hostplane alone. The chroot's own rule still holds.
StrictModes no
PasswordAuthentication no
KbdInteractiveAuthentication no
Subsystem sftp internal-sftp
${sftpMatchBlock(facts)}`;
}
