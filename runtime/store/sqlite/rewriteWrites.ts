/**
 * A hook on every statement of a SQLite store that writes: the embedder may rewrite the text
 * parameters it binds. The edge agent uses it to mask card numbers (edge/cardData), and it
 * sits under the query builder, the hand-compiled hot paths and the multi-row commits alike,
 * so no write path of the store can go around it. Statements that only read are left
 * untouched: a lookup must see the values exactly as they were given.
 */
import type BetterSqlite3 from 'better-sqlite3';

/**
 * Chooses, once per statement (by its SQL), how its text parameters are rewritten before
 * they are bound; undefined leaves the statement's parameters as they are.
 */
export type WriteTextRewriter = (sql: string) => ((text: string) => string) | undefined;

/** `parameters` with each string (also inside an array or a named-parameter object) rewritten. */
function rewriteParameters(parameters: unknown[], rewrite: (text: string) => string): unknown[] {
  const mapOne = (value: unknown): unknown => {
    if (typeof value === 'string') return rewrite(value);
    if (Array.isArray(value)) return value.map(mapOne);
    if (value !== null && typeof value === 'object' && !Buffer.isBuffer(value)) {
      const named: Record<string, unknown> = {};
      for (const [key, member] of Object.entries(value)) named[key] = mapOne(member);
      return named;
    }
    return value;
  };
  return parameters.map(mapOne);
}

const BINDING_METHODS = new Set<PropertyKey>(['run', 'get', 'all', 'iterate', 'bind']);

/** A statement whose binding methods rewrite their text parameters first. */
function rewritingStatement(
  statement: BetterSqlite3.Statement,
  rewrite: (text: string) => string,
): BetterSqlite3.Statement {
  return new Proxy(statement, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      const method = value as (...a: unknown[]) => unknown;
      if (!BINDING_METHODS.has(property)) {
        return (...args: unknown[]) => {
          const result = method.apply(target, args);
          // chained setters (raw, pluck, expand, safeIntegers) return the statement itself
          return result === target ? rewritingStatement(target, rewrite) : result;
        };
      }
      return (...args: unknown[]) => method.apply(target, rewriteParameters(args, rewrite));
    },
  });
}

/** A view of `database` whose writing statements pass their text parameters through `rewriter`. */
export function rewriteWrites(
  database: BetterSqlite3.Database,
  rewriter: WriteTextRewriter,
): BetterSqlite3.Database {
  const prepare = (source: string): BetterSqlite3.Statement => {
    const statement = database.prepare(source);
    if (statement.readonly) return statement;
    const rewrite = rewriter(source);
    return rewrite ? rewritingStatement(statement, rewrite) : statement;
  };
  return new Proxy(database, {
    get(target, property) {
      if (property === 'prepare') return prepare;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function'
        ? (value as (...a: unknown[]) => unknown).bind(target)
        : value;
    },
  });
}
