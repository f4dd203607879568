// `hostplane admin token …`: API tokens of contacts (API guide "Authentication"). A token is
// printed once, when it is issued; only its hash and prefix are stored.
import { Command } from 'commander';
import { parseId, withStore, type CliIo } from '../context.js';
import { leaf, printList, printResult, tokenView, type Json } from './views.js';

export function tokenCommand(io: CliIo): Command {
  const token = new Command('token').description('API tokens of contacts');
  leaf(token.command('create').description('issue a token; it is printed once and stored only as a hash'))
    .requiredOption('--contact <id>', 'contact id', parseId)
    .option('--label <label>', 'what the token is for')
    .action((o: Json & { contact: number; label?: string }) =>
      withStore(io, async ({ admin, out }) => {
        const { tokenId, token: secret } = await admin.customers.issueToken(o.contact, o.label ?? null);
        const t = tokenView(await admin.customers.token(tokenId));
        printResult(
          out,
          o,
          { ...t, token: secret },
          `Token ${t.id} for contact ${t.contact_id} (customer ${t.customer_id}):\n\n  ${secret}\n\n` +
            'Store it now: it is shown only this once. Use it as "Authorization: token <token>".\n',
        );
      }),
    );
  leaf(token.command('list').description('list tokens (prefix only; the secret is never stored)'))
    .option('--contact <id>', 'only this contact\'s tokens', parseId)
    .action((o: Json & { contact?: number }) =>
      withStore(io, async ({ admin, out }) => {
        if (o.contact !== undefined) await admin.customers.contact(o.contact);
        const rows = (await admin.customers.listTokens(o.contact)).map(tokenView);
        printList(out, o, rows, ['id', 'contact_id', 'customer_id', 'prefix', 'label', 'created_at', 'revoked_at']);
      }),
    );
  leaf(token.command('revoke').description('revoke a token; it stops working at once'))
    .argument('<id>', 'token id', parseId)
    .action((id: number, o: Json) =>
      withStore(io, async ({ admin, out }) => {
        await admin.customers.revokeToken(id);
        const t = tokenView(await admin.customers.token(id));
        printResult(out, o, t, `Revoked token ${t.id} (${t.prefix}…).\n`);
      }),
    );
  return token;
}
