// The rules of a subdomain's own attributes (API guide "Subdomains"), without the
// store: the label(s), webspace.path, webspace.php_version, redirect.target, and the kind changes
// of a PATCH. The service adds what needs the store (scope, conflicts, limits, placement).
import { AppError, invalidField } from '../../errors.js';
import { aceLabel, unicodeName } from '../../domain-name.js';
import { PHP_VERSIONS } from '../../php-versions.js';

export const SUBDOMAIN_TYPES = ['webspace', 'redirect', 'email'] as const;
export type SubdomainType = (typeof SUBDOMAIN_TYPES)[number];

/** What a subdomain is, as stored and as the rules see it. */
export interface SubdomainState {
  kind: SubdomainType;
  webspace_path: string | null;
  php_version: string | null;
  webspace_https: 0 | 1;
  /** null on a redirect: uninitialized (made in the customer menu without a target). */
  redirect_target: string | null;
  redirect_dynamic: 0 | 1;
  redirect_https: 0 | 1;
}

export interface WebspaceInput {
  path?: unknown;
  php_version?: unknown;
  redirect_to_https?: unknown;
}

export interface RedirectInput {
  target?: unknown;
  dynamic?: unknown;
  redirect_to_https?: unknown;
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const TARGET_MAX = 2000;
const PATH_MAX = 1024;

/**
 * The subdomain's label(s): LDH or IDN, no `*`, no `_`; several labels allowed (`shop.eu`).
 * `parseSubdomain('Shop')` → `{ ace: 'shop', unicode: 'shop' }`.
 */
export function parseSubdomain(input: string): { ace: string; unicode: string } {
  const bad = (detail: string) => invalidField('subdomain', detail);
  if (input === '' || input === '@') throw bad('subdomain must name a label, e.g. "shop"; the domain itself is not a subdomain.');
  if (CONTROL.test(input) || /\s/.test(input)) throw bad('subdomain must not contain spaces or control characters.');
  if (input.endsWith('.')) throw bad('subdomain is relative to the domain: leave out the trailing dot and the domain.');
  const out: string[] = [];
  for (const label of input.split('.')) {
    if (label === '') throw bad('subdomain has an empty label.');
    if (label.includes('*')) throw bad('A subdomain cannot be a wildcard (*).');
    if (label.includes('_')) throw bad(`"${label}" contains "_", which host names cannot have.`);
    const ace = aceLabel(label, false);
    if (ace === null) throw bad(`"${label}" is not a valid label: letters, digits and hyphens, at most 63 characters, no hyphen at either end.`);
    out.push(ace);
  }
  const ace = out.join('.');
  return { ace, unicode: unicodeName(ace) };
}

/**
 * webspace.path in stored form: relative to the package's home, with a leading and a trailing
 * `/`, `.` segments and repeated `/` dropped: `'htdocs//shop/.'` → `'/htdocs/shop/'`. `..`, NUL,
 * control characters, backslashes and paths that name the host's own directories (e.g. the home
 * root `/srv/www/…`) → 422.
 */
export function normaliseWebspacePath(input: unknown, homeRoot: string | null): string {
  const bad = (detail: string) => invalidField('webspace/path', detail);
  if (typeof input !== 'string') throw bad('webspace.path must be a string, e.g. "/htdocs/".');
  if (input.length > PATH_MAX) throw bad(`webspace.path must be at most ${PATH_MAX} characters.`);
  if (CONTROL.test(input)) throw bad('webspace.path must not contain control characters.');
  if (input.includes('\\')) throw bad('webspace.path uses "/" between directories, not "\\".');
  if (input.startsWith('~')) throw bad('webspace.path is relative to your home already: leave out "~".');
  const segments = input.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) throw bad('webspace.path must stay inside your home: ".." is not allowed.');
  const path = segments.length ? `/${segments.join('/')}/` : '/';
  if (homeRoot && (path === `${homeRoot.replace(/\/+$/, '')}/` || path.startsWith(`${homeRoot.replace(/\/+$/, '')}/`))) {
    throw bad('webspace.path is relative to your home: give e.g. "/htdocs/", not the path on the server.');
  }
  return path;
}

/**
 * What a package may run: the versions the API knows (API guide "Subdomains") that its plan offers
 * and its web server has installed, in the plan's order. The package default is the first of them
 * (null: none).
 */
export function phpChoices(planVersions: string[], installed: string[]): string[] {
  return planVersions.filter((v) => (PHP_VERSIONS as readonly string[]).includes(v) && installed.includes(v));
}

