// The repository's own documents are the contract: comments and test names cite the API guide's
// sections and the decision records, never a file a contributor who clones the repository lacks
// (the original specification, its notes) nor an issue number; and every cited heading exists.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// Built from parts, so this file does not match itself.
const OUTSIDE = new RegExp(['spec' + ' §', 'spec' + '\\.md', 'API-' + 'NOTES', 'issue' + ' [0-9]'].join('|'));

function sources(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) return sources(rel);
    return /\.(ts|mjs|sh)$/.test(e.name) ? [rel] : [];
  });
}

describe('citations', () => {
  const files = ['src', 'test', 'bench'].flatMap(sources);

  it('no comment or test name cites a document outside the repository or an issue number', () => {
    const found = files.flatMap((f) =>
      fs.readFileSync(path.join(ROOT, f), 'utf8').split('\n').flatMap((line, i) => (OUTSIDE.test(line) ? [`${f}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(found).toEqual([]);
  });

  it('every API guide section cited names a heading of docs/api-guide.md', () => {
    const guide = fs.readFileSync(path.join(ROOT, 'docs/api-guide.md'), 'utf8');
    const headings = new Set([...guide.matchAll(/^#+ (.+)$/gm)].map((m) => m[1].trim()));
    const cited = new Set(files.flatMap((f) => [...fs.readFileSync(path.join(ROOT, f), 'utf8').matchAll(/API guide ((?:"[^"\n]+"(?:, )?)+)/g)].flatMap((m) => [...m[1].matchAll(/"([^"]+)"/g)].map((q) => q[1]))));
    expect([...cited].filter((c) => !headings.has(c))).toEqual([]);
  });

  it('every decision record cited exists', () => {
    const cited = new Set(files.flatMap((f) => [...fs.readFileSync(path.join(ROOT, f), 'utf8').matchAll(/docs\/decisions\/([0-9]{4}-[a-z0-9-]+\.md)/g)].map((m) => m[1])));
    expect([...cited].filter((c) => !fs.existsSync(path.join(ROOT, 'docs/decisions', c)))).toEqual([]);
  });
});
