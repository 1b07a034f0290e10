/**
 * Request validation with zod: a part of the request that does not match its schema is a
 * 422 (body) or 400 (path, query, headers) problem listing every issue by path. Handlers
 * only ever see parsed, typed values.
 */
import type { z } from 'zod';
import { Problem } from './problem.js';

/** Which part of the request a schema describes. */
export type RequestPart = 'body' | 'query' | 'params' | 'headers';

/** One validation failure, by JSON path inside the part. */
export interface ValidationIssue {
  path: string;
  message: string;
}

const pathOf = (path: readonly PropertyKey[]): string =>
  path.length === 0
    ? '$'
    : path.reduce<string>(
        (out, key) => (typeof key === 'number' ? `${out}[${key}]` : `${out}.${String(key)}`),
        '$',
      );

/** Parse `value` with `schema` or throw the problem that says what is wrong. */
export function parsePart<S extends z.ZodType>(
  schema: S,
  value: unknown,
  part: RequestPart,
): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues: ValidationIssue[] = result.error.issues
    .slice(0, 20)
    .map((issue) => ({ path: pathOf(issue.path), message: issue.message }));
  const status = part === 'body' ? 422 : 400;
  throw new Problem(
    status,
    'VALIDATION_FAILED',
    `invalid request ${part}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
    { errors: issues },
  );
}
