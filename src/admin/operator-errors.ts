// The two refusals every operator action shares; the CLI prints them with their id.
import { AppError } from '../errors.js';

export const invalid = (detail: string) => new AppError('invalid_api_data', detail);

/** `row`, or a 404 naming what was asked for: `found(await repo.plan(id), `plan ${id}`)`. */
export function found<T>(row: T | undefined | null, what: string): T {
  if (!row) throw new AppError('resource_not_found', `No ${what}.`);
  return row;
}
