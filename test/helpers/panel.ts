// The customer panel's login as a browser makes it (API guide "Panel sessions (extension)"): POST
// /session, then the cookie on every request and the anti-CSRF header on every write.
import type { FastifyInstance } from 'fastify';
import type { Admin } from '../../src/admin/index.js';
import { call } from './app.js';
import { stepAt, totpCode } from '../../src/resources/session/session.totp.js';

export const loginBody = (email: string, password: string, totp_code?: string) => ({
  data: { type: 'session', attributes: { email, password, ...(totp_code === undefined ? {} : { totp_code }) } },
});

/** A logged-in browser: its cookie and csrf token, and the headers it sends with them. */
export interface Browser {
  cookie: string;
  csrf: string;
  /** Cookie and X-CSRF-Token, as the panel sends on a write. */
  headers: Record<string, string>;
  /** The cookie alone, as on a read (or a forged cross-site write). */
  cookieOnly: Record<string, string>;
}

/** The cookie value a 201 of POST /session sets. */
export const cookieOf = (setCookie: unknown) => /^hostplane_session=([A-Za-z0-9_-]{43});/.exec(String(setCookie))![1];

/** Logs in (expecting 201): `const b = await logIn(t.app, 'admin@end1.example', PW)`. */
export async function logIn(app: FastifyInstance, email: string, password: string, totp?: string, remoteAddress?: string): Promise<Browser> {
  const r = await call(app, 'POST', '/session', { body: loginBody(email, password, totp), remoteAddress });
  if (r.status !== 201) throw new Error(`login answered ${r.status}: ${r.body}`);
  const cookie = cookieOf(r.headers['set-cookie']);
  const csrf = r.json.data.attributes.csrf_token as string;
  return { cookie, csrf, headers: { cookie: `hostplane_session=${cookie}`, 'x-csrf-token': csrf }, cookieOnly: { cookie: `hostplane_session=${cookie}` } };
}

/** The TOTP code of `secret` for the time step `offset` steps from now. */
export const codeAt = (secret: string, offset = 0) => totpCode(secret, stepAt(Date.now()) + offset);

/** A new customer whose main contact (`name`, `email`) has the portal password `password`: `await panelContact(t.admin, 'Bo', 'bo@x.example', PW)`. */
export async function panelContact(admin: Admin, name: string, email: string, password: string) {
  const ids = await admin.customers.createCustomer({ contact: { name, email } });
  await admin.customers.setPortalPassword(ids.contactId, password);
  return ids;
}
