/**
 * An instant in a query string (`from`, `to`, `since`, `until`): RFC 3339 with an offset,
 * between 1970 and 9999 once converted to UTC. The bounds keep every accepted value one
 * that JavaScript and PostgreSQL both represent: `9999-12-31T23:00:00-05:00` is year 10000
 * in UTC, which PostgreSQL would refuse with a 500 instead of the caller getting a 400.
 */
import { z } from 'zod';

const LATEST = Date.UTC(10_000, 0, 1);

/** A query parameter holding an instant (see the module comment). */
export const timeQueryField = z.iso.datetime({ offset: true }).refine(
  (text) => {
    const ms = Date.parse(text);
    return Number.isFinite(ms) && ms >= 0 && ms < LATEST;
  },
  { message: 'an RFC 3339 time from 1970 to 9999' },
);
