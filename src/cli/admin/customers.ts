// `hostplane admin customer …`: customers and their main contact (API guide "Authentication").
import { Command } from 'commander';
import { parseId, withStore, type CliIo } from '../context.js';
import { customerView, leaf, listLeaf, printResult, type Json } from './views.js';

export function customerCommand(io: CliIo): Command {
  const customer = new Command('customer').description('customers and their main contact');
  leaf(customer.command('create').description('create a customer with its main contact'))
    .option('--org <organization>', 'organization name')
    .requiredOption('--name <name>', 'main contact name')
    .requiredOption('--email <email>', 'main contact e-mail address')
    .option('--phone <phone>', 'main contact phone number')
    .option('--reseller', 'the customer is a reseller (may have end customers)')
    .option('--reseller-id <id>', 'make it an end customer of this reseller', parseId)
    .action((o: Json & { org?: string; name: string; email: string; phone?: string; reseller?: boolean; resellerId?: number }) =>
      withStore(io, async ({ admin, out }) => {
        const { customerId } = await admin.customers.createCustomer({
          organization: o.org ?? null,
          reseller: o.reseller ?? false,
          resellerId: o.resellerId ?? null,
          contact: { name: o.name, email: o.email, phone: o.phone ?? null },
        });
        const c = customerView(await admin.customers.customer(customerId));
        printResult(out, o, c, `Created customer ${c.id} (main contact ${c.main_contact_id}).\n`);
      }),
    );
  listLeaf(customer, io, 'list customers', async (admin) => (await admin.customers.listCustomers()).map(customerView), [
    'id', 'organization', 'name', 'email', 'is_reseller', 'reseller_id', 'main_contact_id', 'has_legacy_password',
  ]);
  return customer;
}
