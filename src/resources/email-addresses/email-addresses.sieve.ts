// The Sieve script of a mailbox, generated from its attributes and read by Dovecot from the mail
// directory at each delivery (decision 0011): the mailbox's antispam mode applied to mail rspamd
// marked, and the autoresponder as `vacation`, switched at 00:00 Europe/Berlin by the script itself.
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

/** `***SPAM*** ` as a Sieve `:matches` pattern of a subject that has it already (`*` escaped). */
const REWRITTEN = '"\\\\*\\\\*\\\\*SPAM\\\\*\\\\*\\\\* *"';

/**
 * What the script does with mail rspamd marked (`X-Spam: Yes`). A message marked for another
 * recipient may reach a `reject` mailbox too: it goes to Junk, since accepted mail is never dropped.
 * Marked spam never gets an autoresponder reply.
 */
function spamLines(mode: AntispamMode): string[] {
  switch (mode) {
    case 'reject':
    case 'junk-folder':
      return ['if header :is "X-Spam" "Yes" {', '  fileinto :create "Junk";', '  stop;', '}'];
    case 'subject-rewrite':
      return [
        'if header :is "X-Spam" "Yes" {',
        `  if not header :matches "Subject" ${REWRITTEN} {`,
        '    set "subject" "";',
        '    if header :matches "Subject" "*" { set "subject" "${1}"; }',
        '    deleteheader "Subject";',
        '    addheader :last "Subject" "***SPAM*** ${subject}";',
        '  }',
        '  stop;',
        '}',
      ];
    case 'none':
      return ['if header :is "X-Spam" "Yes" {', '  deleteheader "X-Spam";', '  stop;', '}'];
  }
}

const EXTENSIONS: Record<AntispamMode, string[]> = {
  reject: ['fileinto', 'mailbox'],
  'junk-folder': ['fileinto', 'mailbox'],
  'subject-rewrite': ['editheader', 'variables'],
  none: ['editheader'],
};

/**
 * The mailbox's script: every mailbox has one (each antispam mode has its part). Dovecot runs it
 * at every delivery (mail-directory.repository.ts setSieve writes it in the transaction of the
 * change).
 */
export function sieveScript(input: SieveInput): string {
  const ar = input.autoresponder;
  const guards: string[] = [];
  if (!ar.active && ar.activates !== null) guards.push(`currentdate :zone "+0000" :value "ge" "iso8601" ${quoted(berlinMidnightUtc(ar.activates))}`);
  if (ar.expires !== null) guards.push(`currentdate :zone "+0000" :value "lt" "iso8601" ${quoted(berlinMidnightUtc(ar.expires))}`);
  const replies = ar.text !== '' && (ar.active || ar.activates !== null);
  const extensions = [...EXTENSIONS[input.antispam], ...(replies ? ['vacation', 'date', 'relational'] : [])];
  const lines = [`require ${JSON.stringify(extensions).replace(/,/g, ', ')};`, ...spamLines(input.antispam)];
  if (replies) {
    const vacation = `vacation :days 1 :handle "autoresponder" ${quoted(ar.text)};`;
    if (guards.length === 0) lines.push(vacation);
    else lines.push(guards.length === 1 ? `if ${guards[0]} {` : `if allof (${guards.join(',\n          ')}) {`, `  ${vacation}`, '}');
  }
  return `${lines.join('\n')}\n`;
}

/** The script of a stored mailbox (null for a forward, which no script runs for). */
export function mailboxSieve(row: {
  kind: string;
  antispam: string;
  autoresponder_text: string;
  autoresponder_active: number;
  autoresponder_activates: string | null;
  autoresponder_expires: string | null;
}): string | null {
  if (row.kind !== 'mailbox') return null;
  return sieveScript({
    antispam: row.antispam as AntispamMode,
    autoresponder: { text: row.autoresponder_text, active: row.autoresponder_active === 1, activates: row.autoresponder_activates, expires: row.autoresponder_expires },
  });
}
