/**
 * Turning a fetch response into the value an HTTP step stores at `state[output_key]`, or
 * into a retryable error for a 5xx. 1xx–4xx are responses, not errors: an acquirer's decline
 * or a 404 is something the workflow routes on, and retrying it would repeat the decline.
 */
import type { JsonObject } from '../model/json.js';
import { declaresMoreThan, decodeBody, decodeText, readBodyBytes } from './body.js';
import { HttpStepError } from './errors.js';
import type { Redactor } from './redact.js';

/** Response fields an HTTP step can keep through `includes`. */
export const HTTP_RESPONSE_FIELDS = ['status_code', 'headers', 'body'] as const;

/** Bytes read from a 5xx body for its preview, and characters kept after redaction. */
const PREVIEW_READ_BYTES = 8 * 1024;
const PREVIEW_CHARS = 512;

/** Response headers as an object with lower-cased names; repeated headers joined by `, `. */
function headersObject(headers: Headers): Record<string, string> {
  // A Map, then fromEntries: a header named `__proto__` stays an own property.
  const result = new Map<string, string>();
  headers.forEach((value, name) => {
    const key = name.toLowerCase();
    const previous = result.get(key);
    result.set(key, previous === undefined ? value : `${previous}, ${value}`);
  });
  return Object.fromEntries(result);
}

/**
 * `output` restricted to the fields named in `includes`; all fields when `includes` is
 * absent. Names other than {@link HTTP_RESPONSE_FIELDS} are ignored (they select nothing).
 */
export function selectIncludes(
  output: JsonObject,
  includes: readonly string[] | undefined,
): JsonObject {
  if (includes === undefined) return output;
  const kept: JsonObject = {};
  for (const field of HTTP_RESPONSE_FIELDS) {
    if (includes.includes(field)) kept[field] = output[field];
  }
  return kept;
}

async function serverError(
  response: Response,
  target: string,
  redactor: Redactor,
): Promise<HttpStepError> {
  let bytes: Uint8Array = new Uint8Array(0);
  try {
    ({ bytes } = await readBodyBytes(response, PREVIEW_READ_BYTES));
  } catch {
    // The status already says what happened; a body that fails to arrive only loses the preview.
  }
  // Redact before truncating, so a secret cut in half by the preview cannot survive.
  const text = redactor.text(decodeText(bytes, response.headers.get('content-type')));
  const preview = text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS)}…` : text;
  return new HttpStepError('HTTP_SERVER_ERROR', `${target} answered ${response.status}`, {
    details: { status_code: response.status, body_preview: preview },
  });
}

/**
 * Read `response` into `{ status_code, headers, body }` (secrets redacted, `includes`
 * applied). Throws {@link HttpStepError} `HTTP_SERVER_ERROR` for a 5xx and
 * `HTTP_RESPONSE_TOO_LARGE` when the body exceeds `maxBytes`; stream errors propagate.
 */
export async function readStepResponse(
  response: Response,
  options: {
    target: string;
    includes: readonly string[] | undefined;
    maxBytes: number;
    redactor: Redactor;
  },
): Promise<JsonObject> {
  const { target, redactor } = options;
  if (response.status >= 500) throw await serverError(response, target, redactor);
  const tooLarge = declaresMoreThan(response, options.maxBytes);
  if (tooLarge) await response.body?.cancel();
  const { bytes, complete } = tooLarge
    ? { bytes: new Uint8Array(0), complete: false }
    : await readBodyBytes(response, options.maxBytes);
  if (!complete) {
    throw new HttpStepError(
      'HTTP_RESPONSE_TOO_LARGE',
      `${target} answered ${response.status} with a body over ${options.maxBytes} bytes`,
      { details: { status_code: response.status, limit_bytes: options.maxBytes } },
    );
  }
  const output: JsonObject = {
    status_code: response.status,
    headers: headersObject(response.headers),
    body: decodeBody(bytes, response.headers.get('content-type')),
  };
  return selectIncludes(redactor.value(output) as JsonObject, options.includes);
}
