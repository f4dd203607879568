// Every 202 names a queue job; the panel polls it (GET /queue-jobs/{id}, API guide "Queue jobs")
// until it is done or failed. By id, not by the job's absolute link: links carry the server's
// PUBLIC_BASE_URL, which need not be the origin the page came from (and the CSP allows 'self' only).
import { api, idFromLink, type Resource } from './client';

export interface JobAttributes {
  job_type: string;
  status: 'pending' | 'done' | 'failed';
  action: string | null;
  error: string | null;
}

/** The job of a 202 answer: the primary data itself, or the object's `links.queue-job`. */
export function jobIdOf(resource: Resource<unknown>): string | null {
  if (resource.type === 'queue-job') return resource.id;
  return idFromLink(resource.links?.['queue-job']);
}

// Most jobs finish within a second; polling slows down after that so a long one costs few requests.
const DELAYS_MS = [250, 500, 750, 1000, 1500, 2000, 3000];

/** Resolves with the job once it is done or failed; `onUpdate` sees each state. */
export async function waitForJob(id: string, onUpdate?: (job: JobAttributes) => void, signal?: AbortSignal): Promise<JobAttributes> {
  for (let i = 0; ; i++) {
    await new Promise((resolve) => setTimeout(resolve, DELAYS_MS[Math.min(i, DELAYS_MS.length - 1)]));
    if (signal?.aborted) throw new DOMException('aborted', 'AbortError');
    const { data } = await api<Resource<JobAttributes>>('GET', `/queue-jobs/${encodeURIComponent(id)}`);
    onUpdate?.(data.attributes);
    if (data.attributes.status !== 'pending') return data.attributes;
  }
}
