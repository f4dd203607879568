// What the /email-addresses tests share (issue 10): POST/PATCH helpers and a mail server row for
// stores that only need placement (the rules tests run no worker, so nothing talks to it).
import type { Store } from '../../src/db/index.js';
import { nowIso } from '../../src/db/time.js';
import { MailServersRepository } from '../../src/provisioning/mail/servers.repository.js';
import { call, type TestApp } from './app.js';

/** POST /email-addresses as `token`. */
export const postEmail = (t: TestApp, token: string, attributes: Record<string, unknown>) =>
  call(t.app, 'POST', '/email-addresses', { token, body: { data: { type: 'email-address', attributes } } });

/** PATCH /email-addresses/{id} as `token`. */
export const patchEmail = (t: TestApp, token: string, id: string, attributes: Record<string, unknown>) =>
  call(t.app, 'PATCH', `/email-addresses/${id}`, { token, body: { data: { type: 'email-address', id, attributes } } });

/** POST /email-addresses/{id}/application-passwords as `token`. */
export const postAppPassword = (t: TestApp, token: string, id: string, attributes: Record<string, unknown>) =>
  call(t.app, 'POST', `/email-addresses/${id}/application-passwords`, { token, body: { data: { type: 'application-password', attributes } } });

/** Registers a default mail server nobody talks to (no worker runs the jobs): `await placeholderMailServer(t.store)`. */
export async function placeholderMailServer(store: Store, name = 'mx-test'): Promise<void> {
  await new MailServersRepository(store.db).add({
    name, doveadm_url: 'http://127.0.0.1:9', doveadm_key: 'not-used', smtp: '127.0.0.1:9', imap: '127.0.0.1:9', is_default: 1, created_at: nowIso(),
  });
}

/** A password that passes every rule (for addresses at *.example): 20 characters, no runs, no names. */
export const GOOD_PASSWORD = 'Vq7#mZ2!xB9?kR4&wT6s';
