/**
 * The target URL of an HTTP step: parsed once, limited to `http:` and `https:` (a template
 * resolving to `file:` or `data:` must not turn a workflow into a file reader), without
 * embedded credentials (fetch refuses them and they would leak through logs), and with
 * `query_params` appended without re-encoding the query the template already wrote.
 */
import { HttpStepError } from './errors.js';
import type { Redactor } from './redact.js';

const ALLOWED_PROTOCOLS: ReadonlySet<string> = new Set(['http:', 'https:']);
const QUOTED_URL_LIMIT = 200;

function quote(text: string, redactor: Redactor): string {
  const safe = redactor.text(text);
  return `'${safe.length > QUOTED_URL_LIMIT ? `${safe.slice(0, QUOTED_URL_LIMIT)}…` : safe}'`;
}

/** Parse the rendered `http_config.url`. Throws {@link HttpStepError} `HTTP_INVALID_URL`. */
export function parseStepUrl(rendered: unknown, redactor: Redactor): URL {
  if (typeof rendered !== 'string') {
    throw new HttpStepError(
      'HTTP_INVALID_URL',
      `http_config.url rendered to ${rendered === null ? 'null' : typeof rendered}, expected a string`,
      { details: { path: 'http_config.url' } },
    );
  }
  let url: URL;
  try {
    url = new URL(rendered);
  } catch (error) {
    throw new HttpStepError(
      'HTTP_INVALID_URL',
      `http_config.url is not a valid absolute URL: ${quote(rendered, redactor)}`,
      { cause: redactor.error(error), details: { path: 'http_config.url' } },
    );
  }
  if (!ALLOWED_PROTOCOLS.has(url.protocol)) {
    throw new HttpStepError(
      'HTTP_INVALID_URL',
      `http_config.url uses unsupported scheme '${url.protocol}'; only http: and https: are allowed`,
      { details: { path: 'http_config.url', protocol: url.protocol } },
    );
  }
  if (url.username !== '' || url.password !== '') {
    throw new HttpStepError(
      'HTTP_INVALID_URL',
      'http_config.url must not contain credentials; send them in an Authorization header',
      { details: { path: 'http_config.url' } },
    );
  }
  return url;
}

/** A query or header value as text; `null`/`undefined` (and non-JSON values) mean "leave it out". */
export function toParamText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') {
    return String(value);
  }
  if (typeof value === 'object' && value !== null) return JSON.stringify(value);
  return undefined;
}

/**
 * Append rendered `query_params` to `url` (in place). Arrays repeat the key
 * (`?id=1&id=2`); other non-string values are JSON text (`true`, `42`, `{"a":1}`);
 * `null` values and `null` array items are left out.
 */
export function appendQueryParams(url: URL, params: Record<string, unknown>): void {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      const text = toParamText(item);
      if (text !== undefined) search.append(key, text);
    }
  }
  const added = search.toString();
  if (added === '') return;
  const existing = url.search.replace(/^\?/, '');
  url.search = existing === '' ? added : `${existing}&${added}`;
}
