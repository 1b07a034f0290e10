/**
 * One attempt of an HTTP step. Retries and the delay between them belong to the engine,
 * which must record each attempt and survive a restart during `delay_seconds`; an in-process
 * retry loop here would hide attempts from the audit log and lose its place on a crash. So
 * this function never retries: it reports the outcome and whether another try can help.
 */
import type { HttpStep } from '../definition/index.js';
import type { JsonObject } from '../model/json.js';
import type { SecretProvider } from '../template/index.js';
import { MAX_RESPONSE_BYTES } from './body.js';
import { DestinationPolicy } from './destinationPolicy.js';
import { guardedFetch, type OutboundFetch } from './guardedFetch.js';
import { HttpStepError } from './errors.js';
import { Redactor } from './redact.js';
import { prepareRequest, type PreparedRequest } from './request.js';
import { readStepResponse } from './response.js';
import { checkSecretDestinations } from './secretDestinations.js';
import { transportError } from './transportError.js';

/** Spec default of `http_config.timeout`, used when the value is not a positive number. */
const DEFAULT_TIMEOUT_SECONDS = 30;

/** Options of {@link attemptHttpStep}. */
export interface HttpAttemptOptions {
  /** Where `{{ secrets.NAME }}` is looked up; without it secret references fail to render. */
  secrets?: SecretProvider;
  /** Aborts the attempt (shutdown, cancellation); reported as `HTTP_ABORTED`. */
  signal?: AbortSignal;
  /**
   * Which addresses the request may connect to; by default only public ones. Checked after
   * DNS resolution, on the address connected to.
   */
  destinations?: DestinationPolicy;
  /**
   * The fetch implementation; by default one enforcing `destinations` at connect time. A
   * fetch given here bypasses that check (the secret binding still holds).
   */
  fetch?: OutboundFetch;
  /** Limit on response body bytes; 10 MiB ({@link MAX_RESPONSE_BYTES}) by default. */
  maxResponseBytes?: number;
}

/** The outcome of {@link attemptHttpStep}. */
export type HttpAttemptResult =
  | {
      ok: true;
      /** What the engine stores at `state[output_key]`: `{ status_code, headers, body }`, filtered by `includes`. */
      output: JsonObject;
      statusCode: number;
      durationMs: number;
    }
  | { ok: false; error: HttpStepError; retryable: boolean; durationMs: number };

function timeoutSeconds(step: HttpStep): number {
  const { timeout } = step.http_config;
  return Number.isFinite(timeout) && timeout > 0 ? timeout : DEFAULT_TIMEOUT_SECONDS;
}

/**
 * Render and send an HTTP step's request once, and read its response.
 *
 * `url`, `headers`, `query_params` and `body` are rendered as templates against `scope` and
 * `options.secrets`. Any 1xx–4xx response is `ok: true` (a decline is routed on, not
 * retried); 3xx redirects are not followed, so headers carrying secrets never reach another
 * host — the workflow sees the 3xx and its `location` header. Before anything is sent, every
 * secret used must declare the destination host (`SECRET_DESTINATION_REFUSED`), and the
 * address connected to must be allowed by `options.destinations` (`HTTP_DESTINATION_REFUSED`). A 5xx, a timeout
 * (`http_config.timeout` seconds, covering the body too) and network failures are `ok: false`
 * and retryable; template, URL and request errors and oversized bodies are not.
 *
 * Secret values used in rendering are replaced by `[REDACTED]` in the output and in errors;
 * request headers never appear in errors. Never rejects for a failed attempt.
 */
export async function attemptHttpStep(
  step: HttpStep,
  scope: { state: JsonObject; context?: JsonObject },
  options: HttpAttemptOptions = {},
): Promise<HttpAttemptResult> {
  const started = performance.now();
  const durationMs = () => Math.round(performance.now() - started);
  const fail = (error: HttpStepError): HttpAttemptResult => ({
    ok: false,
    error,
    retryable: error.retryable,
    durationMs: durationMs(),
  });
  const redactor = new Redactor();
  let request: PreparedRequest;
  try {
    request = prepareRequest(step, { ...scope, secrets: options.secrets }, redactor);
    checkSecretDestinations(request.secretNames, request.url, options.secrets);
  } catch (error) {
    if (error instanceof HttpStepError) return fail(error);
    throw error;
  }
  const target = redactor.text(`${request.method} ${request.url.origin}${request.url.pathname}`);
  const seconds = timeoutSeconds(step);
  const timeout = AbortSignal.timeout(seconds * 1000);
  const signal =
    options.signal === undefined ? timeout : AbortSignal.any([timeout, options.signal]);
  try {
    const fetchImpl =
      options.fetch ?? guardedFetch(options.destinations ?? new DestinationPolicy());
    const response = await fetchImpl(request.url, {
      method: request.method,
      headers: request.headers,
      body: request.body,
      redirect: 'manual',
      signal,
    });
    const output = await readStepResponse(response, {
      target,
      includes: step.includes,
      maxBytes: options.maxResponseBytes ?? MAX_RESPONSE_BYTES,
      redactor,
    });
    return { ok: true, output, statusCode: response.status, durationMs: durationMs() };
  } catch (error) {
    if (error instanceof HttpStepError) return fail(error);
    return fail(
      transportError(error, { target, signal, timeout, timeoutSeconds: seconds, redactor }),
    );
  }
}
