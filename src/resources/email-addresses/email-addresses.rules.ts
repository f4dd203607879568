// The rules of an e-mail address's own attributes (API guide "E-mail addresses", "Password rules"),
// without the store: the address, forward targets, antispam, the autoresponder's one key per PATCH
// and its dates. The service adds what needs the store (scope, conflicts, limits, placement).
import { invalidField } from '../../errors.js';
import { isEmailAddress } from '../../email-address.js';
import { aceOf, toUnicode } from '../../domain-name.js';

export const ADDRESS_TYPES = ['mailbox', 'forward'] as const;
export type AddressType = (typeof ADDRESS_TYPES)[number];
export const ANTISPAM_MODES = ['reject', 'junk-folder', 'subject-rewrite', 'none'] as const;
export type AntispamMode = (typeof ANTISPAM_MODES)[number];
export const AUTORESPONDER_KEYS = ['text', 'active', 'activates', 'expires'] as const;
export type AutoresponderKey = (typeof AUTORESPONDER_KEYS)[number];

/** Forward targets of one address at most (API guide "E-mail addresses"). */
export const MAX_FORWARD_TARGETS = 100;
/** An autoresponder text of at most this many characters (a reply, not a newsletter). */
export const AUTORESPONDER_TEXT_MAX = 10_000;
/** The time zone of the autoresponder's dates (API guide "E-mail addresses": 00:00 German time). */
export const AUTORESPONDER_ZONE = 'Europe/Berlin';

/** An address as stored and as shown. */
export interface ParsedAddress {
  /** `local@ace-domain`, lower-cased: the key of the mail directory. */
  ace: string;
  /** `local@unicode-domain`, for display. */
  unicode: string;
  local: string;
  /** ACE domain part. */
  domain: string;
}

/**
 * Local parts of addresses hosted here: dot-separated runs of letters, digits, `_` and `-`
 * (docs/decisions/0009-mail-directory.md "Addresses"). Narrower than RFC 5321's dot-atom on
 * purpose: Dovecot accepts only these characters in a login (auth_username_chars), a `/` would
 * name another mailbox's directory (mail_home …/%d/%n), `*` and `?` are doveadm wildcards, and
 * `+` is the recipient delimiter (`b+tag@` is delivered to `b@`).
 */
const HOSTED_LOCAL_PART = /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*$/;
/** Local parts of forward targets (mail leaves here): an ASCII RFC 5321 dot-atom (`+` allowed; no SMTPUTF8). */
const TARGET_LOCAL_PART = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;

/**
 * An address in stored form, or null when it cannot receive mail here: the local part lower-cased
 * (the mail servers compare it so), the domain in ACE. `parseAddress('Info@Bücher.example')` →
 * `{ ace: 'info@xn--bcher-kva.example', unicode: 'info@bücher.example', … }`.
 */
export function parseAddress(input: unknown): ParsedAddress | null {
  if (typeof input !== 'string' || !isEmailAddress(input)) return null;
  const at = input.lastIndexOf('@');
  if (!HOSTED_LOCAL_PART.test(input.slice(0, at))) return null;
  const local = input.slice(0, at).toLowerCase();
  const domain = aceOf(input.slice(at + 1));
  if (domain === null) return null;
  return { ace: `${local}@${domain}`, unicode: `${local}@${toUnicode(domain)}`, local, domain };
}

/** The address shown for a stored one: `info@xn--bcher-kva.example` → `info@bücher.example`. */
export function unicodeAddress(ace: string): string {
  const at = ace.lastIndexOf('@');
  return `${ace.slice(0, at)}@${toUnicode(ace.slice(at + 1))}`;
}

/** A forward target in stored form (`+` kept, domain in ACE, local part as sent), or null when it is no address. */
export function parseTarget(input: unknown): string | null {
  if (typeof input !== 'string' || !isEmailAddress(input)) return null;
  const at = input.lastIndexOf('@');
  if (!TARGET_LOCAL_PART.test(input.slice(0, at))) return null;
  const domain = aceOf(input.slice(at + 1));
  return domain === null ? null : `${input.slice(0, at)}@${domain}`;
}

/** Two targets are the same when they differ only in letter case. */
export const sameTarget = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** Whether `target` is `address` itself, also as `local+tag@domain` (the recipient delimiter delivers that to it). */
export function isSelf(target: string, address: string): boolean {
  const at = target.lastIndexOf('@');
  const local = target.slice(0, at).split('+')[0];
  return sameTarget(`${local}${target.slice(at)}`, address);
}

/**
 * `forward_to` of a create: addresses (`+` allowed), no duplicates, not the address itself, at most
 * 100; required (non-empty) for a forward. Answers the targets in stored form.
 */
