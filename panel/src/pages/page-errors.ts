import { ApiError, type ApiErrorObject } from '../api/client';

/** A failed load as error objects for FormErrors. */
export function apiErrors(err: unknown): ApiErrorObject[] {
  return err instanceof ApiError ? err.errors : [{ id: 'generic', status: '0', detail: String(err) }];
}
