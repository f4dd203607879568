// Database passwords (API guide "Databases"): 20 characters of [A-Za-z0-9], safe in every client
// config file and under any sql_mode. The plaintext goes to the client once; what is stored and
// what a job carries is only the mysql_native_password hash, which the server verifies itself.
import crypto from 'node:crypto';
import { randomAlnum } from '../../security/password-generator.js';

/** A new password: `const pw = generateDatabasePassword()` → e.g. 'q3ZpT0bW9xYk2LmN7aRc'. */
export const generateDatabasePassword = (): string => randomAlnum(20);

/** The mysql_native_password hash: '*' + upper-case hex of SHA1(SHA1(pw)), as PASSWORD() gives it. */
export function nativePasswordHash(password: string): string {
  const inner = crypto.createHash('sha1').update(password, 'utf8').digest();
  return '*' + crypto.createHash('sha1').update(inner).digest('hex').toUpperCase();
}

/** True for a string in the form nativePasswordHash returns. */
export function isNativePasswordHash(hash: string): boolean {
  return /^\*[0-9A-F]{40}$/.test(hash);
}
