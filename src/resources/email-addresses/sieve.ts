// The Sieve script of a mailbox (issue 11 groundwork; spec §3.3, §2.9; API-NOTES §11): what the
// mail server runs at each delivery, generated from the stored attributes. `junk-folder` files
// mail marked as spam (`X-Spam: Yes`, added by the spam filter) into `Junk`, created when missing,
// and stops there (spam gets no vacation reply). An autoresponder becomes a `vacation` action
// (once per sender per day, never to lists or bounces: Sieve vacation semantics) guarded by its
// dates as UTC instants of 00:00 Europe/Berlin, so the mail server switches exactly at midnight
// while the API catches up within a minute (autoresponder.ts).
import { AUTORESPONDER_ZONE, type AntispamMode, type AutoresponderState } from './email-addresses.rules.js';

/** What a mailbox's script depends on. */
export interface SieveInput {
  antispam: AntispamMode;
  autoresponder: AutoresponderState;
}

/** `"…"` with `\` and `"` escaped (RFC 5228 quoted string; line breaks may stay). */
const quoted = (s: string) => `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;

/** The Berlin offset of `instant` in minutes (60 in winter, 120 in summer). */
function berlinOffsetMinutes(instant: number): number {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone: AUTORESPONDER_ZONE, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric' })
    .formatToParts(new Date(instant))
    .reduce<Record<string, number>>((acc, p) => (p.type === 'literal' ? acc : { ...acc, [p.type]: Number(p.value) }), {});
  return (Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute) - instant) / 60_000;
}

/**
 * 00:00 Europe/Berlin of `date` (YYYY-MM-DD) as the UTC instant Sieve's `currentdate :zone "+0000"
 * "iso8601"` compares with: `berlinMidnightUtc('2027-03-28')` → `'2027-03-27T23:00:00Z'`. Berlin
 * changes its clocks at 02:00/03:00, never at midnight, so midnight always exists once.
 */
export function berlinMidnightUtc(date: string): string {
  const [y, m, d] = date.split('-').map(Number);
  const localMidnight = Date.UTC(y, m - 1, d);
  // The offset at local midnight is that of the instant a day's offset earlier or later: try both.
  for (const guess of [60, 120]) {
    const instant = localMidnight - guess * 60_000;
    if (berlinOffsetMinutes(instant) === guess) return new Date(instant).toISOString().replace('.000Z', 'Z');
  }
  throw new Error(`no 00:00 in ${AUTORESPONDER_ZONE} on ${date}`);
}

/**
 * The mailbox's script, or null when it needs none (no junk filing, no autoresponder that is on or
 * scheduled, or an empty text: there is nothing to reply).
 */
export function sieveScript(input: SieveInput): string | null {
  const ar = input.autoresponder;
  const junk = input.antispam === 'junk-folder';
  const guards: string[] = [];
  if (!ar.active && ar.activates !== null) guards.push(`currentdate :zone "+0000" :value "ge" "iso8601" ${quoted(berlinMidnightUtc(ar.activates))}`);
  if (ar.expires !== null) guards.push(`currentdate :zone "+0000" :value "lt" "iso8601" ${quoted(berlinMidnightUtc(ar.expires))}`);
  const replies = ar.text !== '' && (ar.active || ar.activates !== null);
  if (!junk && !replies) return null;
  const lines = [`require ${JSON.stringify(['fileinto', 'mailbox', ...(replies ? ['vacation', 'date', 'relational'] : [])]).replace(/,/g, ', ')};`];
  if (junk) lines.push('if header :is "X-Spam" "Yes" {', '  fileinto :create "Junk";', '  stop;', '}');
  if (replies) {
    const vacation = `vacation :days 1 :handle "autoresponder" ${quoted(ar.text)};`;
    if (guards.length === 0) lines.push(vacation);
    else lines.push(guards.length === 1 ? `if ${guards[0]} {` : `if allof (${guards.join(',\n          ')}) {`, `  ${vacation}`, '}');
  }
  return `${lines.join('\n')}\n`;
}
