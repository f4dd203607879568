// The repository's own documents are the contract: comments, test names, the docs and the deploy
// files cite the API guide's sections and the decision records, never a file a contributor who
// clones the repository lacks (the original specification, its notes) nor an issue number; and
// every cited heading and record exists.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// Built from parts, so this file does not match itself. In any letter case, and an issue number
// also in the plural or with "#".
const OUTSIDE = new RegExp(['spec' + ' §', 'spec' + '\\.md', 'API-' + 'NOTES', 'issues?' + ' #?[0-9]'].join('|'), 'i');

const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
/** The text with each line break and the comment or quote marker after it as one space: a citation split across lines reads whole. */
const joined = (text: string) => text.replace(/[ \t]*\r?\n[ \t]*(?:\/\/|\*(?!\/)|#|>)?[ \t]*/g, ' ');

/** The files under `dir` whose names `keep` accepts, relative to the repository root. */
function walk(dir: string, keep: (name: string) => boolean): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) return walk(rel, keep);
    return keep(e.name) ? [rel] : [];
  });
}

/** Every match of `pattern` (with the g flag) in `files`, as its first group. */
const cited = (files: string[], pattern: RegExp) => new Set(files.flatMap((f) => [...joined(read(f)).matchAll(pattern)].map((m) => m[1])));

const code = ['src', 'test', 'bench', 'panel'].flatMap((dir) => walk(dir, (name) => /\.(tsx?|mjs|sh)$/.test(name)));
const docs = [...walk('docs', (name) => name.endsWith('.md')), 'README.md'];
// Every text file of the deploy templates and the CI script: a NUL byte marks a binary.
const deploy = ['deploy', '.ci'].flatMap((dir) => walk(dir, () => true)).filter((f) => !fs.readFileSync(path.join(ROOT, f)).includes(0));
const files = [...code, ...docs, ...deploy];

describe('citations', () => {
  it('no comment or test name cites a document outside the repository or an issue number', () => {
    expect(docs).toContain(path.join('docs', 'decisions', '0001-foundation.md'));
    expect(deploy).toContain(path.join('deploy', 'systemd', 'hostplane-serve.service'));
    const found = files.flatMap((f) => read(f).split('\n').flatMap((line, i) => (OUTSIDE.test(line) ? [`${f}:${i + 1}: ${line.trim()}`] : [])));
    expect(found).toEqual([]);
    // …nor one split across two lines.
    const split = files.flatMap((f) => [...joined(read(f)).matchAll(new RegExp(`.{0,40}(?:${OUTSIDE.source}).{0,40}`, 'gi'))].map((m) => `${f}: ${m[0]}`));
    expect(split).toEqual([]);
  });

  it('every API guide section cited names a heading of docs/api-guide.md', () => {
    const headings = new Set([...read('docs/api-guide.md').matchAll(/^#+ (.+)$/gm)].map((m) => m[1].trim()));
    const sections = [...cited(files, /API guide ((?:"[^"\n]+"(?:, )?)+)/g)].flatMap((list) => [...list.matchAll(/"([^"]+)"/g)].map((q) => q[1]));
    expect(sections.filter((s) => !headings.has(s))).toEqual([]);
  });

  it('every decision record cited exists, by its path or as "decision NNNN"', () => {
    const records = fs.readdirSync(path.join(ROOT, 'docs/decisions'));
    const byPath = [...cited(files, /docs\/decisions\/([0-9]{4}-[a-z0-9-]+\.md)/g)].filter((c) => !records.includes(c));
    const byNumber = [...cited(files, /\bdecision ([0-9]{4})\b/gi)].filter((n) => !records.some((r) => r.startsWith(`${n}-`)));
    expect([...byPath, ...byNumber]).toEqual([]);
  });
});
