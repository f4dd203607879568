// The web server bench as a client: redirects created through the API, Caddy asked until it
// answers them, and sites brought up in bulk for a size.
import http from 'node:http';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { sleep, ACCEPT, JSONAPI } from '../report.js';
import { CaddyClient } from '../../src/provisioning/web/caddy-client.js';
import type { WebServerConn } from '../../src/provisioning/web/sites.js';
import { BULK_PARALLEL, BULK_STALL_MS, DOMAIN, checkInterrupted } from './settings.js';
import { type Instance } from './instance.js';

/** What the web server answers for `host` at `/` on plain HTTP, not following redirects; a new connection each time. */
export function ask(web: WebServerConn, host: string): Promise<{ status: number; location: string | null }> {
  const port = Number(web.httpListen.slice(web.httpListen.lastIndexOf(':') + 1));
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/', method: 'GET', headers: { host }, timeout: 10_000, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, location: (res.headers.location as string | undefined) ?? null }));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer from ${web.httpListen} for ${host}`)));
    req.on('error', reject);
    req.end();
  });
}

export const targetOf = (label: string) => `https://target.example/${label}`;
export const hostOf = (label: string) => `${label}.${DOMAIN}`;

/** Whether the web server answers `label`'s host with exactly its redirect; errors (a connection refused mid-reload) count as "not yet". */
export async function answers(h: Instance, label: string): Promise<boolean> {
  try {
    const a = await ask(h.web, hostOf(label));
    return a.status === 301 && a.location === targetOf(label);
  } catch {
    return false;
  }
}

export const headers = (h: Instance, body = false): Record<string, string> => ({
  authorization: `token ${h.token}`,
  accept: ACCEPT,
  ...(body ? { 'content-type': JSONAPI } : {}),
});

/** POST /subdomains (a static redirect to targetOf(label)): the job's URL. */
export async function postRedirect(h: Instance, label: string): Promise<string> {
  const res = await fetch(`${h.base}/subdomains`, {
    method: 'POST',
    headers: headers(h, true),
    body: JSON.stringify({ data: { type: 'subdomain', attributes: { subdomain_type: 'redirect', domain: DOMAIN, subdomain: label, redirect: { target: targetOf(label) } } } }),
  });
  const text = await res.text();
  const job = res.headers.get('content-location');
  if (res.status !== 202 || !job) throw new Error(`POST /subdomains ${label} on ${h.engine}: ${res.status} ${text.slice(0, 300)}`);
  return job;
}

export const siteCount = async (h: Instance, state?: 'live') => {
  let q = h.store.db.selectFrom('subdomains').select((eb) => eb.fn.countAll<number>().as('n'));
  if (state) q = q.where('state', '=', state);
  return Number((await q.executeTakeFirstOrThrow()).n);
};

/** Routes of the plain-HTTP server in Caddy's running config, without the catch-all. */
export async function caddyRoutes(h: Instance): Promise<number> {
  const cfg = (await new CaddyClient(h.web.caddyAdmin).current()) as { apps?: { http?: { servers?: { hp?: { routes?: unknown[] } } } } } | null;
  return (cfg?.apps?.http?.servers?.hp?.routes?.length ?? 1) - 1;
}

/**
 * The existing sites: `count` redirects POSTed over HTTP (BULK_PARALLEL in flight) while the
 * worker is not running yet, then the worker and the reconciler start and bring them up. Checked:
 * every one is live, Caddy's config has a route for each, the first and the last one answer.
 */
export async function bringUpExisting(h: Instance, count: number, log: (s: string) => void): Promise<{ postS: number; upS: number }> {
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: BULK_PARALLEL }, async () => {
      for (let i = next++; i < count; i = next++) {
        checkInterrupted();
        await postRedirect(h, `e${i}`);
      }
    }),
  );
  const posted = performance.now();
  await h.startBackground();
  let live = -1;
  let progressAt = performance.now();
  for (;;) {
    checkInterrupted();
    const now = await siteCount(h, 'live');
    if (now === count) break;
    if (now !== live) {
      live = now;
      progressAt = performance.now();
    } else if (performance.now() - progressAt > BULK_STALL_MS) {
      throw new Error(`bringing up ${count} sites stalled at ${now} live for ${BULK_STALL_MS / 1000} s`);
    }
    await sleep(200);
  }
  const up = performance.now();
  const routes = await caddyRoutes(h);
  if (routes !== count) throw new Error(`Caddy's config has ${routes} routes for ${count} live sites`);
  for (const label of count ? ['e0', `e${count - 1}`] : []) {
    if (!(await answers(h, label))) throw new Error(`existing site ${hostOf(label)} does not answer its redirect`);
  }
  log(`  ${h.engine}: ${count} existing sites POSTed in ${((posted - started) / 1000).toFixed(1)} s, live and in Caddy's config ${((up - posted) / 1000).toFixed(1)} s later`);
  return { postS: (posted - started) / 1000, upS: (up - posted) / 1000 };
}
