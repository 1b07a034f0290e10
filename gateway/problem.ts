/**
 * Errors as `application/problem+json` (RFC 9457): every failure a client sees has a status,
 * a stable `code`, a human `title` and `detail`, and — for validation — the list of what was
 * wrong, by path. Internal errors are logged and answered with a bare 500 that leaks nothing.
 */
import { SaffronError, WORKFLOW_ERROR_CODES, type WorkflowErrorCode } from '../runtime/index.js';

/** A problem to answer with: status, stable code, and optional extension members. */
export class Problem extends Error {
  override readonly name = 'Problem';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extensions: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Content Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  426: 'Upgrade Required',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** The problem+json body for a status, code and detail. */
export function problemBody(
  status: number,
  code: string,
  detail: string,
  extensions: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    type: `https://saffron.dev/problems/${code.toLowerCase().replaceAll('_', '-')}`,
    title: TITLES[status] ?? 'Error',
    status,
    code,
    detail,
    ...extensions,
  };
}

/**
 * Every {@link WorkflowError} code and its status. A `Record` over the closed set, so a code
 * added to the engine does not compile until it has a status here (`internal`: a fault of
 * the server, answered with a bare 500).
 */
const WORKFLOW_ERROR_STATUS: Readonly<Record<WorkflowErrorCode, number | 'internal'>> = {
  WORKFLOW_NOT_FOUND: 404,
  UNKNOWN_WORKFLOW_TYPE: 422,
  WORKFLOW_NOT_ACTIVE: 409,
  WORKFLOW_NOT_WAITING: 409,
  WORKFLOW_NOT_RETRYABLE: 409,
  WORKFLOW_TERMINAL: 409,
  WORKFLOW_NOT_PAUSED: 409,
  INVALID_INPUT: 422,
  UNKNOWN_STEP: 422,
  // a stored snapshot that no longer restores is the server's fault, not the caller's
  SNAPSHOT_INVALID: 'internal',
};

/** Other engine codes a request can meet, and the status each maps to. */
const SAFFRON_STATUS: Readonly<Record<string, number>> = {
  DEFINITION_INVALID: 422,
  CONFLICT: 409,
  STORE_UNAVAILABLE: 503,
  // the workflow's data (or a resume's input) is refused by its definition
  STEP_INPUT_INVALID: 422,
  TEMPLATE_SYNTAX: 422,
  TEMPLATE_UNRESOLVED: 422,
  EXPRESSION_SYNTAX: 422,
  EXPRESSION_EVALUATION: 422,
  MERGE_CONFLICT: 409,
  MERGE_UNSAFE_KEY: 422,
  // an outbound address the machine's policy refuses (runtime/http/destinationPolicy.ts)
  DESTINATION_REFUSED: 422,
};

const isWorkflowErrorCode = (code: string): code is WorkflowErrorCode =>
  (WORKFLOW_ERROR_CODES as readonly string[]).includes(code);

/** The status of an engine error code; undefined for errors that are the server's fault. */
function saffronStatus(error: SaffronError): number | undefined {
  if (isWorkflowErrorCode(error.code)) {
    const status = WORKFLOW_ERROR_STATUS[error.code];
    return status === 'internal' ? undefined : status;
  }
  return SAFFRON_STATUS[error.code] ?? (error.name === 'ConflictError' ? 409 : undefined);
}

/** Map anything thrown by a handler to a {@link Problem}; `undefined` for internal errors. */
export function toProblem(error: unknown): Problem | undefined {
  if (error instanceof Problem) return error;
  if (error instanceof SaffronError) {
    const status = saffronStatus(error);
    // an input refused by a workflow's input schema: every failing path (never a value)
    const issues = error.code === 'INVALID_INPUT' ? error.details.issues : undefined;
    if (status !== undefined)
      return new Problem(status, error.code, error.message, issues ? { errors: issues } : {});
    return undefined;
  }
  const e = error as { statusCode?: unknown; code?: unknown; message?: unknown };
  // fastify's own client errors (body parsing, size limit, content type)
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    const code =
      e.statusCode === 413
        ? 'BODY_TOO_LARGE'
        : e.statusCode === 415
          ? 'UNSUPPORTED_MEDIA_TYPE'
          : e.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || e.code === 'FST_ERR_CTP_EMPTY_JSON_BODY'
            ? 'MALFORMED_JSON'
            : 'BAD_REQUEST';
    const detail =
      code === 'MALFORMED_JSON'
        ? 'the request body is not valid JSON'
        : typeof e.message === 'string'
          ? e.message
          : 'bad request';
    return new Problem(e.statusCode, code, detail);
  }
  return undefined;
}
