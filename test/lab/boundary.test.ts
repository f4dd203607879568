// The lab's code lives in src/lab/ and is never imported by the product (decision 0018 "The
// lab"): only the `lab` command loads it, on demand.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '../../src');

function files(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

describe('the lab and the product', () => {
  it('no product module imports src/lab/; the lab command loads it with a dynamic import', () => {
    const importers = files(SRC)
      .filter((f) => !f.startsWith(path.join(SRC, 'lab') + path.sep))
      .filter((f) => /(from|import\()\s*'[./]*(\.\.\/)?lab\//.test(fs.readFileSync(f, 'utf8')))
      .map((f) => path.relative(SRC, f));
    expect(importers).toEqual(['cli/lab.ts']);
    expect(fs.readFileSync(path.join(SRC, 'cli/lab.ts'), 'utf8')).not.toMatch(/^import .*lab\//m);
  });
});
