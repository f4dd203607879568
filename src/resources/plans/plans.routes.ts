// /plans (API guide "Plans"): list (no filters) and one plan. Read-only.
import { actorOf } from '../../auth/plugin.js';
import type { LinkBuilder } from '../../jsonapi/document.js';
import type { TypedApp } from '../../jsonapi/typed-app.js';
import { readRoutes } from '../../jsonapi/read-routes.js';
import { PLAN_FILTERS, PlanIdParam, PlanSchemas, planResource } from './plans.schema.js';
import type { PlansService } from './plans.service.js';

export function plansRoutes(app: TypedApp, service: PlansService, links: LinkBuilder) {
  readRoutes(app, links, {
    segment: 'plans',
    filters: PLAN_FILTERS,
    schemas: PlanSchemas,
    key: { name: 'id', schema: PlanIdParam },
    summaries: { list: 'List plans (no filters)', one: 'One plan' },
    list: (request, q) => service.list(actorOf(request), q.page),
    get: (request, id) => service.get(actorOf(request), id),
    toResource: (row) => planResource(row, links),
  });
}
