// `hostplane admin token …`: API tokens of contacts (API guide "Authentication", "Scoped tokens").
// A token is printed once, when it is issued; only its hash and prefix are stored.
import { Command } from 'commander';
import { parseId, withStore, type CliIo } from '../context.js';
import { leaf, printList, printResult, tokenView, type Json } from './views.js';

const collect = (value: string, previous: string[]) => [...previous, value];

export function tokenCommand(io: CliIo): Command {
  const token = new Command('token').description('API tokens of contacts');
  leaf(token.command('create').description('issue a token; it is printed once and stored only as a hash. Scope options limit it (API guide "Scoped tokens")'))
    .requiredOption('--contact <id>', 'contact id', parseId)
    .option('--label <label>', 'what the token is for')
    .option('--read-only', 'the token may only read')
    .option('--domain <name>', "only this domain of the contact's customer, its records, subdomains and e-mail addresses; repeat for several", collect, [])
    .option('--acme-challenge', 'only TXT records named _acme-challenge[.<sub>] (ACME DNS-01 clients such as lego and acme.sh); of every domain the contact sees, or of the --domain ones')
    .option('--expires <date>', 'stops working then: YYYY-MM-DD (00:00 Europe/Berlin) or an ISO timestamp with offset, e.g. 2027-01-31T12:00:00Z')
    .option('--allow-ip <cidr>', 'works only from this network or address (IPv4 or IPv6); repeat for several', collect, [])
    .action(
      (o: Json & { contact: number; label?: string; readOnly?: boolean; domain: string[]; acmeChallenge?: boolean; expires?: string; allowIp: string[] }) =>
        withStore(io, async ({ admin, out }) => {
          const scope = { readOnly: o.readOnly, domains: o.domain, acmeChallenge: o.acmeChallenge, expires: o.expires, allowIps: o.allowIp };
          const { tokenId, token: secret } = await admin.customers.issueToken(o.contact, o.label ?? null, scope);
          const t = tokenView(await admin.customers.token(tokenId));
          printResult(
            out,
            o,
            { ...t, token: secret },
            `Token ${t.id} for contact ${t.contact_id} (customer ${t.customer_id}), scope: ${t.scope}` +
              `${t.expires_at ? `, expires ${t.expires_at}` : ''}:\n\n  ${secret}\n\n` +
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
        printList(out, o, rows, ['id', 'contact_id', 'customer_id', 'prefix', 'label', 'scope', 'expires_at', 'last_used_at', 'created_at', 'revoked_at']);
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
