// The catalogue of user-facing errors (API guide "Errors"). Ids are stable: clients match on them.

export const ERRORS = {
  bad_request: { status: 400, title: 'Bad request' },
  invalid_parameter: { status: 400, title: 'Invalid query parameter' },
  invalid_header: { status: 400, title: 'Invalid request header' },
  unauthorized: { status: 401, title: 'Authentication required' },
  invalid_credentials: { status: 401, title: 'Invalid credentials' },
  totp_required: { status: 401, title: 'Two-factor code required' },
  forbidden: { status: 403, title: 'Forbidden' },
  record_not_deletable: { status: 403, title: 'Record cannot be deleted' },
  token_scope: { status: 403, title: 'Outside the token\'s scope' },
  csrf_token_invalid: { status: 403, title: 'Anti-CSRF token missing or wrong' },
  resource_not_found: { status: 404, title: 'Resource not found' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  not_acceptable: { status: 406, title: 'Not acceptable' },
  request_timeout: { status: 408, title: 'Request timeout' },
  gone: { status: 410, title: 'Endpoint switched off' },
  id_mismatch: { status: 409, title: 'Identifier mismatch' },
  conflict: { status: 409, title: 'Conflict' },
  invalid_state: { status: 409, title: 'Not allowed in the current state' },
  limit_reached: { status: 409, title: 'Plan limit reached' },
  totp_already_enabled: { status: 409, title: 'Two-factor login already enabled' },
  idempotency_key_in_use: { status: 409, title: 'Idempotency key in use' },
  precondition_failed: { status: 412, title: 'Precondition failed' },
  payload_too_large: { status: 413, title: 'Payload too large' },
  uri_too_long: { status: 414, title: 'URI too long' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  headers_too_large: { status: 431, title: 'Request header fields too large' },
  invalid_api_data: { status: 422, title: 'Invalid data' },
  invalid_password: { status: 422, title: 'Invalid password' },
  idempotency_key_reused: { status: 422, title: 'Idempotency key reused' },
  rate_limited: { status: 429, title: 'Too many requests' },
  too_many_errors: { status: 429, title: 'Too many errors' },
  internal_error: { status: 500, title: 'Internal server error' },
  service_unavailable: { status: 503, title: 'Service unavailable' },
} as const;

export type ErrorCode = keyof typeof ERRORS;

export interface ErrorSource {
  pointer?: string;
  parameter?: string;
  /** The request header at fault (JSON:API 1.1), e.g. `Idempotency-Key`. */
  header?: string;
}

/** One JSON:API error object; `new AppError('conflict', 'Address exists.', { pointer: '/data/attributes/address' })`. */
export class AppError extends Error {
  readonly status: number;
  readonly title: string;
  constructor(
    readonly code: ErrorCode,
    readonly detail?: string,
    readonly source?: ErrorSource,
    readonly headers?: Record<string, string>,
  ) {
    super(detail ?? ERRORS[code].title);
    this.status = ERRORS[code].status;
    this.title = ERRORS[code].title;
  }
}

/** Several field errors reported together (all share one code). */
export class AppErrors extends Error {
  constructor(readonly errors: AppError[]) {
    super(errors.map((e) => e.message).join('; '));
  }
}

export const notFound = (what = 'resource') => new AppError('resource_not_found', `No such ${what}.`);
/**
 * An error about one attribute of the request body, pointing at it:
 * `invalidField('ttl', 'ttl must be 300 to 86400.')`, or with another code:
 * `invalidField('external_customer_id', 'Taken.', 'conflict')`.
 */
/** 409 `limit_reached` (API guide "Errors"), the id every plan limit answers with. */
export const limitReached = (detail: string): AppError => new AppError('limit_reached', detail);

export const invalidField = (attribute: string, detail: string, code: ErrorCode = 'invalid_api_data') =>
  new AppError(code, detail, { pointer: `/data/attributes/${attribute}` });

/**
 * A failure no retry can fix (the object is gone, the data is invalid): the job fails at once.
 * Here, below every layer, so drivers and job runs throw it without depending on the queue.
 */
export class PermanentJobError extends Error {}
