/** The one timestamp format of the store: ISO-8601 UTC with milliseconds (sorts as text). */
export const nowIso = (offsetMs = 0) => new Date(Date.now() + offsetMs).toISOString();