export function parseForwardTo(input: unknown, type: AddressType, self: string): string[] {
  const bad = (detail: string) => invalidField('forward_to', detail);
  if (input === undefined || input === null) {
    if (type === 'forward') throw bad('A forward needs forward_to: the addresses it forwards to.');
    return [];
  }
  if (!Array.isArray(input)) throw bad('forward_to must be an array of e-mail addresses.');
  if (type === 'forward' && input.length === 0) throw bad('A forward needs at least one address in forward_to.');
  if (input.length > MAX_FORWARD_TARGETS) throw bad(`forward_to may hold at most ${MAX_FORWARD_TARGETS} addresses.`);
  const out: string[] = [];
  for (const [i, raw] of input.entries()) {
    const target = parseTarget(raw);
    const at = (detail: string) => invalidField(`forward_to/${i}`, detail);
    if (target === null) throw at(`forward_to[${i}] is not an e-mail address.`);
    if (isSelf(target, self)) throw at('An address cannot forward to itself.');
    if (out.some((t) => sameTarget(t, target))) throw at(`forward_to lists ${String(raw)} twice.`);
    out.push(target);
  }
  return out;
}

/** antispam of a create or PATCH: one of the modes; `junk-folder` needs a mailbox to hold the folder. */
export function parseAntispam(input: unknown, type: AddressType): AntispamMode {
  if (typeof input !== 'string' || !(ANTISPAM_MODES as readonly string[]).includes(input)) {
    throw invalidField('antispam', `antispam must be one of ${ANTISPAM_MODES.join(', ')}.`);
  }
  if (input === 'junk-folder' && type !== 'mailbox') throw invalidField('antispam', 'junk-folder is only possible for mailboxes: a forward has no folders.');
  return input as AntispamMode;
}

/** The date of `now` in Berlin, `YYYY-MM-DD` (DST-correct through Intl). */
export function berlinToday(now: Date): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: AUTORESPONDER_ZONE, year: 'numeric', month: '2-digit', day: '2-digit' }).format(now);
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Whether `s` is a real calendar date `YYYY-MM-DD` (no 2026-02-30). */
export function isIsoDate(s: string): boolean {
  const m = DATE.exec(s);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
}

/** The autoresponder as stored: what one PATCH may change. */
export interface AutoresponderState {
  text: string;
  active: boolean;
  activates: string | null;
  expires: string | null;
}

/**
 * Applies a PATCH's `autoresponder` group to `current` (API guide "E-mail addresses": exactly one
 * key per request). Dates are `YYYY-MM-DD` from today (Berlin) on, or null (removes the scheduled
 * change); `expires` before `activates` → 422.
 */
export function patchAutoresponder(input: unknown, current: AutoresponderState, now: Date): AutoresponderState {
  const bad = (member: string, detail: string) => invalidField(member ? `autoresponder/${member}` : 'autoresponder', detail);
  if (input === null || typeof input !== 'object' || Array.isArray(input)) throw bad('', 'autoresponder must be an object with one of text, active, activates, expires.');
  const keys = Object.keys(input);
  const unknown = keys.filter((k) => !(AUTORESPONDER_KEYS as readonly string[]).includes(k));
  if (unknown.length) throw bad(unknown[0], `autoresponder has no ${unknown[0]}; it has ${AUTORESPONDER_KEYS.join(', ')}.`);
  if (keys.length !== 1) throw bad('', 'Change exactly one of autoresponder.text, .active, .activates, .expires per request.');
  const key = keys[0] as AutoresponderKey;
  const value = (input as Record<string, unknown>)[key];
  const next = { ...current };
  if (key === 'text') {
    if (typeof value !== 'string') throw bad(key, 'autoresponder.text must be a string.');
    if (value.length > AUTORESPONDER_TEXT_MAX) throw bad(key, `autoresponder.text must be at most ${AUTORESPONDER_TEXT_MAX} characters.`);
    next.text = value;
  } else if (key === 'active') {
    if (typeof value !== 'boolean') throw bad(key, 'autoresponder.active must be true or false.');
    next.active = value;
  } else {
    if (value !== null) {
      if (typeof value !== 'string' || !isIsoDate(value)) throw bad(key, `autoresponder.${key} must be a date YYYY-MM-DD or null.`);
      if (value < berlinToday(now)) throw bad(key, `autoresponder.${key} must not be in the past (today is ${berlinToday(now)} in Germany).`);
    }
    next[key] = value as string | null;
    if (next.activates !== null && next.expires !== null && next.expires < next.activates) {
      throw bad(key, `autoresponder.expires (${next.expires}) must not be before autoresponder.activates (${next.activates}).`);
    }
  }
  return next;
}

/** PATCH attributes no address can change (forward targets have their own endpoints). */
export function rejectFixedAttributes(input: Record<string, unknown>): void {
  if (input.address !== undefined) throw invalidField('address', 'address cannot be changed; create a new address instead.');
  if (input.address_type !== undefined) throw invalidField('address_type', 'address_type cannot be changed; create a new address instead.');
  if (input.forward_to !== undefined) {
    throw invalidField('forward_to', 'forward_to changes one address at a time: POST or DELETE /email-addresses/{id}/forward-to/{address}.');
  }
}

