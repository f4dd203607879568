// Rules of customers (API guide "Customers"): resellers change their end customers only.
import type { Actor } from '../../auth/actor.js';
import { AppError, invalidField } from '../../errors.js';
import { isUniqueViolation } from '../../db/dialect.js';
import type { Page } from '../../db/paging.js';
import { findOr404 } from '../../db/ids.js';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { CustomersRepository, type CustomerRow } from './customers.repository.js';
import { lockForCheck, type Precondition } from '../../db/locks.js';
import type { ServiceDeps } from '../service-deps.js';

export class CustomersService {
  // One repository for the service's life: its hot reads are compiled once (src/db/precompiled.ts).
  private readonly repo: CustomersRepository;

  private readonly db: Kysely<Database>;
  constructor(deps: ServiceDeps) {
    this.db = deps.store.db;
    this.repo = new CustomersRepository(this.db);
  }

  list(actor: Actor, page: Page | null) {
    return this.repo.list(actor, page);
  }

  /** `withToken(n)`: what the route's read with the token found for customer n, if it ran for it. */
  get(actor: Actor, id: string, withToken?: (id: number) => CustomerRow[] | undefined) {
    return findOr404('customer', id, async (n) => {
      const found = withToken?.(n);
      return found ? found[0] : this.repo.findVisible(actor, n);
    });
  }

  /** GET /customers/{id}: the token's owner and the customer in one statement (src/auth/plugin.ts TokenRead). */
  oneWithToken(hash: string, id: number) {
    return this.repo.findVisibleWithToken(hash, id);
  }

  /**
   * Checks, writes and re-reads in one transaction, so the answer shows the state this write
   * produced even while other requests change the same customer (a concurrent write waits for
   * this one's commit at the row lock its UPDATE takes). A `precondition` (API guide "Safe
   * retries") is checked there on the customer as it is, under that lock.
   */
  async update(actor: Actor, id: string, attrs: { is_login_disabled?: boolean; external_customer_id?: string | null }, precondition?: Precondition<CustomerRow>) {
    const target = await this.get(actor, id);
    if (target.reseller_id !== actor.customerId) {
      throw new AppError('forbidden', "Only the customer's reseller may change a customer.");
    }
    const values: { is_login_disabled?: 0 | 1; external_customer_id?: string | null } = {};
    if (attrs.is_login_disabled !== undefined) values.is_login_disabled = attrs.is_login_disabled ? 1 : 0;
    if (attrs.external_customer_id !== undefined) values.external_customer_id = attrs.external_customer_id;
    try {
      return await this.db.transaction().execute(async (trx) => {
        const repo = new CustomersRepository(trx);
        await lockForCheck(trx, precondition, 'customers', 'id', target.id);
        const ext = values.external_customer_id;
        if (ext != null && (await repo.externalIdTaken(actor.customerId, ext, target.id))) throw externalIdConflict();
        if (precondition) precondition(await findOr404('customer', id, (n) => repo.findVisible(actor, n)));
        await repo.update(target.id, values);
        return findOr404('customer', id, (n) => repo.findVisible(actor, n));
      });
    } catch (e) {
      // Two concurrent PATCHes with one id: the unique index decides.
      if (isUniqueViolation(e)) throw externalIdConflict();
      throw e;
    }
  }
}

const externalIdConflict = () =>
  invalidField('external_customer_id', 'Another customer of this reseller already has this external_customer_id.', 'conflict');
