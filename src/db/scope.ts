// Tenancy in one place (API guide "Authentication"): the customers an actor may see
// are itself and, for a reseller, its end customers. Every repository query of customer-owned
// rows filters with `visibleTo`, or with `visibleToOwner` where the caller is a row of the query.
import type { ExpressionBuilder, Expression, SqlBool, Compilable, Kysely } from 'kysely';
import type { Database } from './schema.js';
import { precompiled } from './precompiled.js';

/** What the scope needs of a caller (an auth Actor has it): who it is, and whether it is a reseller. */
export interface ScopeOwner {
  customerId: number;
  isReseller: boolean;
}

/**
 * A where-clause callback restricting `column` (a customer id column) to the actor's scope:
 * `db.selectFrom('domains').where(visibleTo(actor, 'domains.customer_id'))`.
 */
export function visibleTo(actor: ScopeOwner, column: string) {
  return (eb: ExpressionBuilder<any, any>): Expression<SqlBool> => {
    const col = eb.ref(column);
    if (!actor.isReseller) return eb(col, '=', actor.customerId);
    return eb.or([
      eb(col, '=', actor.customerId),
      eb(col, 'in', (eb as unknown as ExpressionBuilder<Database, never>)
        .selectFrom('customers')
        .select('customers.id')
        .where('customers.reseller_id', '=', actor.customerId)),
    ]);
  };
}

/**
 * visibleTo for a caller that is a row of the query: `owner` names a table with `customer_id` and
 * `is_reseller` (the token's owner, src/auth/auth.repository.ts `tokenOwner`); the same rule:
 * `db.selectFrom(tokenOwner(db, hash)).leftJoin('domains', (j) => j.on(visibleToOwner('owner', 'domains.customer_id')))`.
 */
export function visibleToOwner(owner: string, column: string) {
  return (eb: ExpressionBuilder<any, any>): Expression<SqlBool> => {
    const col = eb.ref(column);
    const me = eb.ref(`${owner}.customer_id`);
    return eb.or([
      eb(col, '=', me),
      eb.and([
        eb(eb.ref(`${owner}.is_reseller`), '=', 1),
        eb(col, 'in', (eb as unknown as ExpressionBuilder<Database, never>)
          .selectFrom('customers as scope_customers')
          .select('scope_customers.id')
          .where('scope_customers.reseller_id', '=', me)),
      ]),
    ]);
  };
}

/**
 * A scoped read compiled once per kind of actor (a reseller's scope has the sub-select, a
 * customer's not; src/db/precompiled.ts): `build` gets a ScopeOwner whose customerId is a
 * placeholder, so pass it to visibleTo unchanged.
 * `const byName = scopedPrecompiled(db, (scope, name: string) => db.selectFrom('domains').select(COLS).where(visibleTo(scope, 'domains.customer_id')).where('name', '=', name))`
 * then `await byName.first(actor, 'example.com')`.
 */
export function scopedPrecompiled<A extends unknown[], O>(db: Kysely<any>, build: (scope: ScopeOwner, ...args: A) => Compilable<O>) {
  const kind = (isReseller: boolean) =>
    precompiled(db, (customerId: number, ...args: A) => build({ customerId, isReseller }, ...args));
  const reseller = kind(true);
  const customer = kind(false);
  return {
    all: (actor: ScopeOwner, ...args: A): Promise<O[]> => (actor.isReseller ? reseller : customer).all(actor.customerId, ...args),
    first: (actor: ScopeOwner, ...args: A): Promise<O | undefined> =>
      (actor.isReseller ? reseller : customer).first(actor.customerId, ...args),
  };
}
