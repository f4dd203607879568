// How a job's failure is shown to clients (the job's `error`) and in one-line summaries.

/** First line of the error message, at most 300 characters: shown to clients as `error`, so never a stack. */
export function shortError(err: unknown): string {
  const e = err as { message?: unknown; name?: unknown };
  const text = typeof e?.message === 'string' && e.message ? e.message : typeof e?.name === 'string' ? e.name : String(err);
  const line = text.split('\n', 1)[0].trim() || 'error';
  return line.length > 300 ? `${line.slice(0, 299)}…` : line;
}
