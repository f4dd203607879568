// JSON:API error documents as a client sees them (API guide "Compatibility with existing clients",
// "Errors"): the whole body, so a test asserts every member, not just the status.
import { BASE } from './app.js';

export interface ErrorSourceShape {
  pointer?: string;
  parameter?: string;
  header?: string;
}

/** `{ errors: [{ id, status, title, detail, source? }], links: { self } }` — one error. */
export const errorBody = (id: string, status: number, title: string, detail: string, self: string, source?: ErrorSourceShape) => ({
  errors: [{ id, status: String(status), title, detail, ...(source ? { source } : {}) }],
  links: { self },
});

/** 422 invalid_api_data on one attribute of a request to `path` (e.g. '/dns-records'). */
export const invalidAttribute = (path: string, field: string, detail: string) =>
  errorBody('invalid_api_data', 422, 'Invalid data', detail, `${BASE}${path}`, { pointer: `/data/attributes/${field}` });

/** 409 conflict on one attribute of a request to `path`. */
export const conflictOn = (path: string, field: string, detail: string) =>
  errorBody('conflict', 409, 'Conflict', detail, `${BASE}${path}`, { pointer: `/data/attributes/${field}` });

/** 404 for `url` (absolute, as `links.self` shows it): `notFoundAt(`${BASE}/plans/9`, 'plan')`. */
export const notFoundAt = (url: string, what: string) => errorBody('resource_not_found', 404, 'Resource not found', `No such ${what}.`, url);
