// All SQL of audit events (API guide "Audit events"): the recorder's inserts, the scoped reads of
// the API (an event is visible when its customer is in the caller's scope, src/db/scope.ts; one
// without a customer never is), the operator's unscoped read and the purge.
import { sql, type ExpressionBuilder, type Insertable, type Kysely, type Selectable } from 'kysely';
import { jsonRowsInsert } from '../../db/dialect.js';
import type { AuditEventsTable, Database } from '../../db/schema.js';
import { visibleTo, type ScopeOwner } from '../../db/scope.js';
import { fetchPage, type Page, type PageResult } from '../../db/paging.js';
import type { AuditFilters } from './audit-events.rules.js';

export type AuditEventRow = Selectable<AuditEventsTable>;
export type NewAuditEvent = Insertable<AuditEventsTable>;

type Where = ExpressionBuilder<Database, 'audit_events'>;

/** The columns an insert sets, in the order of each row's values. */
const INSERT_COLUMNS = [
  ['created_at', 'text'], ['expires_at', 'text'], ['customer_id', 'integer'], ['contact_id', 'integer'], ['token_id', 'integer'], ['client_ip', 'text'],
  ['method', 'text'], ['path', 'text'], ['status', 'integer'], ['request_id', 'text'], ['queue_job_id', 'integer'], ['idempotency_key', 'text'],
] as const satisfies readonly (readonly [keyof NewAuditEvent, 'text' | 'integer'])[];

/** The insert of a batch, built once per store. */
const inserts = new WeakMap<Kysely<Database>, ReturnType<typeof jsonRowsInsert>>();

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

  /**
   * Stores a batch of events in one statement, which on PostgreSQL commits without waiting for
   * the disk (docs/decisions/0029-audit-trail.md). Not in a transaction.
   */
  async insert(events: NewAuditEvent[]): Promise<void> {
    let insert = inserts.get(this.db);
    if (!insert) inserts.set(this.db, (insert = jsonRowsInsert(this.db, 'audit_events', INSERT_COLUMNS, { unflushed: true })));
    await this.db.executeQuery(insert(events.map((e) => INSERT_COLUMNS.map(([c]) => e[c] ?? null))));
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
