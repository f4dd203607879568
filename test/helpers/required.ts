// Suites that need something of the machine (PostgreSQL, Redis, dig, lego, root) skip with a
// reason on a developer's machine, but CI sets CI_REQUIRE_ALL=1 (.ci/run): there a missing
// prerequisite fails the run instead of turning it silently green.
import { describe, it } from 'vitest';

const REQUIRED = process.env.CI_REQUIRE_ALL === '1';

/**
 * `requirable(reason)('name', () => …)`: runs the suite when `reason` is null; otherwise skips it,
 * or fails it under CI_REQUIRE_ALL=1.
 */
export function requirable(reason: string | null): (name: string, body: () => void) => void {
  if (reason === null) return (name, body) => describe(name, body);
  if (REQUIRED) {
    return (name) =>
      describe(name, () => {
        it('runs in CI (CI_REQUIRE_ALL=1)', () => {
          throw new Error(`required in CI but cannot run: ${reason}`);
        });
      });
  }
  return (name, body) => describe.skip(`${name} (skipped: ${reason})`, body);
}
