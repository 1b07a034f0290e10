/**
 * The up-front check of a webhook URL: a host that is plainly a loopback, link-local or
 * private address (an IP literal, or `localhost`) is refused at registration with a 400, so
 * the mistake shows where it was made. It is only the cheap half: a host name can resolve
 * anywhere, and resolve differently later, so the dispatcher checks the address it actually
 * connects to on every delivery (runtime/http/guardedFetch.ts).
 */
import type { DestinationPolicy } from '../../runtime/index.js';
import { Problem } from '../problem.js';

const LOCALHOST = /(^|\.)localhost\.?$/i;

/**
 * Throw a 400 `WEBHOOK_DESTINATION_REFUSED` problem when `text` (an already validated
 * http(s) URL) names a destination `policy` refuses without needing DNS.
 */
export function assertWebhookDestination(policy: DestinationPolicy, text: string): void {
  const url = new URL(text);
  const refused = LOCALHOST.test(url.hostname)
    ? policy.refusal(
        url.hostname,
        '127.0.0.1',
        Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
      )
    : policy.literalRefusal(url);
  if (refused === undefined) return;
  throw new Problem(
    400,
    'WEBHOOK_DESTINATION_REFUSED',
    `webhook url ${url.host} is not a public address: ${refused.message}`,
    { host: url.host },
  );
}
