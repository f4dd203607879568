// Domain names in their ACE (punycode) and Unicode forms (API guide "Compatibility with existing
// clients", "DNS records"): the one home of the name rules. Two rule sets on purpose: `toAce` says
// what can be a domain (the whole name IDNA-mapped, no underscores, at least two labels); `aceLabel`
// checks the labels of DNS owner names and of host names in record data one by one (underscores
// where the record allows them).
import { domainToASCII, domainToUnicode } from 'node:url';

/** Letters, digits, hyphens and underscores; no hyphen at either end. */
const LABEL_WITH_UNDERSCORE = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;
/** A host name label (RFC 1123): letters, digits, hyphens; no hyphen at either end. */
const HOST_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** ASCII characters other than letters, digits, '.' and '-': none is in a domain name. */
const NOT_IN_NAME = /[\u0000-\u002c\u002f\u003a-\u0040\u005b-\u0060\u007b-\u007f]/;

/**
 * The ACE form of `name`, or null when it is not ACE-encodable as a host name (underscores,
 * empty labels, over-long names): `toAce('Bücher.de')` → `'xn--bcher-kva.de'`.
 */
export function toAce(name: string): string | null {
  if (name.length === 0 || name.length > 253 * 4) return null;
  const trimmed = name.endsWith('.') ? name.slice(0, -1) : name;
  // domainToASCII parses URL host syntax (it cuts at / ? # and percent-decodes): among ASCII
  // characters only letters, digits, '.' and '-' may reach it.
  if (NOT_IN_NAME.test(trimmed)) return null;
  const ace = domainToASCII(trimmed);
  if (!ace || ace.length > 253) return null;
  const labels = ace.split('.');
  if (labels.length < 2 || !labels.every((l) => HOST_LABEL.test(l))) return null;
  if (/^[0-9]+$/.test(labels[labels.length - 1])) return null; // an IP address, not a domain
  return ace;
}

/** What a domain name may be, for the messages that refuse one. */
export const DOMAIN_NAME_RULE =
  'A domain name is two or more labels separated by dots, e.g. example.com; a label is 1 to 63 letters, ' +
  'digits and hyphens (letters of any script, as in bücher.de), not starting or ending with a hyphen; ' +
  'the whole name has at most 253 characters.';

const shown = (s: string) => JSON.stringify(s.length > 80 ? `${s.slice(0, 77)}...` : s);

function characterName(c: string): string {
  if (c === ' ') return 'a space';
  if (c < ' ' || c === '\u007f') return 'a control character';
  return `"${c}"`;
}

/**
 * Why `name` (any case) is no domain name, the first rule it breaks, or null when it is one:
 * `domainNameProblem('bad_domain')` → `'it contains "_"'`, `domainNameProblem('localhost')` →
 * `'it has one label only'`. `aceOf` decides; this only explains.
 */
export function domainNameProblem(name: string): string | null {
  if (aceOf(name) !== null) return null;
  if (name === '') return 'it is empty';
  const trimmed = name.endsWith('.') ? name.slice(0, -1) : name;
  const bad = NOT_IN_NAME.exec(trimmed);
  if (bad) return `it contains ${characterName(bad[0])}`;
  const labels = trimmed.split('.');
  if (labels.some((l) => l === '')) return 'it has an empty label (a dot at the start, or two in a row)';
  if (labels.length < 2) return 'it has one label only';
  const aces: string[] = [];
  for (const label of labels) {
    // ASCII labels as they are: domainToASCII alone would read `1` or `0x10` as IPv4 addresses.
    const ace = /^[\x21-\x7e]*$/.test(label) ? label.toLowerCase() : domainToASCII(label.toLowerCase());
    if (!ace || ace.includes('.')) return `the label ${shown(label)} is not a valid international name`;
    if (ace.length > 63) return `the label ${shown(label)} is longer than 63 characters${ace === label.toLowerCase() ? '' : ' in ACE form'}`;
    if (ace.startsWith('-') || ace.endsWith('-')) return `the label ${shown(label)} starts or ends with a hyphen`;
    aces.push(ace);
  }
  if (aces.join('.').length > 253) return 'it is longer than 253 characters';
  if (/^[0-9]+$/.test(aces[aces.length - 1])) return 'its last label is a number, as in an IP address';
  return 'it is not a valid international name';
}

