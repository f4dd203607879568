// Jobs of e-mail addresses (API guide "Queue jobs", "E-mail addresses";
// docs/decisions/0009-mail-directory.md): the mail directory entry is written with the API change,
// so these jobs only wait for the mail server to show it, and remove what the server stores.
// - ('email-address', 'create') is done when the package's mail server authenticates the mailbox
//   (doveadm auth lookup) or accepts the forward as a recipient (SMTP RCPT), and its rspamd applies
//   the settings map that has the address's antispam mode (decision 0019) and, for the first
//   address of its domain there, the DKIM tables that sign its mail (decision 0021).
// - ('email-address', 'delete') removes the mailbox's stored mail, then its directory entry, and is
//   done when the server knows the address no more and refuses it at RCPT; then the row goes.
// - ('email-address', 'refresh') measures the mailboxes' usage daily (email-addresses.usage.ts).
// - ('email-address', 'schedule') applies the autoresponders' reached dates every minute.
// Every step converges when run again; jobs on one address run in order (a delete queued behind a
// create waits for it, and a create that finds its address being deleted is simply done).
import { Type } from 'typebox';
import { defineJob, DONE, objectIdOf, PermanentJobError, type JobContext } from '../job-contract.js';
import type { MailServerConn } from '../../provisioning/mail/driver.js';
import { MailServersRepository, mailServerConn } from '../../provisioning/mail/servers.repository.js';
import { EmailAddressesRepository } from './email-addresses.repository.js';
import { MailDirectoryRepository } from './email-addresses.mail-directory.repository.js';
import { refreshEmailUsage } from './email-addresses.usage.js';
import { usageRefreshJob } from '../../queue/usage-refresh.js';
import { autoresponderTurn, writeMissingScripts } from './email-addresses.autoresponder.js';
import { mapProgress } from '../../provisioning/mail/versioned-map.js';
import { dkimApplied } from '../dns-records/dns-records.dkim.js';


/** The job's address row (undefined when it is gone) and, lazily, its mail server as the driver needs it. */
async function addressOf(ctx: JobContext<unknown>) {
  const id = objectIdOf(ctx.job);
  const repo = new EmailAddressesRepository(ctx.store.db);
  const row = await repo.byId(id);
  const server = async (): Promise<MailServerConn> => {
    const found = row && (await new MailServersRepository(ctx.store.db).byName(row.mail_server_name));
    if (!found) throw new PermanentJobError(`mail server ${row?.mail_server_name} is not registered`);
    return mailServerConn(found);
  };
  return { repo, id, row, server };
}

export const createEmailJob = defineJob({
  type: 'email-address',
  action: 'create',
  // settingsVersion: the version of the server's settings map that first has the address's mode;
  // absent when the address is in `reject`, which the map does not list.
  // dkim: the versions of the server's DKIM tables the address's mail is signed from (decision 0021).
  payload: Type.Object({
    settingsVersion: Type.Optional(Type.Integer({ minimum: 1 })),
    dkim: Type.Optional(Type.Object({ signing: Type.Integer({ minimum: 1 }), keys: Type.Integer({ minimum: 1 }) })),
  }),
  run: async (ctx) => {
    const { repo, id, row, server: serverOf } = await addressOf(ctx);
    if (!row || row.state === 'deleting') return DONE;
    const server = await serverOf();
    // A run that waits for rspamd comes back every few hundred ms: doveadm is asked once.
    if ((ctx.progress as { known?: boolean } | null)?.known !== true) {
      const live =
        row.kind === 'mailbox' ? await ctx.drivers.mail.authenticates(server, row.address) : await ctx.drivers.mail.acceptsRecipient(server, row.address);
      if (!live) throw new Error(`${row.address} is not known to mail server ${server.name} yet`);
      if (ctx.payload.settingsVersion !== undefined || ctx.payload.dkim !== undefined) await ctx.saveProgress({ known: true });
    }
    if (ctx.payload.settingsVersion !== undefined) {
      const p = await mapProgress(ctx.store.db, server.name, 'settings', ctx.payload.settingsVersion);
      if (p.state === 'pending') return { status: 'wait', ms: p.retryMs };
      // Retried with backoff; the job's error says so once it gives up.
      if (p.state === 'silent') throw new Error(`the antispam mode of ${row.address} is not live: ${p.reason}`);
    }
    if (ctx.payload.dkim !== undefined) {
      const waiting = await dkimApplied(ctx.store.db, server.name, ctx.payload.dkim, `mail of ${row.address} is not signed yet`);
      if (waiting) return waiting;
    }
    await repo.transition(id, 'pending', 'live');
    return DONE;
  },
});

export const deleteEmailJob = defineJob({
  type: 'email-address',
  action: 'delete',
  payload: Type.Object({}),
  run: async (ctx) => {
    const { repo, id, row, server: serverOf } = await addressOf(ctx);
    if (!row) return DONE;
    const server = await serverOf();
    const dir = new MailDirectoryRepository(ctx.store.db);
    // The mail goes while the directory still has the (inactive) entry the server finds it by;
    // an entry already removed means an earlier run removed the mail first.
    if (row.kind === 'mailbox' && (await dir.hasUser(row.address))) await ctx.drivers.mail.removeMail(server, row.address);
    await ctx.store.db.transaction().execute(async (trx) => {
      const d = new MailDirectoryRepository(trx);
      await d.removeUser(row.address);
      await d.setAliases(row.address, [], row.mail_server_name);
    });
    if (!(await ctx.drivers.mail.isGone(server, row.address)) || (await ctx.drivers.mail.acceptsRecipient(server, row.address))) {
      throw new Error(`mail server ${server.name} still knows ${row.address}`);
    }
    await repo.delete(id);
    return DONE;
  },
});

/** Measures every live mailbox once a day. */
export const refreshEmailUsageJob = usageRefreshJob('email-address', (ctx: JobContext) => refreshEmailUsage(ctx.store, ctx.drivers.mail));

/** Applies the autoresponders' reached dates every minute, and writes scripts that are missing (autoresponder.ts). */
export const autoresponderScheduleJob = defineJob({
  type: 'email-address',
  action: 'schedule',
  payload: Type.Object({}),
  every: 60 * 1000,
  run: async (ctx) => {
    await autoresponderTurn(ctx.store, new Date());
    await writeMissingScripts(ctx.store);
    return DONE;
  },
});

export const EMAIL_JOBS = [createEmailJob, deleteEmailJob, refreshEmailUsageJob, autoresponderScheduleJob];
