/**
 * Automatic prepared statements for a pg pool, as postgres.js does by default. Kysely sends
 * every query unnamed, so the server parses and plans it on every call; a named statement
 * is parsed once per connection and then only bound and executed. That is most of the gap
 * between a query-builder write and a hand-written prepared insert (bench/store).
 *
 * Names are derived from the SQL text, so a name always means the same text. The number of
 * distinct texts prepared per pool is bounded: past the bound, queries run unnamed as before,
 * so statements with variable arity (multi-row inserts) cannot grow server memory without
 * limit, and statements with many parameters (batches, whose text changes with their size)
 * are never named. A statement invalidated by DDL (`cached plan must not change result type`) is retried
 * unnamed and not prepared again.
 */
import { createHash } from 'node:crypto';
import type { Pool, PoolClient, QueryConfig } from 'pg';

const MAX_PREPARED = 500;
/** Statements with more parameters are batch statements whose text varies with batch size. */
const MAX_PARAMETERS = 64;
const PLAN_INVALIDATED = '0A000';

type QueryFn = (config: QueryConfig, values?: unknown[]) => Promise<unknown>;

/** Make every pooled client prepare parameterized statements by name. */
export function prepareStatements(pool: Pool): void {
  const names = new Map<string, string>();
  const poisoned = new Set<string>();
  const nameFor = (text: string): string | undefined => {
    if (poisoned.has(text)) return undefined;
    let name = names.get(text);
    if (name === undefined && names.size < MAX_PREPARED) {
      name = `saffron_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
      names.set(text, name);
    }
    return name;
  };
  pool.on('connect', (client: PoolClient) => {
    const original = client.query.bind(client) as unknown as (...args: unknown[]) => unknown;
    const patched = (...args: unknown[]): unknown => {
      const [text, values] = args;
      const name =
        typeof text === 'string' &&
        Array.isArray(values) &&
        values.length > 0 &&
        values.length <= MAX_PARAMETERS &&
        args.length === 2
          ? nameFor(text)
          : undefined;
      if (name === undefined) return original(...args);
      return (original as QueryFn)({
        name,
        text: text as string,
        values: values as unknown[],
      }).catch((error: unknown) => {
        if ((error as { code?: string }).code !== PLAN_INVALIDATED) throw error;
        poisoned.add(text as string);
        return original(text, values);
      });
    };
    (client as unknown as { query: unknown }).query = patched;
  });
}
