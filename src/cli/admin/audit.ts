// `hostplane admin audit`: the audit trail for the operator (API guide "Audit events"), every
// customer's events and the refused authentications no customer sees, newest first, with the
// filters of GET /audit-events and their rules.
import { Command, InvalidArgumentError } from 'commander';
import { parseId, withStore, type CliIo } from '../context.js';
import { AuditEventsService } from '../../resources/audit-events/audit-events.service.js';
import type { AuditEventRow } from '../../resources/audit-events/audit-events.repository.js';
import { auditFilters } from '../../resources/audit-events/audit-events.rules.js';
import { auditEventAttributes } from '../../resources/audit-events/audit-events.schema.js';
import { leaf, printList, type Json } from './views.js';

const COLUMNS = ['id', 'created_at', 'status', 'method', 'path', 'customer_id', 'token_id', 'client_ip', 'queue_job_id'];
const MAX_LIMIT = 100_000;

/** An event as `--json` prints it: its id, then the API's attributes (ids as strings). */
const eventView = (r: AuditEventRow) => ({ id: String(r.id), ...auditEventAttributes(r) });

function parseLimit(value: string): number {
  if (!/^[1-9][0-9]{0,5}$/.test(value) || Number(value) > MAX_LIMIT) throw new InvalidArgumentError(`must be a whole number from 1 to ${MAX_LIMIT}.`);
  return Number(value);
}

/** The filter each option sets, and back: `--customer` is customer_id. */
const OPTION_OF: Record<string, string> = { customer_id: '--customer', token_id: '--token' };

interface AuditOptions extends Json {
  customer?: number;
  token?: number;
  since?: string;
  until?: string;
  status?: string;
  path?: string;
  limit?: number;
}

export function auditCommand(io: CliIo): Command {
  return leaf(new Command('audit').description('the audit trail: writes and refused authentications through the API, newest first (kept AUDIT_RETENTION_DAYS)'))
    .option('--customer <id>', "only this customer's events (the caller's customer)", parseId)
    .option('--token <id>', "only this API token's events (its id, as `token list` shows it)", parseId)
    .option('--since <time>', 'only events at or after this time: ISO 8601 (2026-11-22T03:51:28Z) or a date (00:00 UTC)')
    .option('--until <time>', 'only events before this time')
    .option('--status <list>', 'only these statuses or classes, comma-separated: 401, 4xx')
    .option('--path <path>', 'only this path and those below it, e.g. /dns-records')
    .option('--limit <n>', `at most this many events (1 to ${MAX_LIMIT}) [100]`, parseLimit)
    .action((o: AuditOptions) =>
      withStore(io, async (ctx) => {
        const raw: Record<string, string[]> = {};
        if (o.customer !== undefined) raw.customer_id = [String(o.customer)];
        if (o.token !== undefined) raw.token_id = [String(o.token)];
        if (o.since !== undefined) raw.since = [o.since];
        if (o.until !== undefined) raw.until = [o.until];
        if (o.status !== undefined) raw.status = o.status.split(',').map((s) => s.trim());
        if (o.path !== undefined) raw.path = [o.path];
        const filters = auditFilters(raw, (f) => OPTION_OF[f] ?? `--${f}`);
        const rows = await new AuditEventsService(ctx).operatorList(filters, o.limit ?? 100);
        printList(ctx.out, o, rows.map(eventView), COLUMNS);
      }),
    );
}
