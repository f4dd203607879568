// Client-side routes under /panel/ (hostplane answers index.html for each, src/http/panel.ts).
// Adding a page: a pattern here and a case in app.tsx's page switch.
import { useEffect, useState } from 'preact/hooks';

export const BASE = '/panel/';

export type Route =
  | { page: 'overview' }
  | { page: 'login' }
  | { page: 'domains' }
  | { page: 'dns'; domain: string }
  | { page: 'not-found' }
  | { page: 'subdomains' | 'databases'; packageId: string }
  | { page: 'subdomain' | 'database'; id: string }
  | { page: 'email' }
  | { page: 'email-address'; id: string }
  | { page: 'security' }
  | { page: 'availability' }
  | { page: 'ssh-keys' }
  | { page: 'webhooks' }
  | { page: 'activity' }
  | { page: 'deliveries'; webhook: string };

// Pages whose path is their name alone.
const ACCOUNT_PAGES = ['security', 'availability', 'ssh-keys', 'webhooks', 'activity'];

export function parse(pathname: string): Route {
  const rest = pathname.startsWith(BASE) ? pathname.slice(BASE.length) : '';
  const parts = rest.split('/').filter(Boolean).map((p) => {
    try {
      return decodeURIComponent(p);
    } catch {
      return '\0';
    }
  });
  if (parts.length === 0) return { page: 'overview' };
  if (parts.length === 1 && parts[0] === 'login') return { page: 'login' };
  if (parts.length === 1 && parts[0] === 'domains') return { page: 'domains' };
  if (parts.length === 3 && parts[0] === 'domains' && parts[2] === 'dns') return { page: 'dns', domain: parts[1] };
  if (parts.length === 3 && parts[0] === 'packages' && (parts[2] === 'subdomains' || parts[2] === 'databases')) return { page: parts[2], packageId: parts[1] };
  if (parts.length === 2 && (parts[0] === 'subdomains' || parts[0] === 'databases')) return { page: parts[0] === 'subdomains' ? 'subdomain' : 'database', id: parts[1] };
  if (parts[0] === 'email' && parts.length <= 2) return parts.length === 1 ? { page: 'email' } : { page: 'email-address', id: parts[1] };
  if (parts.length === 1 && ACCOUNT_PAGES.includes(parts[0])) return { page: parts[0] } as Route;
  if (parts.length === 3 && parts[0] === 'webhooks' && parts[2] === 'deliveries') return { page: 'deliveries', webhook: parts[1] };
  return { page: 'not-found' };
}

export function href(route: Route): string {
  switch (route.page) {
    case 'overview':
      return BASE;
    case 'login':
      return `${BASE}login`;
    case 'domains':
      return `${BASE}domains`;
    case 'dns':
      return `${BASE}domains/${encodeURIComponent(route.domain)}/dns`;
    case 'subdomains':
    case 'databases':
      return `${BASE}packages/${encodeURIComponent(route.packageId)}/${route.page}`;
    case 'subdomain':
    case 'database':
      return `${BASE}${route.page}s/${encodeURIComponent(route.id)}`;
    case 'email':
      return `${BASE}email`;
    case 'email-address':
      return `${BASE}email/${encodeURIComponent(route.id)}`;
    case 'security':
    case 'availability':
    case 'ssh-keys':
    case 'webhooks':
    case 'activity':
      return `${BASE}${route.page}`;
    case 'deliveries':
      return `${BASE}webhooks/${encodeURIComponent(route.webhook)}/deliveries`;
    default:
      return BASE;
  }
}

const listeners = new Set<() => void>();
/** How many times the page changed without a reload: headings take the focus after one (page-heading.tsx). */
export let navigations = 0;

export function navigate(to: string, opts: { replace?: boolean } = {}) {
  if (opts.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  navigations++;
  listeners.forEach((l) => l());
}

/** The current route; re-renders on navigation and on the browser's back and forward. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parse(location.pathname));
  useEffect(() => {
    const update = () => setRoute(parse(location.pathname));
    const popped = () => {
      navigations++;
      update();
    };
    listeners.add(update);
    window.addEventListener('popstate', popped);
    return () => {
      listeners.delete(update);
      window.removeEventListener('popstate', popped);
    };
  }, []);
  return route;
}

/** A link that changes the page without a reload; a modified click opens it as usual. */
export function onLinkClick(e: MouseEvent) {
  const a = e.currentTarget as HTMLAnchorElement;
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  e.preventDefault();
  navigate(a.pathname);
}
