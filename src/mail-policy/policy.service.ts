// The rules of the outbound limits (docs/decisions/0020-outbound-limits.md): a mailbox that logged
// in (SASL) may send to as many recipients per hour as its plan says; the recipient that would pass
// the limit is deferred with a 4xx reply naming it, so its client keeps the message and retries.
// Mail without a login (port 25, mail for this server's mailboxes) is never limited.
import type { Logger } from 'pino';
import type { PolicyRequest } from './protocol.js';
import { RecipientCounter } from './counter.js';

/** Where the limits come from: MailLimitsRepository, or a stand-in in tests. */
export interface LimitsSource {
  recipientsPerHour(address: string): Promise<number | null>;
}

const DUNNO = 'DUNNO';

export class MailPolicy {
  /** The limit each mailbox had at its last read: used while the store cannot be reached. */
  private readonly lastKnown = new Map<string, number>();
  /** The limit of the message open on each connection: read once per message, so a change applies from the next one. */
  private readonly messageLimit = new Map<string, { instance: string; limit: number | null }>();

  constructor(
    private readonly limits: LimitsSource,
    private readonly log: Pick<Logger, 'info' | 'warn' | 'error'>,
    readonly counter = new RecipientCounter(),
  ) {}

  /** The access(5) action for one request of connection `conn` (any string unique among the open connections). */
  async decide(conn: string, q: PolicyRequest): Promise<string> {
    const user = (q.sasl_username ?? '').trim().toLowerCase();
    if (q.request !== 'smtpd_access_policy' || !user) return DUNNO;
    const instance = q.instance ?? '';
    if (q.protocol_state === 'END-OF-MESSAGE') {
      this.messageLimit.delete(conn);
      this.counter.commit(conn, user, Number.parseInt(q.recipient_count ?? '0', 10) || 0);
      return DUNNO;
    }
    if (q.protocol_state !== 'RCPT') return DUNNO;
    const limit = await this.limitOf(conn, instance, user);
    if (limit === 'unreadable') return '451 4.3.0 The sending limits cannot be read at the moment; try again later';
    if (limit === null) {
      this.log.warn({ user }, 'mail policy: a login without an active mailbox of this server; deferred');
      return `450 4.7.1 <${user}> is no active mailbox of this server; try again later`;
    }
    if (this.counter.tryRecipient(conn, instance, user, limit)) return DUNNO;
    const sent = this.counter.count(user);
    this.log.info({ user, sent, limit, recipient: q.recipient }, 'mail policy: recipient deferred, over the limit of its plan');
    const plan = sent === limit ? '(the limit of its plan)' : `(its plan's limit is ${limit})`;
    return `450 4.7.1 <${user}> has sent to ${sent} recipient${sent === 1 ? '' : 's'} in the last hour ${plan}; try again later`;
  }

  /** The connection closed: what it had open is abandoned. */
  closed(conn: string): void {
    this.messageLimit.delete(conn);
    this.counter.closed(conn);
  }

  private async limitOf(conn: string, instance: string, user: string): Promise<number | null | 'unreadable'> {
    const cached = this.messageLimit.get(conn);
    if (cached && cached.instance === instance) return cached.limit;
    let limit: number | null;
    try {
      limit = await this.limits.recipientsPerHour(user);
    } catch (err) {
      // Fail closed, but not on a blip: a mailbox's last known limit still holds.
      const known = this.lastKnown.get(user);
      this.log.error({ err, user, lastKnown: known ?? null }, 'mail policy: the store cannot be read');
      return known ?? 'unreadable';
    }
    if (limit === null) this.lastKnown.delete(user);
    else this.lastKnown.set(user, limit);
    this.messageLimit.set(conn, { instance, limit });
    return limit;
  }
}
