/**
 * Errors of the local API as `application/problem+json` (RFC 9457), in the same shape as the
 * cloud's (`type`, `title`, `status`, stable `code`, `detail`, extension members), so a POS
 * developer handles both the same way. Details never carry card data or secrets.
 */

/** A problem to answer with. */
export class LocalProblem extends Error {
  override readonly name = 'LocalProblem';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extensions: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  404: 'Not Found',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** The problem+json body of `problem`. */
export function problemJson(problem: LocalProblem): Record<string, unknown> {
  return {
    type: `https://saffron.dev/problems/${problem.code.toLowerCase().replaceAll('_', '-')}`,
    title: TITLES[problem.status] ?? 'Error',
    status: problem.status,
    code: problem.code,
    detail: problem.message,
    ...problem.extensions,
  };
}

/** Fastify's own client errors (body parsing, size, content type) as problems. */
export function frameworkProblem(error: unknown): LocalProblem | undefined {
  const e = error as { statusCode?: unknown; code?: unknown; message?: unknown };
  if (typeof e.statusCode !== 'number' || e.statusCode < 400 || e.statusCode >= 500)
    return undefined;
  if (e.statusCode === 413)
    return new LocalProblem(413, 'BODY_TOO_LARGE', 'the request body is too large');
  if (e.statusCode === 415)
    return new LocalProblem(415, 'UNSUPPORTED_MEDIA_TYPE', 'send the body as application/json');
  if (e.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || e.code === 'FST_ERR_CTP_EMPTY_JSON_BODY')
    return new LocalProblem(400, 'MALFORMED_JSON', 'the request body is not valid JSON');
  return new LocalProblem(
    e.statusCode,
    'BAD_REQUEST',
    typeof e.message === 'string' ? e.message : 'bad request',
  );
}
