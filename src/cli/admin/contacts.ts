// `hostplane admin contact …`: contacts of a customer; API tokens belong to contacts (API guide
// "Authentication").
import { Command } from 'commander';
import { parseId, readSecret, withStore, type CliIo } from '../context.js';
import { contactView, leaf, printList, printResult, type Json } from './views.js';
import { SessionService } from '../../resources/session/session.service.js';

export function contactCommand(io: CliIo): Command {
  const contact = new Command('contact').description('contacts of a customer (tokens belong to contacts)');
  leaf(contact.command('create').description('add a contact to a customer'))
    .requiredOption('--customer <id>', 'customer id', parseId)
    .requiredOption('--name <name>', 'contact name')
    .requiredOption('--email <email>', 'contact e-mail address')
    .option('--phone <phone>', 'contact phone number')
    .action((o: Json & { customer: number; name: string; email: string; phone?: string }) =>
      withStore(io, async ({ admin, out }) => {
        const { contactId } = await admin.customers.createContact(o.customer, { name: o.name, email: o.email, phone: o.phone ?? null });
        const c = contactView(await admin.customers.contact(contactId));
        printResult(out, o, c, `Created contact ${c.id} of customer ${c.customer_id}.\n`);
      }),
    );
  leaf(contact.command('list').description('list contacts'))
    .option('--customer <id>', 'only this customer\'s contacts', parseId)
    .action((o: Json & { customer?: number }) =>
      withStore(io, async ({ admin, out }) => {
        const rows = (await admin.customers.listContacts(o.customer)).map(contactView);
        printList(out, o, rows, ['id', 'customer_id', 'name', 'email', 'phone', 'is_main']);
      }),
    );
  leaf(contact.command('delete').description('delete a contact; its tokens stop working at once'))
    .argument('<id>', 'contact id', parseId)
    .action((id: number, o: Json) =>
      withStore(io, async ({ admin, out }) => {
        await admin.customers.deleteContact(id);
        printResult(out, o, { id: String(id), deleted: true }, `Deleted contact ${id}; its tokens no longer work.\n`);
      }),
    );
  leaf(contact.command('set-portal-password').description("set the contact's customer-portal password (its e-mail address is the user name); a mailbox of that address may not use it"))
    .argument('<id>', 'contact id', parseId)
    .requiredOption('--password-stdin', 'read the password from stdin (one line), out of the shell history and `ps`')
    .action(async (id: number, o: Json) => {
      const password = await readSecret(io, '--password-stdin');
      await withStore(io, async ({ admin, out }) => {
        await admin.customers.setPortalPassword(id, password);
        printResult(out, o, { id: String(id), portal_password: true }, `Set the customer-portal password of contact ${id}; its panel sessions ended.\n`);
      });
    });
  leaf(contact.command('disable-totp').description("turn off the contact's two-factor panel login (a customer who lost the device); it logs in with the portal password alone until it enrols again"))
    .argument('<id>', 'contact id', parseId)
    .action((id: number, o: Json) =>
      withStore(io, async (ctx) => {
        await ctx.admin.customers.contact(id);
        const was = await new SessionService(ctx).disableTotpOf(id);
        printResult(ctx.out, o, { id: String(id), totp_enabled: false }, was ? `Turned off two-factor login of contact ${id}.\n` : `Contact ${id} had no two-factor login.\n`);
      }),
    );
  return contact;
}
