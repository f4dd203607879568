// Runs a list query for one page (or all rows when unpaged) and counts the total.
import type { SelectQueryBuilder } from 'kysely';

export interface Page {
  number: number;
  size: number;
}

export interface PageResult<R> {
  rows: R[];
  total: number;
}

/** `fetchPage(db.selectFrom('plans').selectAll().orderBy('id'), { number: 2, size: 10 })`. */
export async function fetchPage<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  page: Page | null,
): Promise<PageResult<O>> {
  if (!page) {
    const rows = await query.execute();
    return { rows, total: rows.length };
  }
  const counted = await query
    .clearSelect()
    .clearOrderBy()
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirst();
  const total = Number((counted as { n?: number } | undefined)?.n ?? 0);
  const rows = await query.limit(page.size).offset((page.number - 1) * page.size).execute();
  return { rows, total };
}

/** The answer of a list whose filters can match nothing (e.g. no filter value can be an id). */
export const EMPTY_PAGE: PageResult<never> = Object.freeze({ rows: [], total: 0 }) as PageResult<never>;