/**
 * The sentence that refuses `name`: `notADomainName('bad_domain')` →
 * `'"bad_domain" is not a domain name: it contains "_". A domain name is …'`.
 */
export const notADomainName = (name: string) => `${shown(name)} is not a domain name: ${domainNameProblem(name) ?? 'it is not valid'}. ${DOMAIN_NAME_RULE}`;

/** The Unicode form of an ACE name for display, or the name itself: `toUnicode('xn--bcher-kva.de')` → `'bücher.de'`. */
export const toUnicode = (ace: string) => domainToUnicode(ace) || ace;

const ACE_MEMO_MAX = 1000;
const aceMemo = new Map<string, string | null>();

/** The ACE form of a name in any case, or null when no domain can have it: `aceOf('Bücher.DE')` → `'xn--bcher-kva.de'`. */
export function aceOf(name: string): string | null {
  // Remembered: the hot read GET /domains/{name} asks for the same name twice per request (its
  // token check and its handler), clients ask for the same names again and again, and IDNA
  // mapping costs more than a lookup (docs/decisions/0012-request-path.md).
  let ace = aceMemo.get(name);
  if (ace === undefined) {
    ace = toAce(name.toLowerCase());
    if (name.length <= 253) {
      if (aceMemo.size >= ACE_MEMO_MAX) aceMemo.clear();
      aceMemo.set(name, ace);
    }
  }
  return ace;
}

/**
 * Whether two spellings (Unicode/ACE, any case) name the same domain: the PATCH id check.
 * `sameDomainName('Bücher.de', 'xn--bcher-kva.DE')` → true.
 */
export const sameDomainName = (a: string, b: string) => {
  const x = aceOf(a);
  return x !== null && x === aceOf(b);
};

/**
 * The ACE names (as `aceOf` gives them; names no domain can have are left out) of the strict
 * parents of `name` that have at least two labels, nearest first:
 * `parentDomains('www.Shop.example.com.')` → `['shop.example.com', 'example.com']`.
 */
export function parentDomains(name: string): string[] {
  // The whole name is lower-cased before it is cut: lower-casing depends on the context (a final
  // sigma, `x.Σ1.com` → `x.ς1.com` but `Σ1.com` → `σ1.com`).
  const labels = name.toLowerCase().replace(/\.$/, '').split('.');
  return labels
    .slice(1, -1)
    .map((_, i) => aceOf(labels.slice(i + 1).join('.')))
    .filter((d): d is string => d !== null);
}

/**
 * One label of a DNS name in lower-case ACE, or null when it cannot be a label; `allowUnderscore`
 * admits `_` in ASCII labels (`_acme-challenge`). Non-ASCII labels are IDNA-mapped
 * (`aceLabel('Bücher', false)` → `'xn--bcher-kva'`); `xn--` labels must be valid punycode.
 */
export function aceLabel(label: string, allowUnderscore: boolean): string | null {
  let ace: string;
  if (/^[\x21-\x7e]*$/.test(label)) {
    ace = label.toLowerCase();
  } else {
    if (label.includes('_')) return null;
    ace = domainToASCII(label);
    // Mapping may turn a full-width dot into a label separator: one label in, one label out.
    if (!ace || ace.includes('.')) return null;
  }
  if (ace.length > 63) return null;
  if (!(allowUnderscore ? LABEL_WITH_UNDERSCORE : HOST_LABEL).test(ace)) return null;
  if (ace.startsWith('xn--')) {
    const unicode = domainToUnicode(ace);
    if (!unicode || unicode === ace || domainToASCII(unicode) !== ace) return null;
  }
  return ace;
}

const unicodeLabel = (ace: string) => (ace.startsWith('xn--') ? toUnicode(ace) : ace);
/** `unicodeName('_dmarc.xn--bcher-kva.example')` → `'_dmarc.bücher.example'` (labels with underscores stay as they are). */
export const unicodeName = (ace: string) => (ace === '' ? '' : ace.split('.').map(unicodeLabel).join('.'));

/** `name.domain`, or the domain itself at the apex: `fqdnOf('www', 'example.com')` → `'www.example.com'`, `fqdnOf('', 'example.com')` → `'example.com'`. */
export const fqdnOf = (name: string, domain: string) => (name === '' ? domain : `${name}.${domain}`);
