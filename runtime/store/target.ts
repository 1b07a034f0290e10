/**
 * Where a store lives, parsed from one string so every CLI command and embedding takes the
 * same forms:
 *
 * - `postgres://…` / `postgresql://…` — a PostgreSQL server (the cloud tier)
 * - `pglite:PATH` / `pglite:memory` — embedded PostgreSQL (PGlite), the cloud default
 * - `sqlite:PATH`, `sqlite::memory:`, or any path (`./x.db`) — a SQLite file (the edge tier)
 */
import { resolve } from 'node:path';
import { StoreConfigError } from './errors.js';

/** A parsed store location. */
export type StoreTarget =
  | { kind: 'postgres'; url: string }
  /** A directory, or `'memory'`. */
  | { kind: 'pglite'; dataDir: string }
  /** A file path, or `':memory:'`. */
  | { kind: 'sqlite'; file: string };

/** The store dialects. */
export const STORE_DIALECTS = ['postgres', 'pglite', 'sqlite'] as const;
/** One of {@link STORE_DIALECTS}. */
export type StoreDialect = (typeof STORE_DIALECTS)[number];

/** Parse a store location string (see the module header for the forms). */
export function parseStoreTarget(value: string): StoreTarget {
  const text = value.trim();
  if (text === '') throw new StoreConfigError('empty database location');
  if (/^postgres(ql)?:\/\//i.test(text)) {
    try {
      new URL(text);
    } catch (cause) {
      throw new StoreConfigError(`not a valid PostgreSQL URL: ${redactUrl(text)}`, { cause });
    }
    return { kind: 'postgres', url: text };
  }
  if (text.startsWith('pglite:')) {
    const rest = text.slice('pglite:'.length).replace(/^\/\//, '');
    if (rest === '' || rest === 'memory') return { kind: 'pglite', dataDir: 'memory' };
    return { kind: 'pglite', dataDir: resolve(rest) };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text) && !text.startsWith('sqlite:')) {
    throw new StoreConfigError(
      `unsupported database URL scheme in '${redactUrl(text)}' (use postgres://, pglite:PATH or a SQLite file path)`,
    );
  }
  const file = text.startsWith('sqlite:')
    ? text.slice('sqlite:'.length).replace(/^\/\//, '')
    : text;
  if (file === '') throw new StoreConfigError('sqlite: needs a file path or :memory:');
  return { kind: 'sqlite', file: file === ':memory:' ? ':memory:' : resolve(file) };
}

/** A printable form of a target with any password removed. */
export function describeStoreTarget(target: StoreTarget): string {
  switch (target.kind) {
    case 'postgres':
      return redactUrl(target.url);
    case 'pglite':
      return `pglite:${target.dataDir}`;
    case 'sqlite':
      return `sqlite:${target.file}`;
  }
}

/** Remove the password from a URL, for messages and logs. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]+):[^@/]*@/i, '$1:***@');
}
