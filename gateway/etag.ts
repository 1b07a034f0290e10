/**
 * Conditional GET: does an `If-None-Match` header match the current entity tag? Per RFC 9110
 * §13.1.2 the comparison is weak (a `W/` prefix is ignored), `*` matches any current
 * representation, and the header may list several tags. Devices that send the bare tag
 * without quotes (the "version" they hold) are matched too.
 */

/** Whether `header` matches `etag` (a quoted strong tag), so the answer is 304. */
export function ifNoneMatchHits(header: string | string[] | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const wanted = opaque(etag);
  const parts = (Array.isArray(header) ? header.join(',') : header).split(',');
  for (const raw of parts) {
    const part = raw.trim();
    if (part === '*') return true;
    if (part !== '' && opaque(part.startsWith('W/') ? part.slice(2) : part) === wanted) return true;
  }
  return false;
}

const opaque = (tag: string) =>
  tag.length >= 2 && tag.startsWith('"') && tag.endsWith('"') ? tag.slice(1, -1) : tag;
