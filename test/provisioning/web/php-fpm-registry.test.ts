// The registry PHP-FPM supervisors share (docs/decisions/0008-web-servers.md "PHP-FPM"): calls for
// one (state dir, version) run one after the other, a failed call does not stop the next, other
// versions and state dirs do not wait, and "files not yet taken by the master" is kept per pair.
import { expect, it } from 'vitest';
import { PhpFpmRegistry } from '../../../src/provisioning/web/php-fpm-registry.js';

const tick = () => new Promise((r) => setTimeout(r, 5));

it('calls of one (state dir, version) run one after the other; a failure does not stop the next', async () => {
  const registry = new PhpFpmRegistry();
  const events: string[] = [];
  const call = (name: string, fail = false) =>
    registry.serialise('/s', '8.2', async () => {
      events.push(`${name} start`);
      await tick();
      events.push(`${name} end`);
      if (fail) throw new Error(`${name} failed`);
      return name;
    });
  const results = await Promise.allSettled([call('a'), call('b', true), call('c')]);
  expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual(['a', 'b failed', 'c']);
  expect(events).toEqual(['a start', 'a end', 'b start', 'b end', 'c start', 'c end']);
});

it('another version or state dir does not wait', async () => {
  const registry = new PhpFpmRegistry();
  let release!: () => void;
  const held = registry.serialise('/s', '8.2', () => new Promise<void>((r) => (release = r)));
  expect(await registry.serialise('/s', '8.3', async () => 'other version')).toBe('other version');
  expect(await registry.serialise('/t', '8.2', async () => 'other dir')).toBe('other dir');
  release();
  await held;
});

it('unapplied files are remembered per (state dir, version) until applied', () => {
  const registry = new PhpFpmRegistry();
  registry.markUnapplied('/s', '8.2');
  expect([registry.isUnapplied('/s', '8.2'), registry.isUnapplied('/s', '8.3'), registry.isUnapplied('/t', '8.2')]).toEqual([true, false, false]);
  registry.markApplied('/s', '8.2');
  expect(registry.isUnapplied('/s', '8.2')).toBe(false);
  // Each registry is its own: nothing is kept at module level.
  registry.markUnapplied('/s', '8.2');
  expect(new PhpFpmRegistry().isUnapplied('/s', '8.2')).toBe(false);
});
