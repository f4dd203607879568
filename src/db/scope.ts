// Tenancy in one place (DESIGN "Tenancy is enforced in one place"): the customers an actor may see
// are itself and, for a reseller, its end customers. Every repository query of customer-owned
// rows filters with `visibleTo`.
import type { ExpressionBuilder, Expression, SqlBool } from 'kysely';
import type { Database } from './schema.js';

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
