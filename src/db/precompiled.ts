// Hot queries whose shape never changes, compiled once. Building and compiling a Kysely query
// costs more than running a small indexed query; the per-request ones (token lookup) pay it once.
import { CompiledQuery, type Compilable, type Kysely } from 'kysely';

/**
 * Compiles `build` once with placeholder arguments and afterwards only swaps in the real values:
 * `const byHash = precompiled(db, (h: string) => db.selectFrom('api_tokens').selectAll().where('token_hash', '=', h))`
 * then `await byHash.first('ab12…')`. Every argument must reach the query as a parameter, unchanged.
 */
export function precompiled<A extends unknown[], O>(db: Kysely<any>, build: (...args: A) => Compilable<O>) {
  let compiled: { sql: string; parameters: readonly unknown[]; slots: number[] } | null = null;
  const compile = (arity: number) => {
    const placeholders = Array.from({ length: arity }, (_, i) => `\u0000precompiled-argument-${i}`);
    const q = build(...(placeholders as A)).compile();
    const slots = q.parameters.map((p) => placeholders.indexOf(p as string));
    for (let i = 0; i < arity; i++) {
      if (!slots.includes(i)) throw new Error(`precompiled: argument ${i} does not reach the query as a parameter`);
    }
    return { sql: q.sql, parameters: q.parameters, slots };
  };
  return {
    async all(...args: A): Promise<O[]> {
      compiled ??= compile(args.length);
      const { sql, parameters, slots } = compiled;
      const values = parameters.map((p, i) => (slots[i] >= 0 ? args[slots[i]] : p));
      return (await db.executeQuery<O>(CompiledQuery.raw(sql, values))).rows;
    },
    async first(...args: A): Promise<O | undefined> {
      return (await this.all(...args))[0];
    },
  };
}
