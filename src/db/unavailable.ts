// When the store cannot serve a request right now — busy past its wait, out of room, connections
// or memory, restarting, unreachable — the request is answered 503 `service_unavailable` with
// Retry-After, so a client repeats it later (API guide "Errors"). Any other failure stays an
// unexpected fault (500).

/** Seconds a client is asked to wait before repeating a request the store could not serve. */
export const STORE_RETRY_AFTER_S = 5;

/** SQLite's result codes (better-sqlite3's `code`, extended codes included) of a store that is busy or out of room. */
const SQLITE = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|CANTOPEN|NOMEM)(_|$)/;

/**
 * PostgreSQL's SQLSTATEs: class 08 (the connection failed), 53 (out of disk, memory, locks or
 * connections), 57P01–57P03 (the server shuts down or starts), 57014 (a statement cancelled: a
 * statement_timeout), 40001 and 40P01 (serialization failure, deadlock: worth repeating).
 */
const POSTGRES = /^(08...|53...|57P0[123]|57014|40001|40P01)$/;

/** A socket that could not reach the server or lost it. */
const NETWORK = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND']);

/** node-postgres's own errors for a lost or never made connection (they carry no code). */
const PG_CLIENT = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed)/;

/** Whether `err` says the store cannot serve the request now (a repeat later may succeed). */
export function storeUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (SQLITE.test(code) || POSTGRES.test(code) || NETWORK.has(code))) return true;
  return PG_CLIENT.test(err.message);
}
