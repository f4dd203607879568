// Generated passwords (API guide "Password rules"): 20 characters from node:crypto's RNG, drawn
// again until they pass the rules a chosen password must pass. Alphabet A-Z a-z 0-9 `-_.` (120 bits):
// the specials need no quoting in URLs, shells, JSON, SQL or config files and no dead key to type;
// first and last are alphanumeric, so a password never looks like an option nor loses a final `.`.
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
