// URLs as log lines show them: a query parameter that could carry a credential has its value
// replaced (so has a user:password@ before a host), everything else stays byte for byte as the
// client sent it.

const REDACTED = '[Redacted]';

// Names a credential hides behind: any name containing one of these words (access_token,
// X-Api-Key, client_secret, old_password, auth[user]) …
const CONTAINS = /token|passw|secret|key|auth|signature|session|credential/;
// … and short names that are too common as parts of other words (zip_code, passage, design).
const EXACTLY = new Set(['pass', 'pwd', 'sig', 'code', 'jwt']);

/** The name of `name=value` as a query parser reads it (percent-decoded, `+` a space), lower-cased. */
function paramName(raw: string): string {
  const name = raw.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(name).toLowerCase();
  } catch {
    return name.toLowerCase(); // malformed escapes: the raw name still shows a word like "token"
  }
}

/** Whether a query parameter of this name could carry a credential: `isSensitive('API_KEY')` → true. */
function isSensitive(name: string): boolean {
  const n = paramName(name);
  return CONTAINS.test(n) || EXACTLY.has(n);
}

/**
 * `url` with the value of every sensitive query parameter replaced, and the user information of
 * an absolute-form target (`http://user:password@host/…`, as sent to proxies):
 * `redactUrl('/x?access_token=abc&page[size]=2')` → `/x?access_token=[Redacted]&page[size]=2`.
 */
export function redactUrl(target: string): string {
  const url = target.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#@]*@/i, `$1${REDACTED}@`);
  const q = url.indexOf('?');
  if (q === -1) return url;
  const params = url
    .slice(q + 1)
    .split('&')
    .map((p) => {
      const eq = p.indexOf('=');
      return eq !== -1 && isSensitive(p.slice(0, eq)) ? p.slice(0, eq + 1) + REDACTED : p;
    });
  return url.slice(0, q + 1) + params.join('&');
}
