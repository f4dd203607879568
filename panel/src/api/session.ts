// The panel's session (API guide "Beyond the original API"): an HttpOnly cookie set by POST
// /session; the page learns who is logged in, and the anti-CSRF token, from GET /session.
import { api, ApiError, setCsrfToken, type Resource } from './client';

export interface Session {
  contact_id: string;
  customer_id: string;
  email: string;
  name: string;
  is_reseller: boolean;
  csrf_token: string;
  totp_enabled: boolean;
  idle_timeout_s: number;
}

/** The current session, or null when nobody is logged in. */
export async function currentSession(): Promise<Session | null> {
  try {
    const { data } = await api<Resource<Session>>('GET', '/session');
    setCsrfToken(data.attributes.csrf_token);
    return data.attributes;
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return null;
    throw err;
  }
}

/** Logs in; an ApiError `totp_required` means: ask for the code and call again with it. */
export async function logIn(email: string, password: string, totp_code?: string): Promise<Session> {
  const attributes: Record<string, string> = { email, password };
  if (totp_code !== undefined) attributes.totp_code = totp_code;
  const { data } = await api<Resource<Session>>('POST', '/session', { body: { data: { type: 'session', attributes } } });
  setCsrfToken(data.attributes.csrf_token);
  return data.attributes;
}

export async function logOut(): Promise<void> {
  try {
    await api('DELETE', '/session');
  } finally {
    setCsrfToken(null);
  }
}
