// Rules of webhooks without I/O (API guide "Webhooks"; docs/decisions/0027-webhooks.md): the events
// there are, what a job's outcome reports, the checks of a receiver URL at creation, the retry
// schedule.
import type { QueueJobRow } from '../../queue/jobs.js';
import { JOB_TYPE_SEGMENTS } from '../queue-jobs/queue-jobs.schema.js';
import { judgeAddress, type AddressPolicy } from './webhooks.addresses.js';

/** The objects whose changes run as jobs, with the actions each has (test/resources/webhooks/rules.test.ts holds this to the job registry). */
const OBJECT_EVENTS = {
  'dns-record': ['created', 'deleted'],
  database: ['created', 'updated', 'deleted'],
  'email-address': ['created', 'deleted'],
  subdomain: ['created', 'updated', 'deleted'],
  'ssh-key': ['created', 'deleted'],
  domain: ['updated'],
} as const satisfies Record<keyof typeof JOB_TYPE_SEGMENTS, readonly string[]>;

/** Every event a webhook can subscribe to, `*` (all of them) first. */
export const EVENT_TYPES: readonly string[] = [
  '*',
  'queue-job.done',
  'queue-job.failed',
  ...Object.entries(OBJECT_EVENTS).flatMap(([type, actions]) => actions.map((a) => `${type}.${a}`)),
];

const PAST: Record<string, string> = { create: 'created', update: 'updated', delete: 'deleted' };

/** Where `events` is at fault (an index into it, or the whole list) and why; null when it is fine. */
export function eventsProblem(events: unknown): { at: string; detail: string } | null {
  if (!Array.isArray(events) || events.length === 0) return { at: 'events', detail: 'events must list at least one event, e.g. ["queue-job.done"], or ["*"] for all.' };
  for (const [i, e] of events.entries()) {
    if (typeof e !== 'string' || !EVENT_TYPES.includes(e)) {
      return { at: `events/${i}`, detail: `${JSON.stringify(e)} is not an event. Known: ${EVENT_TYPES.join(', ')}.` };
    }
    if (events.indexOf(e) !== i) return { at: `events/${i}`, detail: `${e} is listed twice.` };
  }
  return null;
}

/** An event a finished job reports: its name, the payload's `data`, and the object it is about (for the order). */
export interface JobEvent {
  event: string;
  data: Record<string, unknown>;
}

/**
 * The events of a job's outcome: `queue-job.done`/`.failed` (jobs a client can see), then, for a
 * done create, update or delete, the object's `<type>.created|updated|deleted`. Jobs of nobody
 * (scheduled, DKIM rotation) report nothing. Links are relative; the sender makes them absolute.
 */
export function jobEvents(job: QueueJobRow): JobEvent[] {
  if (job.customer_id === null || !Object.hasOwn(JOB_TYPE_SEGMENTS, job.job_type)) return [];
  const segment = JOB_TYPE_SEGMENTS[job.job_type as keyof typeof JOB_TYPE_SEGMENTS];
  const object = job.object_id === null ? null : { type: job.job_type, id: job.object_id };
  const objectLink = object && `/${segment}/${encodeURIComponent(object.id)}`;
  const jobLink = `/queue-jobs/${job.id}`;
  const out: JobEvent[] = [];
  // Jobs of the customer menu are never shown to clients (API guide "Queue jobs"): no job events.
  if (!job.from_menu) {
    out.push({
      event: `queue-job.${job.status}`,
      data: {
        id: String(job.id), job_type: job.job_type, action: job.action, status: job.status, error: job.error,
        created_at: job.created_at, finished_at: job.finished_at, object, customer_id: String(job.customer_id),
        links: { 'queue-job': jobLink, object: objectLink },
      },
    });
  }
  const past = PAST[job.action];
  if (job.status === 'done' && past && object) {
    const links: Record<string, string> = past === 'deleted' ? {} : { self: objectLink! };
    if (!job.from_menu) links['queue-job'] = jobLink;
    out.push({ event: `${job.job_type}.${past}`, data: { type: object.type, id: object.id, customer_id: String(job.customer_id), links } });
  }
  return out;
}

/** What a webhook URL may be at most (as long as a redirect target). */
export const MAX_URL_LENGTH = 2000;

// eslint-disable-next-line no-control-regex
const UNSAFE = /[\s\u0000-\u001f\u007f]/;

/** The host of a URL as an address, when it is one (`[::1]` → `::1`), else null. */
export const literalAddress = (hostname: string) => (/^\[.*\]$/.test(hostname) ? hostname.slice(1, -1) : /^[0-9.]+$/.test(hostname) ? hostname : null);

/**
 * Checks a receiver URL as a client sends it, before anything is stored: https (plain http only
 * where the operator allows addresses), no credentials, no fragment, and a literal address only
 * where webhooks may go. A host name is judged when each delivery resolves it.
 * `webhookUrl('https://hooks.example.net/x', policy)` → `{ ok: true, url: 'https://hooks.example.net/x' }`.
 */
export function webhookUrl(input: unknown, policy: AddressPolicy): { ok: true; url: string } | { ok: false; detail: string } {
  const refuse = (detail: string) => ({ ok: false as const, detail });
  if (typeof input !== 'string' || input === '') return refuse('url must be an absolute https:// URL.');
  if (input.length > MAX_URL_LENGTH) return refuse(`url is longer than ${MAX_URL_LENGTH} characters.`);
  if (UNSAFE.test(input)) return refuse('url must not contain spaces or control characters.');
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return refuse('url is not an absolute URL.');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return refuse('url must be an https:// URL.');
  if (url.username || url.password) return refuse('url must not carry a user name or password; the signature authenticates each delivery.');
  if (url.hash) return refuse('url must not have a fragment (#…).');
  const literal = literalAddress(url.hostname);
  const verdict = literal === null ? null : judgeAddress(literal, policy);
  if (verdict && !verdict.ok) {
    return refuse(`${literal} is ${verdict.reason}: webhooks are never sent to loopback, private, link-local, multicast, unspecified or other special addresses, nor to the service's own.`);
  }
  if (url.protocol === 'http:' && !(verdict?.ok ? verdict.allowed : policy.allow.length > 0)) {
    return refuse('url must be an https:// URL: plain http:// is only for addresses the operator allows.');
  }
  return { ok: true, url: url.href };
}

/** How long an event is retried, counted from the event: then its webhook is marked failing. */
export const RETRY_WINDOW_MS = 24 * 60 * 60 * 1000;

/** Waits after the 1st, 2nd, … failed attempt (the Standard Webhooks schedule); the last repeats. */
const RETRY_DELAYS_MS = [5_000, 5 * 60_000, 30 * 60_000, 2 * 3600_000, 5 * 3600_000, 10 * 3600_000];

/**
 * When to try again after the `attempts`-th failed attempt at `now` of an event that occurred at
 * `occurredAt` (ms), or null when its window is over: the last try is at the window's end.
 * `nextAttemptAt(1, t0, t0)` → t0 + 5 s.
 */
export function nextAttemptAt(attempts: number, occurredAt: number, now: number): number | null {
  const end = occurredAt + RETRY_WINDOW_MS;
  if (now >= end) return null;
  return Math.min(now + RETRY_DELAYS_MS[Math.min(attempts, RETRY_DELAYS_MS.length) - 1], end);
}
