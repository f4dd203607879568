// Generated passwords (API guide "Password rules"): 20 characters from node:crypto's RNG, drawn
// again until the password passes the same rules a chosen password must pass, for the same user.
//
// The alphabet: the letters A-Z and a-z, the digits 0-9 and `-`, `_`, `.` (65 characters, 6.02
// bits each, 120 bits in all). The three specials are the ones that need no quoting or escaping
// anywhere a password gets pasted: they are "unreserved" in URLs (mysql://user:pass@host needs no
// percent-encoding), literal in shells, JSON, XML, SQL strings and config files, typed without
// AltGr and without dead keys on QWERTY, QWERTZ and AZERTY keyboards, and none of them stands
// for a letter in the substitutions the rules undo (`@`, `$`). Left out on purpose: space and
// quotes (trimmed or ending a string), `\` and `%` (escapes), `$ ! & | ; < > * ? # ~` (shell),
// `@ : / ?` (URLs), `` ` ^ ´ `` (dead keys). The first and the last character are a letter or a
// digit, so the password never starts like a command-line option (`-x`) nor loses a final `.`
// read as the end of a sentence.
import crypto from 'node:crypto';
import { checkPassword, type PasswordContext } from './password-policy.js';

export const GENERATED_LENGTH = 20;
const LETTERS_AND_DIGITS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export const GENERATED_ALPHABET = `${LETTERS_AND_DIGITS}-_.`;
/** About 1 draw in 250 fails the rules (a keyboard run, an order run, a part of the domain); this many in a row means the context forbids too much. */
const MAX_DRAWS = 1000;

/** `length` characters of [A-Za-z0-9], uniformly random (crypto.randomInt is unbiased): tokens, application and database passwords. */
export function randomAlnum(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += LETTERS_AND_DIGITS[crypto.randomInt(LETTERS_AND_DIGITS.length)];
  return out;
}

/** A new random password that passes checkPassword(…, ctx). */
export function generatePassword(ctx: PasswordContext): string {
  for (let draw = 0; draw < MAX_DRAWS; draw++) {
    const password = randomPassword();
    if (checkPassword(password, ctx).length === 0) return password;
  }
  throw new Error(`no random password passed the password rules in ${MAX_DRAWS} draws (are the brand words very short?)`);
}

/** GENERATED_LENGTH uniformly random characters (crypto.randomInt is unbiased); letters or digits at both ends. */
function randomPassword(): string {
  let out = '';
  for (let i = 0; i < GENERATED_LENGTH; i++) {
    const alphabet = i === 0 || i === GENERATED_LENGTH - 1 ? LETTERS_AND_DIGITS : GENERATED_ALPHABET;
    out += alphabet[crypto.randomInt(alphabet.length)];
  }
  return out;
}
