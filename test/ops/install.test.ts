// What a newcomer meets before the server runs: `npm ci` on the project's Node
// prints no EBADENGINE warning — npm warns when a locked package's `engines.node` does not admit
// the running Node, so every package in the lock must admit it — and the licence package.json
// names is the one the LICENSE file grants.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');

describe('installing hostplane', () => {
  const pkg = JSON.parse(read('package.json')) as { engines: { node: string }; license: string };
  const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { version?: string; engines?: { node?: string } | string[] }> };

  it('every locked package admits the running Node and the Node range package.json promises (no EBADENGINE)', () => {
    const lowest = semver.minVersion(pkg.engines.node)!.version;
    const refused = Object.entries(lock.packages)
      .filter(([name]) => name !== '')
      .flatMap(([name, p]) => {
        const range = Array.isArray(p.engines) ? undefined : p.engines?.node;
        if (!range) return [];
        const bad = [process.version, lowest].filter((v) => !semver.satisfies(v, range, { includePrerelease: true }));
        return bad.length ? [`${name}@${p.version} wants node ${range}; refuses ${bad.join(', ')}`] : [];
      });
    expect(refused).toEqual([]);
    expect(semver.satisfies(process.version, pkg.engines.node)).toBe(true);
  });

  it('LICENSE grants the licence package.json names', () => {
    expect(pkg.license).toBe('MIT');
    expect(read('LICENSE')).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} /);
    expect(read('LICENSE')).toContain('Permission is hereby granted, free of charge');
  });

  it('the package an operator installs ships the built command and panel, its documents and deploy files, and no tests, benches or sources', () => {
    const [pack] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8' })) as [{ files: { path: string }[] }];
    const files = pack.files.map((f) => f.path);
    for (const needed of ['dist/main.js', 'dist/panel/index.html', 'docs/api-guide.md', 'deploy/systemd/hostplane-serve.service', 'deploy/local/up.sh', 'native/udp-batch/udp_batch.c', 'README.md', 'LICENSE']) {
      expect(files).toContain(needed);
    }
    expect(files.filter((f) => /^(test|bench|src|panel)\//.test(f))).toEqual([]);
  });
});
