// Rules of customers (spec §2.2, §4.3.9, API-NOTES §6): resellers change their end customers only.
import type { Actor } from '../../auth/actor.js';
import { AppError, notFound } from '../../errors.js';
import { isUniqueViolation } from '../../db/dialect.js';
import type { Page } from '../../db/paging.js';
import { parseNumericId } from '../../db/ids.js';
import type { CustomersRepository } from './customers.repository.js';

/** Ids are serial numbers; anything else, or past the 32-bit integer columns (PostgreSQL would fail), cannot exist. */

export class CustomersService {
  constructor(private readonly repo: CustomersRepository) {}

  list(actor: Actor, page: Page | null) {
    return this.repo.list(actor, page);
  }

  async get(actor: Actor, id: string) {
    const n = parseNumericId(id);
    const row = n === null ? undefined : await this.repo.findVisible(actor, n);
    if (!row) throw notFound('customer');
    return row;
  }

  async update(actor: Actor, id: string, attrs: { is_login_disabled?: boolean; external_customer_id?: string | null }) {
    const target = await this.get(actor, id);
    if (target.reseller_id !== actor.customerId) {
      throw new AppError('forbidden', "Only the customer's reseller may change a customer (spec §4.3.9).");
    }
    const values: { is_login_disabled?: 0 | 1; external_customer_id?: string | null } = {};
    if (attrs.is_login_disabled !== undefined) values.is_login_disabled = attrs.is_login_disabled ? 1 : 0;
    if (attrs.external_customer_id !== undefined) {
      const ext = attrs.external_customer_id;
      if (ext !== null && (await this.repo.externalIdTaken(actor.customerId, ext, target.id))) {
        throw externalIdConflict();
      }
      values.external_customer_id = ext;
    }
    try {
      await this.repo.update(target.id, values);
    } catch (e) {
      // Two concurrent PATCHes with one id: the unique index decides.
      if (isUniqueViolation(e)) throw externalIdConflict();
      throw e;
    }
    return this.get(actor, id);
  }
}

const externalIdConflict = () =>
  new AppError('conflict', 'Another customer of this reseller already has this external_customer_id.', {
    pointer: '/data/attributes/external_customer_id',
  });
