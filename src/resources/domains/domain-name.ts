// Domain names in their ACE (punycode) form (API-NOTES §1.10): what can be a registrable/hosted
// domain name, and its Unicode form for display.
import { domainToASCII, domainToUnicode } from 'node:url';

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * The ACE form of `name`, or null when it is not ACE-encodable as a host name (underscores,
 * empty labels, over-long names): `toAce('Bücher.de')` → `'xn--bcher-kva.de'`.
 */
export function toAce(name: string): string | null {
  if (name.length === 0 || name.length > 253 * 4) return null;
  const trimmed = name.endsWith('.') ? name.slice(0, -1) : name;
  // domainToASCII parses URL host syntax (it cuts at / ? # and percent-decodes): among ASCII
  // characters only letters, digits, '.' and '-' may reach it.
  if (/[\u0000-\u002c\u002f\u003a-\u0040\u005b-\u0060\u007b-\u007f]/.test(trimmed)) return null;
  const ace = domainToASCII(trimmed);
  if (!ace || ace.length > 253) return null;
  const labels = ace.split('.');
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l))) return null;
  if (/^[0-9]+$/.test(labels[labels.length - 1])) return null; // an IP address, not a domain
  return ace;
}

export const toUnicode = (ace: string) => domainToUnicode(ace) || ace;
