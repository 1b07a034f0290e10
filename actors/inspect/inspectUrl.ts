/** Checking an inspector address before anything connects to it. */
import { SaffronError } from '../../runtime/index.js';

/** An inspector address that is not a WebSocket URL. */
export class InspectError extends SaffronError {
  override readonly name = 'InspectError';
}

/**
 * `value` as an inspector URL: `ws://` or `wss://` with a host. Anything else is an
 * `INSPECT_URL_INVALID` error saying what was given (without its credentials).
 */
export function parseInspectUrl(value: string | URL): URL {
  let url: URL;
  try {
    url = new URL(String(value));
  } catch (cause) {
    throw new InspectError(
      'INSPECT_URL_INVALID',
      `--inspect takes a ws:// or wss:// URL (e.g. ws://127.0.0.1:8080), got '${String(value)}'`,
      { cause },
    );
  }
  if ((url.protocol !== 'ws:' && url.protocol !== 'wss:') || url.hostname === '') {
    const shown = new URL(url.href);
    shown.username = '';
    shown.password = '';
    throw new InspectError(
      'INSPECT_URL_INVALID',
      `--inspect takes a ws:// or wss:// URL (e.g. ws://127.0.0.1:8080), got '${shown.href}'`,
      { details: { protocol: url.protocol } },
    );
  }
  return url;
}
