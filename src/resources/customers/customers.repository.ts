// All SQL of customers.
import type { Kysely } from 'kysely';
import type { Actor } from '../../auth/actor.js';
import type { Database } from '../../db/schema.js';
import { visibleTo } from '../../db/scope.js';
import { fetchPage, type Page } from '../../db/paging.js';

export type CustomerRow = NonNullable<Awaited<ReturnType<CustomersRepository['findVisible']>>>;

export class CustomersRepository {
  constructor(private readonly db: Kysely<Database>) {}

  private base(actor: Actor) {
    return this.db
      .selectFrom('customers')
      .leftJoin('contacts', (j) => j.onRef('contacts.customer_id', '=', 'customers.id').on('contacts.is_main', '=', 1))
      .select([
        'customers.id',
        'customers.reseller_id',
        'customers.is_reseller',
        'customers.organization',
        'customers.is_login_disabled',
        'customers.external_customer_id',
        'contacts.name as contact_name',
        'contacts.email as contact_email',
        'contacts.phone as contact_phone',
      ])
      .where(visibleTo(actor, 'customers.id'));
  }

  findVisible(actor: Actor, id: number) {
    return this.base(actor).where('customers.id', '=', id).executeTakeFirst();
  }

  list(actor: Actor, page: Page | null) {
    return fetchPage(this.base(actor).orderBy('customers.id'), page);
  }

  async update(id: number, values: { is_login_disabled?: 0 | 1; external_customer_id?: string | null }) {
    if (Object.keys(values).length) await this.db.updateTable('customers').set(values).where('id', '=', id).execute();
  }

  async externalIdTaken(resellerId: number, externalId: string, exceptId: number) {
    const row = await this.db
      .selectFrom('customers')
      .select('id')
      .where('reseller_id', '=', resellerId)
      .where('external_customer_id', '=', externalId)
      .where('id', '!=', exceptId)
      .executeTakeFirst();
    return row !== undefined;
  }
}
