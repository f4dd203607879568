// Step 1 of the mail bench: create → first login, through the product (POST /email-addresses and
// its job) and by a row written straight into the directory, and a login of an existing address.
import crypto from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { ACCEPT, JSONAPI, jobFinishedAt } from '../report.js';
import { blfCrypt } from '../../src/resources/email-addresses/email-addresses.service.js';
import { MailDirectoryRepository } from '../../src/resources/email-addresses/email-addresses.mail-directory.repository.js';
import { JOB_POLL_MS, LOGIN_LIMIT_MS, DOMAIN, QUOTA_BYTES, checkInterrupted } from './settings.js';
import { login, firstLogin } from './imap.js';
import { type Instance } from './instance.js';
import { STACK_SERVER } from './directory.js';

/** One product create, ms from sending the POST. */
export interface ProductRun {
  /** 202 received (the directory row is committed by then). */
  post: number;
  /** First successful LOGIN with the returned password. */
  login: number;
  /** The job's doveadm lookup found the mailbox. */
  found: number;
  /** The job's finished_at (1 ms resolution, wall clock). */
  done: number;
  attempts: number;
}

/** A row written by hand, ms from the start: hashed, committed, first successful LOGIN. */
export interface RowRun {
  hash: number;
  row: number;
  login: number;
  attempts: number;
}

export const headers = (h: Instance, body = false): Record<string, string> => ({
  authorization: `token ${h.token}`,
  accept: ACCEPT,
  ...(body ? { 'content-type': JSONAPI } : {}),
});

export let seq = 0;

export async function productRun(h: Instance): Promise<ProductRun> {
  checkInterrupted();
  const address = `m${++seq}@${DOMAIN}`;
  const wall0 = Date.now();
  const t0 = performance.now();
  const res = await fetch(`${h.base}/email-addresses`, {
    method: 'POST',
    headers: headers(h, true),
    body: JSON.stringify({ data: { type: 'email-address', attributes: { address, address_type: 'mailbox' } } }),
  });
  const body = (await res.json()) as { data?: { attributes: { address_ace: string; password: string } } };
  const t202 = performance.now();
  const jobUrl = res.headers.get('content-location');
  if (res.status !== 202 || !body.data?.attributes.password || !jobUrl) throw new Error(`POST /email-addresses on ${h.engine}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
  const { address_ace: user, password } = body.data.attributes;
  const first = await firstLogin(h.imap, user, password);
  // The job has to finish before the next run starts.
  const finishedAt = await jobFinishedAt(jobUrl, headers(h), { limitMs: LOGIN_LIMIT_MS, pollMs: JOB_POLL_MS, check: checkInterrupted });
  const found = h.found.get(user) ?? NaN;
  h.found.delete(user);
  return { post: t202 - t0, login: first.at - t0, found: found - t0, done: finishedAt - wall0, attempts: first.attempts };
}

/** The floor of a new mailbox: its hash as the API makes it, the directory row INSERTed in one transaction, the first LOGIN. */
export async function rowRun(h: Instance): Promise<RowRun> {
  checkInterrupted();
  const address = `f${++seq}@${DOMAIN}`;
  const password = crypto.randomBytes(15).toString('base64url');
  const t0 = performance.now();
  const hash = await blfCrypt(password);
  const tHash = performance.now();
  await h.store.db.transaction().execute(async (trx) => {
    const dir = new MailDirectoryRepository(trx);
    await dir.addDomain(DOMAIN, STACK_SERVER);
    await dir.addUser({ address, domain: DOMAIN, passwordHash: hash, quotaBytes: QUOTA_BYTES, recipientsPerHour: 500, server: STACK_SERVER });
  });
  const tRow = performance.now();
  const first = await firstLogin(h.imap, address, password);
  return { hash: tHash - t0, row: tRow - t0, login: first.at - t0, attempts: first.attempts };
}

/** The floor of any login: a new connection and LOGIN of a mailbox logged in to before. */
export async function existingRun(h: Instance, user: string, password: string): Promise<number> {
  checkInterrupted();
  const t0 = performance.now();
  const r = await login(h.imap, user, password);
  if (r.status !== 'OK') throw new Error(`IMAP LOGIN of the existing ${user}: ${r.status}`);
  return r.at - t0;
}
