// E-mail addresses a person or a mailbox can have: the one check, used by contacts (operator CLI)
// today and by e-mail addresses and forwarders (API guide "E-mail addresses") next.
import { aceOf } from './domain-name.js';

/** Characters of an e-mail address's local part: RFC 5322 atext, plus any non-ASCII letter or digit (RFC 6531). */
const LOCAL_PART = /^[\p{L}\p{N}!#$%&'*+/=?^_`{|}~-]+(?:\.[\p{L}\p{N}!#$%&'*+/=?^_`{|}~-]+)*$/u;

/**
 * Whether `address` can receive mail: `local@domain`, a dot-atom local part of at most 64
 * characters and a domain that can be registered (IDN allowed); no quoted local parts, no IP
 * literals. `isEmailAddress('erika@bücher.example')` → true.
 */
export function isEmailAddress(address: string): boolean {
  const at = address.lastIndexOf('@');
  if (at < 1 || address.length > 254) return false;
  const local = address.slice(0, at);
  return local.length <= 64 && LOCAL_PART.test(local) && aceOf(address.slice(at + 1)) !== null;
}
