// `hostplane admin mail-server …`: the mail servers (Dovecot and Postfix on hostplane's mail
// directory, src/node/render) e-mail addresses live on (operator data;
// docs/decisions/0009-mail-directory.md). The doveadm key is read from a file (never an argument:
// it would show in `ps` and the shell history), stored for the driver and never printed: list and
// --json show where the server is, not the key.
import fs from 'node:fs/promises';
import { Command } from 'commander';
import { CliError, withStore, type CliIo } from '../context.js';
import { MailServersService } from '../../admin/mail-servers.service.js';
import { leaf, printList, printResult, type Json } from './views.js';

const COLUMNS = ['name', 'doveadm_url', 'smtp', 'imap', 'default'];
/** A key file holds one key (Dovecot's are 32 hex digits or so): a bigger one is the wrong file. */
const KEY_FILE_MAX_BYTES = 4096;

/** The key in `file`, without surrounding white space. */
async function readKeyFile(file: string): Promise<string> {
  let text: string;
  try {
    const stat = await fs.stat(file);
    if (!stat.isFile()) throw new CliError(`--doveadm-key-file ${file} is not a file.`, 'invalid_input');
    if (stat.size > KEY_FILE_MAX_BYTES) throw new CliError(`--doveadm-key-file ${file} holds more than ${KEY_FILE_MAX_BYTES} bytes: give the file holding only the doveadm key.`, 'invalid_input');
    text = await fs.readFile(file, 'utf8');
  } catch (e) {
    if (e instanceof CliError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'there is no such file' : code === 'EACCES' ? 'permission denied' : (e as Error).message;
    throw new CliError(`Cannot read --doveadm-key-file ${file}: ${why}.`, 'invalid_input');
  }
  return text.trim();
}

export function mailServerCommand(io: CliIo): Command {
  const cmd = new Command('mail-server').description('the mail servers (Dovecot and Postfix) e-mail addresses live on');

  leaf(cmd.command('add').description("register a mail server after checking that its doveadm HTTP API answers with the key; the first one is the default"))
    .requiredOption('--name <name>', 'a short name, e.g. mx1')
    .requiredOption('--doveadm-url <url>', "Dovecot's doveadm HTTP API as hostplane reaches it, e.g. http://10.0.0.5:8080")
    .requiredOption('--doveadm-key-file <file>', "a file holding Dovecot's doveadm_api_key (read once, stored, never shown)")
    .requiredOption('--smtp <host:port>', 'its SMTP service (Postfix), where hostplane checks that addresses are accepted, e.g. mx1.example.com:25')
    .requiredOption('--imap <host:port>', 'its IMAP service as mail clients reach it, e.g. mx1.example.com:993')
    .option('--default', 'make it the default (the first server is anyway)')
    .action(async (o: Json & { name: string; doveadmUrl: string; doveadmKeyFile: string; smtp: string; imap: string; default?: boolean }) => {
      // Read before the database is opened, as --password-stdin is.
      const key = await readKeyFile(o.doveadmKeyFile);
      await withStore(io, async ({ store, out }) => {
        const s = await new MailServersService(store.db).add({
          name: o.name, doveadmUrl: o.doveadmUrl, doveadmKey: key, smtp: o.smtp, imap: o.imap, isDefault: o.default,
        });
        printResult(out, o, s, `Registered mail server ${s.name} (doveadm ${s.doveadm_url}, SMTP ${s.smtp}, IMAP ${s.imap}${s.default ? ', the default' : ''}).\n`);
      });
    });

  leaf(cmd.command('list').description('list the mail servers; doveadm keys are never shown')).action((o: Json) =>
    withStore(io, async ({ store, out }) => printList(out, o, await new MailServersService(store.db).list(), COLUMNS)),
  );

  leaf(cmd.command('set-default').description('make a mail server the default: packages without one are placed there at their first address'))
    .argument('<name>', 'server name')
    .action((name: string, o: Json) =>
      withStore(io, async ({ store, out }) => {
        const s = await new MailServersService(store.db).setDefault(name);
        printResult(out, o, s, `${s.name} is now the default mail server.\n`);
      }),
    );

  leaf(cmd.command('remove').description('forget a mail server (Dovecot, Postfix and the mail stay); refused while a package lives on it'))
    .argument('<name>', 'server name')
    .action((name: string, o: Json) =>
      withStore(io, async ({ store, out }) => {
        await new MailServersService(store.db).remove(name);
        printResult(out, o, { name, removed: true }, `Removed mail server ${name}; nothing on the server itself was changed.\n`);
      }),
    );
  return cmd;
}
