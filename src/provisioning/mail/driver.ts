// The mail driver (docs/decisions/0009-mail-directory.md; docs/decisions/0004-provisioning-seams.md
// "Drivers"): what e-mail jobs ask a mail server — over its doveadm HTTP API and its SMTP port — to
// decide that a change is live there, to remove a deleted mailbox's stored mail and to read quota
// usage. Passwords, aliases and quotas themselves are never pushed: Dovecot and Postfix read the
// mail directory at every login and delivery (src/node/render).
import path from 'node:path';
import { DoveadmClient, DoveadmError, EX_NOINPUT, EX_NOUSER } from './doveadm.js';
import { acceptsRecipient as smtpAcceptsRecipient } from './smtp-probe.js';

/** A registered mail server as the driver needs it (servers.repository.ts mailServerConn). */
export interface MailServerConn {
  name: string;
  /** doveadm HTTP API base, e.g. http://127.0.0.1:8080 (the path /doveadm/v1 is added). */
  doveadmUrl: string;
  /** The doveadm API key (a secret: never logged, never in an error message). */
  doveadmKey: string;
  /** host:port of its SMTP service (Postfix), for recipient checks. */
  smtp: string;
}

export interface MailDriver {
  /** Whether the server's passdb finds `address` (doveadm auth lookup): a new mailbox is live. */
  authenticates(server: MailServerConn, address: string): Promise<boolean>;
  /** Whether the server's SMTP service accepts `address` as a recipient (RCPT TO, no message sent). */
  acceptsRecipient(server: MailServerConn, address: string): Promise<boolean>;
  /** Whether neither the passdb nor the userdb knows `address` any more (doveadm auth lookup and user). */
  isGone(server: MailServerConn, address: string): Promise<boolean>;
  /**
   * Deletes every stored message and folder of `address` on the server (its mail home). Must work
   * while the mail directory row is inactive (`active = 0`); converges when run again.
   */
  removeMail(server: MailServerConn, address: string): Promise<void>;
  /**
   * Bytes used by each address (doveadm quota get); an address the server does not know is left out.
   * Ask about live addresses only: doveadm still finds an inactive one and, opening its mailboxes,
   * creates an empty mail home again (after removeMail, too).
   */
  quotaUsed(server: MailServerConn, addresses: string[]): Promise<Map<string, number>>;
  close(): Promise<void>;
}

export interface DovecotMailDriverOptions {
  /** Per doveadm request and per SMTP step (default 15 000 ms). */
  timeoutMs?: number;
  /** Addresses per doveadm request in quotaUsed (default 100). */
  quotaBatch?: number;
}

/**
 * Dovecot 2.3 (doveadm HTTP API) and the server's SMTP service, as src/node/render configures them:
 * `const mail = dovecotMailDriver()`; `await mail.authenticates(conn, 'a@example.com')`.
 *
 * - Lookups are `user` lookups (the HTTP API has no `auth lookup`, doveadm.ts) made as the service
 *   `imap` (what a login sees) or `lmtp` (a delivery): the rendered user_query asks for
 *   `active = 1` as password_query does, except for the service `doveadm`, which still finds an
 *   inactive row so that removeMail can find the mail home of an address being deleted.
 * - doveadm takes `*` and `?` in a user name as wildcards (a listing, not a lookup): addresses with
 *   them are refused here with an Error, and left out by quotaUsed.
 */
