// The sliding hour and the store's failures (docs/decisions/0020-outbound-limits.md), on a clock
// the test moves: recipients leave the count exactly an hour (and at most a second more) after
// they were sent; no hour ever holds more than the limit; while the store cannot be read, a
// mailbox's last known limit holds and a mailbox without one is deferred (fail closed, nothing lost).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RecipientCounter } from '../../src/mail-policy/counter.js';
import { MailPolicy } from '../../src/mail-policy/policy.service.js';
import { endOfMessage, rcpt } from '../helpers/mail-policy.js';

const HOUR = 3_600_000;
const quiet = { info: () => {}, warn: () => {}, error: () => {} };

let messages = 0;
/** A message of `n` recipients: how many were accepted (and committed). */
function send(c: RecipientCounter, user: string, n: number, limit: number, conn = 'c1'): number {
  const instance = `m${++messages}`;
  let ok = 0;
  for (let i = 0; i < n; i++) if (c.tryRecipient(conn, instance, user, limit)) ok++;
  c.commit(conn, user, ok);
  return ok;
}

describe('the sliding hour', () => {
  it('recipients leave the count when the whole second they were sent in is an hour ago, not before', () => {
    let now = Date.UTC(2026, 0, 1, 12, 0, 0, 400);
    const c = new RecipientCounter(HOUR, () => now);
    expect(send(c, 'a@x', 5, 5)).toBe(5);
    expect(send(c, 'a@x', 1, 5)).toBe(0);
    now = Date.UTC(2026, 0, 1, 13, 0, 0, 999);
    expect(send(c, 'a@x', 1, 5)).toBe(0);
    now += 1; // 13:00:01.000: all of 12:00:00 is more than an hour ago
    expect(c.count('a@x')).toBe(0);
    expect(send(c, 'a@x', 6, 5)).toBe(5);
  });

  it('property: whatever the messages and pauses, no hour holds more accepted recipients than the limit', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20 }),
        // Pauses near the edges of seconds and of the hour too, where an off-by-one would show.
        fc.array(
          fc.record({ wait: fc.oneof(fc.integer({ min: 0, max: HOUR / 3 }), fc.constantFrom(1, 599, 999, 1000, HOUR - 1000, HOUR - 1, HOUR)), n: fc.integer({ min: 0, max: 12 }) }),
          { maxLength: 60 },
        ),
        (limit, messages) => {
          let now = 0;
          const c = new RecipientCounter(HOUR, () => now);
          const accepted: { at: number; n: number }[] = [];
          for (const m of messages) {
            now += m.wait;
            accepted.push({ at: now, n: send(c, 'a@x', m.n, limit) });
          }
          for (const { at } of accepted) {
            const inHour = accepted.filter((e) => e.at >= at && e.at < at + HOUR).reduce((s, e) => s + e.n, 0);
            expect(inHour).toBeLessThanOrEqual(limit);
          }
        },
      ),
    );
  });

  it('sweep() forgets mailboxes whose hour has passed', () => {
    let now = 0;
    const c = new RecipientCounter(HOUR, () => now);
    send(c, 'a@x', 3, 10);
    now += 2 * HOUR;
    c.sweep();
    expect((c as unknown as { sent: Map<string, unknown> }).sent.size).toBe(0);
  });
});

describe('when the store cannot be read', () => {
  it("a mailbox's last known limit holds; one never read is deferred with 451 until the store answers", async () => {
    let down = false;
    const policy = new MailPolicy({ recipientsPerHour: async () => (down ? Promise.reject(new Error('connection refused')) : 2) }, quiet);
    const ask = (user: string, to: string, instance: string) => policy.decide('c1', rcpt(user, to, instance));
    expect(await ask('a@x', 'r1@y', 'm1')).toBe('DUNNO');
    await policy.decide('c1', endOfMessage('a@x', 1, 'm1'));
    down = true;
    expect(await ask('a@x', 'r2@y', 'm2')).toBe('DUNNO');
    expect(await ask('a@x', 'r3@y', 'm2')).toBe('450 4.7.1 <a@x> has sent to 2 recipients in the last hour (the limit of its plan); try again later');
    expect(await ask('b@x', 'r1@y', 'm3')).toBe('451 4.3.0 The sending limits cannot be read at the moment; try again later');
    down = false;
    expect(await ask('b@x', 'r1@y', 'm4')).toBe('DUNNO');
  });

  it('the login name is compared without regard to letter case', async () => {
    const policy = new MailPolicy({ recipientsPerHour: async (a) => (a === 'a@x' ? 1 : null) }, quiet);
    expect(await policy.decide('c1', rcpt('A@X', 'r1@y', 'm1'))).toBe('DUNNO');
    expect(await policy.decide('c1', rcpt('a@x', 'r2@y', 'm1'))).toBe('450 4.7.1 <a@x> has sent to 1 recipient in the last hour (the limit of its plan); try again later');
  });
});