/** webspace.php_version as stored: null (the package default) or one of `choices`; else 422 listing them. */
export function checkPhpVersion(input: unknown, choices: string[]): string | null {
  if (input === undefined || input === null) return null;
  const can = choices.length ? `This package can use PHP ${choices.join(', ')}, or null for the default (${choices[0]}).` : 'This package has no PHP version available on its web server; use null.';
  if (typeof input !== 'string' || !choices.includes(input)) {
    throw invalidField('webspace/php_version', `${typeof input === 'string' ? `PHP ${input}` : 'That'} is not available. ${can}`);
  }
  return input;
}

/**
 * redirect.target: an absolute http or https URL with a host, no credentials, no whitespace or
 * control characters, at most 2,000 characters.
 */
export function checkTarget(input: unknown): string {
  const bad = (detail: string) => invalidField('redirect/target', detail);
  if (typeof input !== 'string' || input === '') throw bad('redirect.target must be an absolute http or https URL, e.g. "https://www.example.com/".');
  if (input.length > TARGET_MAX) throw bad(`redirect.target must be at most ${TARGET_MAX} characters.`);
  if (CONTROL.test(input) || /\s/.test(input)) throw bad('redirect.target must not contain spaces or control characters.');
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw bad('redirect.target must be an absolute http or https URL, e.g. "https://www.example.com/".');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw bad('redirect.target must start with http:// or https://.');
  if (!/^https?:\/\/[^/?#]/i.test(input) || !url.hostname) throw bad('redirect.target must name a host, e.g. "https://www.example.com/".');
  if (url.username || url.password) throw bad('redirect.target must not contain a user name or password.');
  return input;
}

const bool = (field: string, v: unknown): 0 | 1 => {
  if (typeof v !== 'boolean') throw invalidField(field, `${field.replace('/', '.')} must be true or false.`);
  return v ? 1 : 0;
};

const dynamicNeedsSlash = () =>
  invalidField('redirect/dynamic', 'A dynamic redirect appends the request path to the target, so the target must end with "/".');

export interface RuleContext {
  /** The web server's home root, to refuse host paths in webspace.path. */
  homeRoot: string | null;
  /** The PHP versions the package may use (phpChoices). */
  phpChoices: string[];
  /** Whether the package's web server serves HTTPS (redirect_to_https needs it). */
  https: boolean;
}

const needsHttps = (field: string, ctx: RuleContext, v: 0 | 1) => {
  if (v && !ctx.https) throw invalidField(field, "This package's web server does not serve HTTPS, so redirect_to_https cannot be switched on.");
  return v;
};

/** The state of a new subdomain (POST): the group of its type, and nothing of the other. */
export function createState(type: SubdomainType, webspace: WebspaceInput | undefined | null, redirect: RedirectInput | undefined | null, ctx: RuleContext): SubdomainState {
  const empty: SubdomainState = { kind: type, webspace_path: null, php_version: null, webspace_https: 0, redirect_target: null, redirect_dynamic: 0, redirect_https: 0 };
  if (type !== 'webspace' && webspace) throw invalidField('webspace', `webspace belongs to a subdomain of type webspace, not ${type}.`);
  if (type !== 'redirect' && redirect) throw invalidField('redirect', `redirect belongs to a subdomain of type redirect, not ${type}.`);
  if (type === 'webspace') {
    if (!webspace || webspace.path === undefined) throw invalidField('webspace/path', 'A webspace subdomain needs webspace.path, e.g. "/htdocs/".');
    return {
      ...empty,
      webspace_path: normaliseWebspacePath(webspace.path, ctx.homeRoot),
      php_version: checkPhpVersion(webspace.php_version, ctx.phpChoices),
      webspace_https: webspace.redirect_to_https === undefined ? 0 : needsHttps('webspace/redirect_to_https', ctx, bool('webspace/redirect_to_https', webspace.redirect_to_https)),
    };
  }
  if (type === 'redirect') {
    if (!redirect || redirect.target === undefined) throw invalidField('redirect/target', 'A redirect subdomain needs redirect.target, an absolute http or https URL.');
    const target = checkTarget(redirect.target);
    const dynamic = redirect.dynamic === undefined ? 0 : bool('redirect/dynamic', redirect.dynamic);
    if (dynamic && !target.endsWith('/')) throw dynamicNeedsSlash();
    return {
      ...empty,
      redirect_target: target,
      redirect_dynamic: dynamic,
      redirect_https: redirect.redirect_to_https === undefined ? 0 : needsHttps('redirect/redirect_to_https', ctx, bool('redirect/redirect_to_https', redirect.redirect_to_https)),
    };
  }
  return empty;
}

/**
 * The state after a PATCH (API guide "Subdomains"): `webspace.path` makes any other kind a
 * webspace; `redirect.target` makes any other kind (and an uninitialized redirect) a static
 * redirect; `redirect.dynamic` and `redirect.redirect_to_https` need an initialized redirect (409
 * `invalid_state` otherwise); `webspace.php_version` and `webspace.redirect_to_https` need a
 * webspace. Several keys may change at once; the keys of the group being left are dropped.
 */
export function patchState(current: SubdomainState, webspace: WebspaceInput | undefined | null, redirect: RedirectInput | undefined | null, ctx: RuleContext): SubdomainState {
  const w = webspace ?? {};
  const r = redirect ?? {};
  if (webspace === null) throw invalidField('webspace', 'webspace cannot be removed; change the kind with redirect.target instead.');
  if (redirect === null) throw invalidField('redirect', 'redirect cannot be removed; change the kind with webspace.path instead.');
  const toWebspace = w.path !== undefined;
  const toRedirect = r.target !== undefined;
  if (toWebspace && toRedirect) throw invalidField('redirect/target', 'One change sets either webspace.path (a webspace) or redirect.target (a redirect), not both.');
  let next: SubdomainState = { ...current };

  if (toWebspace) {
    if (Object.keys(r).length) throw invalidField('redirect', 'A subdomain that becomes a webspace takes no redirect settings.');
    if (current.kind !== 'webspace') next = { ...next, kind: 'webspace', php_version: null, webspace_https: 0, redirect_target: null, redirect_dynamic: 0, redirect_https: 0 };
    next.webspace_path = normaliseWebspacePath(w.path, ctx.homeRoot);
  } else if (toRedirect) {
    if (Object.keys(w).length) throw invalidField('webspace', 'A subdomain that becomes a redirect takes no webspace settings.');
    if (current.kind !== 'redirect' || current.redirect_target === null) {
      // A new redirect is static (API guide "Subdomains") unless this PATCH says otherwise.
      next = { ...next, kind: 'redirect', webspace_path: null, php_version: null, webspace_https: 0, redirect_dynamic: 0, redirect_https: 0 };
    }
    next.redirect_target = checkTarget(r.target);
  }

  if (w.php_version !== undefined || w.redirect_to_https !== undefined) {
    if (next.kind !== 'webspace') throw new AppError('invalid_state', 'webspace.php_version and webspace.redirect_to_https can be changed only on a webspace subdomain.', { pointer: '/data/attributes/webspace' });
    if (w.php_version !== undefined) next.php_version = checkPhpVersion(w.php_version, ctx.phpChoices);
    if (w.redirect_to_https !== undefined) next.webspace_https = needsHttps('webspace/redirect_to_https', ctx, bool('webspace/redirect_to_https', w.redirect_to_https));
  }
  if (r.dynamic !== undefined || r.redirect_to_https !== undefined) {
    if (next.kind !== 'redirect') throw new AppError('invalid_state', 'redirect.dynamic and redirect.redirect_to_https can be changed only on a redirect subdomain.', { pointer: '/data/attributes/redirect' });
    if (next.redirect_target === null) {
      throw new AppError('invalid_state', 'This redirect has no target yet: set redirect.target first (it can be sent in the same request).', { pointer: '/data/attributes/redirect' });
    }
    if (r.dynamic !== undefined) next.redirect_dynamic = bool('redirect/dynamic', r.dynamic);
    if (r.redirect_to_https !== undefined) next.redirect_https = needsHttps('redirect/redirect_to_https', ctx, bool('redirect/redirect_to_https', r.redirect_to_https));
  }
  if (next.kind === 'redirect' && next.redirect_dynamic && next.redirect_target !== null && !next.redirect_target.endsWith('/')) throw dynamicNeedsSlash();
  return next;
}

/** Whether the web server has a site for this state: webspaces and initialized redirects. */
export const hasSite = (s: Pick<SubdomainState, 'kind' | 'redirect_target'>) => s.kind === 'webspace' || (s.kind === 'redirect' && s.redirect_target !== null);

/**
 * Whether the subdomain gets A/AAAA records (API guide "Subdomains": webspace and redirect;
 * uninitialized redirects too).
 */
export const hasAddressRecords = (s: Pick<SubdomainState, 'kind'>) => s.kind !== 'email';