export function dovecotMailDriver(opts: DovecotMailDriverOptions = {}): MailDriver {
  const timeoutMs = opts.timeoutMs ?? 15_000;
  const quotaBatch = opts.quotaBatch ?? 100;
  const client = (server: MailServerConn) => new DoveadmClient(server.doveadmUrl, server.doveadmKey, { timeoutMs });

  /** Whether the userdb finds `address` when asked as `service`; throws on anything but yes or no. */
  const lookups = async (server: MailServerConn, address: string, services: string[]): Promise<boolean[]> => {
    exactName(address);
    const results = await client(server).batch(
      services.map((service) => ({ command: 'user', parameters: { userMask: [address], authInfo: [`service=${service}`], field: 'home' } })),
    );
    return results.map((r, i) => {
      if (r.ok) return true;
      if (r.exitCode === EX_NOUSER) return false;
      throw new DoveadmError(`doveadm on ${server.name} could not look up ${address} as ${services[i]} (exit code ${r.exitCode}).`);
    });
  };

  return {
    async authenticates(server, address) {
      const [found] = await lookups(server, address, ['imap']);
      return found;
    },

    acceptsRecipient(server, address) {
      return smtpAcceptsRecipient(server.smtp, address, { timeoutMs });
    },

    async isGone(server, address) {
      const found = await lookups(server, address, ['imap', 'lmtp']);
      return !found.some(Boolean);
    },

    async removeMail(server, address) {
      exactName(address);
      const doveadm = client(server);
      const user = await doveadm.run('user', { userMask: [address], authInfo: ['service=doveadm'], field: 'home' });
      if (!user.ok) {
        if (user.exitCode === EX_NOUSER) {
          throw new DoveadmError(
            `The userdb of ${server.name} does not know ${address}: its mail home cannot be found (the mail directory row must stay, inactive, until its mail is removed).`,
          );
        }
        throw new DoveadmError(`doveadm on ${server.name} could not look up ${address} (exit code ${user.exitCode}).`);
      }
      const home = homeOf(user.data, address, server.name);
      // Open sessions end first, so that none writes index files into a home being deleted.
      const kick = await doveadm.run('kick', { mask: [address] });
      if (!kick.ok && kick.exitCode !== EX_NOINPUT) throw new DoveadmError(`doveadm on ${server.name} could not end the sessions of ${address} (exit code ${kick.exitCode}).`);
      if (!(await exists(doveadm, server, home))) return;
      // fs-posix with "dirs" removes the directories too, the home itself included.
      const del = await doveadm.run('fsDelete', { recursive: true, fsDriver: 'posix', fsArgs: 'dirs', path: [home] });
      if (!del.ok && (await exists(doveadm, server, home))) {
        throw new DoveadmError(`doveadm on ${server.name} could not delete the mail home of ${address} (exit code ${del.exitCode}).`);
      }
    },

    async quotaUsed(server, addresses) {
      const used = new Map<string, number>();
      const asked = [...new Set(addresses)].filter((a) => !/[*?]/.test(a));
      const doveadm = client(server);
      for (let i = 0; i < asked.length; i += quotaBatch) {
        const chunk = asked.slice(i, i + quotaBatch);
        const results = await doveadm.batch(chunk.map((user) => ({ command: 'quotaGet', parameters: { user } })));
        results.forEach((r, j) => {
          if (!r.ok) {
            if (r.exitCode === EX_NOUSER) return;
            throw new DoveadmError(`doveadm on ${server.name} could not read the quota of ${chunk[j]} (exit code ${r.exitCode}).`);
          }
          // STORAGE is in KiB, rounded up by Dovecot: bytes are that times 1024.
          const storage = Array.isArray(r.data) ? (r.data as Array<{ type?: string; value?: string }>).find((q) => q.type === 'STORAGE') : undefined;
          const kib = Number(storage?.value);
          if (!storage || !Number.isSafeInteger(kib) || kib < 0) {
            throw new DoveadmError(`doveadm on ${server.name} answered quotaGet of ${chunk[j]} without a STORAGE value (is the quota plugin on?).`);
          }
          used.set(chunk[j], kib * 1024);
        });
      }
      return used;
    },

    async close() {
      // Nothing is held: every request is one fetch.
    },
  };
}

/** doveadm takes a name with `*` or `?` as a mask and lists users instead of looking one up. */
function exactName(address: string): void {
  if (/[*?]/.test(address)) {
    throw new Error(`doveadm cannot look up ${JSON.stringify(address)}: it takes * and ? in a user name as wildcards.`);
  }
}

/**
 * The home `user` answered, checked before anything is deleted under it: absolute, normalised,
 * at least two levels below /.
 */
function homeOf(data: unknown, address: string, serverName: string): string {
  const entry = (data as Record<string, { home?: unknown; error?: unknown }> | null)?.[address];
  const home = entry?.home;
  if (typeof home !== 'string' || !home) {
    throw new DoveadmError(`doveadm on ${serverName} named no mail home for ${address}${entry?.error ? ` (${String(entry.error)})` : ''}.`);
  }
  if (!path.posix.isAbsolute(home) || path.posix.normalize(home) !== home || home.endsWith('/') || home.split('/').filter(Boolean).length < 2) {
    throw new DoveadmError(`doveadm on ${serverName} named ${JSON.stringify(home)} as the mail home of ${address}; not deleting that.`);
  }
  return home;
}

async function exists(doveadm: DoveadmClient, server: MailServerConn, file: string): Promise<boolean> {
  const stat = await doveadm.run('fsStat', { fsDriver: 'posix', fsArgs: '', path: file });
  if (stat.ok) return true;
  if (stat.exitCode === EX_NOINPUT) return false;
  throw new DoveadmError(`doveadm on ${server.name} could not look at ${file} (exit code ${stat.exitCode}).`);
}
