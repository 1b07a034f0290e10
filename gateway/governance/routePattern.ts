/**
 * Endpoint patterns of rate-limit rules: `*` (every request), or a method and a path
 * template — `GET *`, `POST /api/v1/devices/:id/commands`, `* /api/v1/devices/*`.
 *
 * Templates are matched against the route a request was routed to, segment by segment: a
 * parameter segment (`:name` or `{name}`; the name does not matter) matches the route's
 * parameter segment there; a literal matches the same literal, or the request's actual value
 * of a parameter segment (`/api/v1/devices/pos-7/commands` limits that one device's
 * commands); `*` matches any one segment, and a trailing `*` any remaining segments.
 */
import { z } from 'zod';

const PATTERN = /^(\*|(GET|POST|PUT|PATCH|DELETE|\*) (\*|(\/[A-Za-z0-9._~:{}*-]+)+\/?))$/;

/** A route pattern field. */
export const routePatternField = z
  .string()
  .max(200)
  .regex(
    PATTERN,
    "patterns are '*', or a method (or '*') and a path template, e.g. 'POST /api/v1/devices/:id/commands'",
  );

/** A parsed pattern. */
export interface RoutePattern {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | '*';
  /** Path segments; undefined for any path. */
  segments?: string[];
}

const isParameter = (segment: string) =>
  segment.startsWith(':') || (segment.startsWith('{') && segment.endsWith('}'));

const split = (path: string) => path.split('/').filter((s) => s.length > 0);

/** Parse a pattern accepted by {@link routePatternField}. */
export function parseRoutePattern(pattern: string): RoutePattern {
  if (pattern === '*') return { method: '*' };
  const [method, path] = pattern.split(' ') as [RoutePattern['method'], string];
  return path === '*' ? { method } : { method, segments: split(path) };
}

/** A request as patterns see it. */
export interface RoutedRequest {
  method: string;
  /** The route's template (`/api/v1/devices/:id/commands`). */
  template: string;
  /** The request's path, without the query. */
  path: string;
}

/** Whether `pattern` matches `request`. */
export function matchesRoute(pattern: RoutePattern, request: RoutedRequest): boolean {
  if (pattern.method !== '*' && pattern.method !== request.method) return false;
  const segments = pattern.segments;
  if (segments === undefined) return true;
  const template = split(request.template);
  const actual = split(request.path);
  for (let i = 0; i < segments.length; i++) {
    const p = segments[i]!;
    if (p === '*' && i === segments.length - 1) return template.length >= segments.length - 1;
    const t = template[i];
    if (t === undefined) return false;
    if (p === '*') continue;
    if (isParameter(p)) {
      if (!isParameter(t)) return false;
      continue;
    }
    if (p === t) continue;
    if (isParameter(t) && safeDecode(actual[i]) === p) continue;
    return false;
  }
  return template.length === segments.length;
}

const safeDecode = (segment: string | undefined): string | undefined => {
  if (segment === undefined) return undefined;
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
};
