// All SQL of audit events (API guide "Audit events"): the recorder's inserts, the scoped reads of
// the API (an event is visible when its customer is in the caller's scope, src/db/scope.ts; one
// without a customer never is), the operator's unscoped read and the purge.
import { sql, type ExpressionBuilder, type Insertable, type Kysely, type Selectable } from 'kysely';
import type { AuditEventsTable, Database } from '../../db/schema.js';
import { visibleTo, type ScopeOwner } from '../../db/scope.js';
import { fetchPage, type Page, type PageResult } from '../../db/paging.js';
import type { AuditFilters } from './audit-events.rules.js';

export type AuditEventRow = Selectable<AuditEventsTable>;
export type NewAuditEvent = Insertable<AuditEventsTable>;

type Where = ExpressionBuilder<Database, 'audit_events'>;

/** The conditions of `f`, ANDed: `q.where((eb) => matching(eb, f))`. */
function matching(eb: Where, f: AuditFilters) {
  const all = [];
  if (f.customerIds) all.push(eb('audit_events.customer_id', 'in', f.customerIds));
  if (f.tokenIds) all.push(eb('audit_events.token_id', 'in', f.tokenIds));
  if (f.methods) all.push(eb('audit_events.method', 'in', f.methods));
  if (f.paths && !f.paths.includes('/')) {
    // Exactly the path, or below it: the text after it starts with / or ?. substr and length count
    // characters on both engines (LIKE would not do: SQLite's ignores case).
    const below = (p: string) => eb(sql<string>`substr(audit_events.path, 1, length(${p}) + 1)`, 'in', [`${p}/`, `${p}?`]);
    all.push(eb.or(f.paths.flatMap((p) => [eb('audit_events.path', '=', p), below(p)])));
  }
  if (f.statuses || f.classes) {
    all.push(eb.or([
      ...(f.statuses ? [eb('audit_events.status', 'in', f.statuses)] : []),
      ...(f.classes ?? []).map((c) => eb.and([eb('audit_events.status', '>=', c * 100), eb('audit_events.status', '<', c * 100 + 100)])),
    ]));
  }
  if (f.since) all.push(eb('audit_events.created_at', '>=', f.since));
  if (f.until) all.push(eb('audit_events.created_at', '<', f.until));
  return eb.and(all);
}

export class AuditEventsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(event: NewAuditEvent): Promise<void> {
    await this.db.insertInto('audit_events').values(event).execute();
  }

  /** Events in `scope` (null: every event, for the operator) that match `f`, newest (last recorded) first. */
  list(scope: ScopeOwner | null, f: AuditFilters, page: Page | null): Promise<PageResult<AuditEventRow>> {
    let q = this.db.selectFrom('audit_events').selectAll('audit_events');
    if (scope) q = q.where(visibleTo(scope, 'audit_events.customer_id'));
    return fetchPage(q.where((eb) => matching(eb, f)).orderBy('audit_events.id', 'desc'), page);
  }

  findVisible(scope: ScopeOwner, id: number): Promise<AuditEventRow | undefined> {
    return this.db.selectFrom('audit_events').selectAll().where(visibleTo(scope, 'audit_events.customer_id')).where('id', '=', id).executeTakeFirst();
  }

  /** Deletes the events whose expiry is before `now` (ISO); how many. */
  async purgeExpired(now: string): Promise<number> {
    const r = await this.db.deleteFrom('audit_events').where('expires_at', '<', now).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
