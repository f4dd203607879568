// All SQL of plans (API guide "Plans"): plans are not owned by one customer, so visibility is
// derived: the plans of packages in the caller's scope, and for a reseller the plans it sells.
import type { ExpressionBuilder, Kysely, Selectable } from 'kysely';
import type { Actor } from '../../auth/actor.js';
import type { Database, PlansTable } from '../../db/schema.js';
import { visibleTo } from '../../db/scope.js';
import { fetchPage, type Page } from '../../db/paging.js';

export type PlanRow = Selectable<PlansTable>;

function planVisibleTo(actor: Actor) {
  return (eb: ExpressionBuilder<Database, 'plans'>) => {
    const ofPackages = eb(
      'plans.id',
      'in',
      eb.selectFrom('packages').select('packages.plan_id').where(visibleTo(actor, 'packages.customer_id')),
    );
    return actor.isReseller ? eb.or([ofPackages, eb('plans.reseller_id', '=', actor.customerId)]) : ofPackages;
  };
}

export class PlansRepository {
  constructor(private readonly db: Kysely<Database>) {}

  private base(actor: Actor) {
    return this.db.selectFrom('plans').selectAll('plans').where(planVisibleTo(actor));
  }

  findVisible(actor: Actor, id: number) {
    return this.base(actor).where('plans.id', '=', id).executeTakeFirst();
  }

  list(actor: Actor, page: Page | null) {
    return fetchPage(this.base(actor).orderBy('plans.id'), page);
  }
}
