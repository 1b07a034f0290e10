/**
 * Classifying a failed fetch. Fetch reports DNS failures, refused connections, resets and
 * aborts alike as a rejected promise (`TypeError: fetch failed` with the system error as
 * `cause`, or the abort reason). Which signal fired decides between a timeout and a caller
 * abort; everything else is the network, which a later attempt may find healthy again.
 */
import { DestinationRefusedError } from './destinationPolicy.js';
import { HttpStepError } from './errors.js';
import type { Redactor } from './redact.js';

/** What {@link transportError} needs to know about the attempt. */
export interface TransportContext {
  /** `METHOD origin/path`, already safe to show (no query string). */
  target: string;
  /** The signal given to fetch (timeout combined with the caller's). */
  signal: AbortSignal;
  /** The timeout signal alone. */
  timeout: AbortSignal;
  timeoutSeconds: number;
  redactor: Redactor;
}

/** The innermost cause's code and message: `ECONNREFUSED`, `connect ECONNREFUSED 1.2.3.4:80`. */
function rootCause(error: unknown): { code?: string; message: string } {
  let current: unknown = error;
  for (
    let depth = 0;
    depth < 4 && current instanceof Error && current.cause !== undefined;
    depth++
  ) {
    current = current.cause;
  }
  const code = (current as { code?: unknown } | null)?.code;
  const message = current instanceof Error ? current.message : String(current);
  return typeof code === 'string' ? { code, message } : { message };
}

/** The destination policy's refusal in `error` or its causes, if that is why it failed. */
export function refusalIn(error: unknown): DestinationRefusedError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current instanceof DestinationRefusedError) return current;
    current = current.cause;
  }
  return undefined;
}

/** The {@link HttpStepError} for an error thrown by fetch or while reading the body. */
export function transportError(error: unknown, context: TransportContext): HttpStepError {
  const { target, signal, timeout, redactor } = context;
  const cause = redactor.error(error);
  if (signal.aborted) {
    if (timeout.aborted && signal.reason === timeout.reason) {
      return new HttpStepError(
        'HTTP_TIMEOUT',
        `${target} did not complete within ${context.timeoutSeconds}s`,
        { cause, details: { timeout_seconds: context.timeoutSeconds } },
      );
    }
    return new HttpStepError('HTTP_ABORTED', `${target} was aborted by the caller`, { cause });
  }
  const refused = refusalIn(error);
  if (refused !== undefined) {
    return new HttpStepError('HTTP_DESTINATION_REFUSED', `${target} refused: ${refused.message}`, {
      cause,
      details: refused.details,
    });
  }
  const root = rootCause(error);
  return new HttpStepError('HTTP_UNREACHABLE', `${target} failed: ${redactor.text(root.message)}`, {
    cause,
    details: root.code === undefined ? {} : { error_code: root.code },
  });
}
