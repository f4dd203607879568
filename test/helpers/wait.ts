// Waiting in tests: bounded polls, as a client polls a job. Never a timing assertion: a poll that
// runs out throws with what it was waiting for.

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` every 10 ms until it returns something truthy, and returns that: `await waitFor('job 3 to settle', () => doneRow(3))`. */
export async function waitFor<T>(what: string, fn: () => Promise<T | undefined | null | false>, timeoutMs = 10_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** Polls `fn` every 20 ms until `ok(value)`, and returns the value; the error shows the last one. */
export async function pollUntil<T>(fn: () => Promise<T>, ok: (v: T) => boolean, what: string, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await sleep(20);
  }
}

/** Polls `check` every 10 ms until it holds; returns how long that took (for reports, never asserted as a time limit). */
export async function elapsedUntil(check: () => Promise<boolean> | boolean, ms = 3000): Promise<number> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > ms) throw new Error(`condition not met within ${ms} ms`);
    await sleep(10);
  }
  return Date.now() - start;
}
