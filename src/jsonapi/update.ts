// Rules every PATCH shares (spec §2.0, §7.3).
import { AppError } from '../errors.js';

/** Throws 409 `id_mismatch` unless the body names the resource of the URL. */
export function assertUpdateTarget(data: { type: string; id: string }, type: string, urlId: string, same = (a: string, b: string) => a === b) {
  if (data.type !== type) {
    throw new AppError('id_mismatch', `data.type must be "${type}".`, { pointer: '/data/type' });
  }
  if (!same(data.id, urlId)) {
    throw new AppError('id_mismatch', 'data.id must equal the identifier in the URL.', { pointer: '/data/id' });
  }
}
