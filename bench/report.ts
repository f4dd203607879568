// What both benches share for output: number formatting, the Markdown table, a log sink.
import { Writable } from 'node:stream';

/** `fmt(12.345, 1)` → `'12.3'`; NaN or infinity → `'–'`. */
export const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : '–');

/** A Markdown table; the first `leftCols` columns are left-aligned, the rest right-aligned. */
export function markdownTable(head: string[], body: string[][], leftCols: number): string {
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const left = (i: number) => i < leftCols;
  const line = (cells: string[]) => '| ' + cells.map((c, i) => (left(i) ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ') + ' |';
  const rule = '|' + widths.map((w, i) => (left(i) ? ':' + '-'.repeat(w + 1) : '-'.repeat(w + 1) + ':')).join('|') + '|';
  return [line(head), rule, ...body.map(line)].join('\n');
}

/** Discards log lines: the cost of producing them is measured, not the cost of a terminal. */
export const discard = () => new Writable({ write: (_chunk, _enc, done) => done() });
