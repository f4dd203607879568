// /audit-events (API guide "Audit events", an addition to the original API): the caller's events,
// newest first, paged even without `page[…]`; one event.
import { actorOf } from '../../auth/plugin.js';
import type { LinkBuilder } from '../../jsonapi/document.js';
import { DEFAULT_PAGE_SIZE } from '../../jsonapi/query.js';
import { readRoutes } from '../../jsonapi/read-routes.js';
import type { TypedApp } from '../../jsonapi/typed-app.js';
import { AUDIT_EVENT_FILTERS, AuditEventIdParam, AuditEventSchemas, auditEventResource } from './audit-events.schema.js';
import type { AuditEventsService } from './audit-events.service.js';

export function auditEventsRoutes(app: TypedApp, service: AuditEventsService, links: LinkBuilder) {
  readRoutes(app, links, {
    segment: 'audit-events',
    filters: AUDIT_EVENT_FILTERS,
    schemas: AuditEventSchemas,
    summaries: {
      list: 'List audit events, newest first (100 a page unless page[size] says otherwise); filters customer_id, token_id, method, path (the path or below it), status (404 or 4xx), since, until',
      one: 'One audit event',
    },
    key: { name: 'id', schema: AuditEventIdParam },
    list: (request, q) => service.list(actorOf(request), q.filters, q.page),
    get: (request, id) => service.get(actorOf(request), id),
    toResource: (row) => auditEventResource(row, links),
    extension: true,
    defaultPageSize: DEFAULT_PAGE_SIZE,
  });
}
