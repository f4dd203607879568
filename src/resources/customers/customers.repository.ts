// All SQL of customers.
import type { Kysely } from 'kysely';
import type { Actor } from '../../auth/actor.js';
import { OWNER_COLUMNS, tokenOwner, type OwnerColumns } from '../../auth/auth.repository.js';
import type { Database } from '../../db/schema.js';
import { scopedPrecompiled, visibleTo, visibleToOwner, type ScopeOwner } from '../../db/scope.js';
import { fetchPage, type Page } from '../../db/paging.js';
import { precompiled } from '../../db/precompiled.js';

export type CustomerRow = NonNullable<Awaited<ReturnType<CustomersRepository['findVisible']>>>;

/** A customer as its wire representation needs it: its row and its main contact. */
const SELECTED = [
  'customers.id',
  'customers.reseller_id',
  'customers.is_reseller',
  'customers.organization',
  'customers.is_login_disabled',
  'customers.external_customer_id',
  'contacts.name as contact_name',
  'contacts.email as contact_email',
  'contacts.phone as contact_phone',
] as const;

export class CustomersRepository {
  // The reads of GET /customers/{id} (also with the token check in the same statement) and of an
  // unpaged GET /customers, compiled once (docs/decisions/0012-request-path.md).
  private readonly byId;
  private readonly all;
  private readonly byIdWithToken;

  constructor(private readonly db: Kysely<Database>) {
    this.byId = scopedPrecompiled(db, (scope, id: number) => this.base(scope).where('customers.id', '=', id));
    this.all = scopedPrecompiled(db, (scope) => this.base(scope).orderBy('customers.id'));
    this.byIdWithToken = precompiled(db, (hash: string, id: number) => this.withToken(hash, id));
  }

  private base(actor: ScopeOwner) {
    return this.db
      .selectFrom('customers')
      .leftJoin('contacts', (j) => j.onRef('contacts.customer_id', '=', 'customers.id').on('contacts.is_main', '=', 1))
      .select(SELECTED)
      .where(visibleTo(actor, 'customers.id'));
  }

  /**
   * The owner of the token with this hash and customer `id` if the owner sees it, in one
   * statement: no row when the token does not authenticate, one row with null customer columns
   * when the owner does not see it (src/auth/plugin.ts TokenRead; one object only, as domains).
   */
  private withToken(hash: string, id: number) {
    return this.db
      .selectFrom(tokenOwner(this.db, hash))
      .leftJoin('customers', (j) => j.on('customers.id', '=', id).on(visibleToOwner('owner', 'customers.id')))
      .leftJoin('contacts', (j) => j.onRef('contacts.customer_id', '=', 'customers.id').on('contacts.is_main', '=', 1))
      .select([...OWNER_COLUMNS, ...SELECTED]);
  }

  findVisible(actor: Actor, id: number) {
    return this.byId.first(actor, id);
  }

  /** GET /customers/{id} with its token check: the token's owner and the customer, if the owner sees it. */
  findVisibleWithToken(hash: string, id: number) {
    return this.byIdWithToken.all(hash, id) as Promise<(OwnerColumns & Partial<CustomerRow>)[]>;
  }

  async list(actor: Actor, page: Page | null) {
    if (!page) {
      const rows = await this.all.all(actor);
      return { rows, total: rows.length };
    }
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
