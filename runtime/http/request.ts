/**
 * Rendering an HTTP step's `http_config` into a fetch request. Every templated part is
 * rendered with its key path (`http_config.headers.Authorization`), so a reference that does
 * not resolve is reported where the definition author wrote it, and every secret the
 * rendering used is registered with the {@link Redactor} before anything can fail with it.
 */
import type { HttpStep } from '../definition/index.js';
import type { JsonObject } from '../model/json.js';
import {
  renderTemplateWithSecrets,
  TemplateError,
  type SecretProvider,
} from '../template/index.js';
import { HttpStepError } from './errors.js';
import type { Redactor } from './redact.js';
import { appendQueryParams, parseStepUrl, toParamText } from './url.js';

/** A request ready for fetch. Holds secrets: never log it or put it in an error. */
export interface PreparedRequest {
  url: URL;
  method: string;
  headers: Headers;
  body: string | undefined;
  /** Names of the secrets the rendering used: the request may only go where all of them may. */
  secretNames: string[];
}

/** What templates may reference. */
export interface RequestScope {
  state: JsonObject;
  context?: JsonObject;
  secrets?: SecretProvider;
}

/** Methods that never carry a body, even when `http_config.body` is given. */
const BODYLESS_METHODS: ReadonlySet<string> = new Set(['GET', 'DELETE']);

function render(
  value: unknown,
  scope: RequestScope,
  path: string,
  redactor: Redactor,
  names: Set<string>,
): unknown {
  try {
    const rendered = renderTemplateWithSecrets(value, scope, { path });
    redactor.add(rendered.secretsUsed);
    for (const name of rendered.secretNames) names.add(name);
    return rendered.value;
  } catch (error) {
    if (!(error instanceof TemplateError)) throw error;
    throw new HttpStepError('HTTP_TEMPLATE', redactor.text(error.message), {
      cause: redactor.error(error),
      details: {
        ...(redactor.value(error.details) as Record<string, unknown>),
        reason: error.code,
      },
    });
  }
}

function asObject(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function buildHeaders(rendered: Record<string, unknown>): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(rendered)) {
    const text = toParamText(value);
    if (text === undefined) continue;
    try {
      headers.set(name, text);
    } catch {
      // The fetch error quotes the value, which may be a secret: report the name only.
      throw new HttpStepError(
        'HTTP_INVALID_REQUEST',
        `header '${name}' has an invalid name or value (control characters or non-Latin-1 text?)`,
        { details: { path: `http_config.headers.${name}` } },
      );
    }
  }
  return headers;
}

function buildBody(rendered: unknown, headers: Headers): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(rendered);
  } catch (error) {
    throw new HttpStepError('HTTP_INVALID_REQUEST', 'http_config.body cannot be sent as JSON', {
      cause: error instanceof Error ? new Error(error.message) : undefined,
      details: { path: 'http_config.body' },
    });
  }
  if (!headers.has('content-type')) headers.set('content-type', 'application/json');
  return text ?? 'null';
}

/**
 * Render `step.http_config` into a request. `query_params` are appended to the URL; `body`
 * is sent as JSON (with `content-type: application/json` unless a header sets one) for
 * methods other than GET and DELETE, and ignored for those two.
 *
 * @throws {@link HttpStepError} `HTTP_TEMPLATE`, `HTTP_INVALID_URL` or `HTTP_INVALID_REQUEST`.
 */
export function prepareRequest(
  step: HttpStep,
  scope: RequestScope,
  redactor: Redactor,
): PreparedRequest {
  const config = step.http_config;
  const names = new Set<string>();
  const url = parseStepUrl(render(config.url, scope, 'http_config.url', redactor, names), redactor);
  const rendered = {
    headers: asObject(render(config.headers ?? {}, scope, 'http_config.headers', redactor, names)),
    query: asObject(
      render(config.query_params ?? {}, scope, 'http_config.query_params', redactor, names),
    ),
    body:
      config.body === undefined || BODYLESS_METHODS.has(config.method)
        ? undefined
        : render(config.body, scope, 'http_config.body', redactor, names),
  };
  appendQueryParams(url, rendered.query);
  const headers = buildHeaders(rendered.headers);
  const body = rendered.body === undefined ? undefined : buildBody(rendered.body, headers);
  return { url, method: config.method, headers, body, secretNames: [...names] };
}
