// Audit events (API guide "Audit events"; docs/decisions/0029-audit-trail.md): recorded by the
// recorder (audit-events.recorder.ts) as the API answers, read by the callers in whose scope they
// are and by the operator, deleted by the purge job once expired.
import type { Actor } from '../../auth/actor.js';
import type { Store } from '../../db/index.js';
import { EMPTY_PAGE, type Page, type PageResult } from '../../db/paging.js';
import { findOr404 } from '../../db/ids.js';
import { nowIso } from '../../db/time.js';
import type { ServiceDeps } from '../service-deps.js';
import { AuditEventsRepository, type AuditEventRow, type NewAuditEvent } from './audit-events.repository.js';
import { auditFilters, type AuditFilters } from './audit-events.rules.js';

export class AuditEventsService {
  private readonly store: Store;
  constructor(deps: Pick<ServiceDeps, 'store'>) {
    this.store = deps.store;
  }

  private get repo() {
    return new AuditEventsRepository(this.store.db);
  }

  /** Stores events, in one statement. */
  record(events: NewAuditEvent[]): Promise<void> {
    return this.repo.insert(events);
  }

  /** The caller's events (a reseller's: its end customers' too), newest first; 400 on a bad filter value. */
  list(actor: Actor, filters: Record<string, string[]>, page: Page | null): Promise<PageResult<AuditEventRow>> {
    const f = auditFilters(filters);
    return f ? this.repo.list(actor, f, page) : Promise.resolve(EMPTY_PAGE);
  }

  get(actor: Actor, id: string): Promise<AuditEventRow> {
    return findOr404('audit-event', id, (n) => this.repo.findVisible(actor, n));
  }

  /**
   * Every event matching `filters` (null: none can match), newest first, at most `limit`: for the
   * operator's CLI only, never reachable from a route.
   */
  async operatorList(filters: AuditFilters | null, limit: number): Promise<AuditEventRow[]> {
    if (!filters) return [];
    return (await this.repo.list(null, filters, { number: 1, size: limit })).rows;
  }

  /** Deletes the expired events (the purge job); how many. */
  purgeExpired(now: string = nowIso()): Promise<number> {
    return this.repo.purgeExpired(now);
  }
}
