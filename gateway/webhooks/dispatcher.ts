/**
 * The webhook dispatcher of one gateway. Every pass it claims the due head delivery of each
 * active registration (gateway/webhooks/store/webhooks/claimWebhookDeliveries.ts: FOR UPDATE SKIP
 * LOCKED and a lease, so any number of gateways can run this side by side and a
 * registration still has one request in flight at a time, in sequence order), sends them
 * concurrently, and records each outcome:
 *
 * - a 2xx answer → DELIVERED;
 * - anything else (another status, a redirect, no answer within `timeoutMs`) → FAILED, tried
 *   again after an exponential backoff with equal jitter (half of
 *   `min(maxMs, baseMs · 2^(attempt−1))` fixed, half random, so receivers that come back are
 *   not hit in lockstep); the registration's later events wait behind it;
 * - the same once `max_retries` retries are used up → DEAD (dead-lettered, audited as
 *   WEBHOOK_DELIVERY_DEAD); the later events go on, and an operator can redeliver it.
 *
 * A pass that sent something is followed at once by another (the next event of each
 * registration is due as soon as its predecessor is delivered); otherwise the dispatcher
 * sleeps `pollIntervalMs`. Requests are signed (signature.ts) and never carry more than the
 * envelope: the signing secret is only ever in the HMAC, never in a log line, an error text
 * or an audit row. Closing stops the loop, aborts requests in flight (recorded as failed
 * attempts, due again after their backoff) and waits for the pass to finish.
 */
import { performance } from 'node:perf_hooks';
import { Counter } from 'prom-client';
import { createBackgroundLoop, guardedFetch, refusalIn, toError } from '../../runtime/index.js';
import { appendCommandAudit } from '../commands/store/commands/appendCommandAudit.js';
import { SYSTEM_ACTOR } from '../commands/store/commands/command.js';
import {
  claimWebhookDeliveries,
  recordWebhookAttempt,
  type AttemptOutcome,
  type ClaimedDelivery,
  type WebhookAttempt,
} from './store/webhooks/index.js';
import type { GatewayContext } from '../context.js';
import { signWebhookPayload, WEBHOOK_HEADERS } from './signature.js';

/** Backoff between attempts of one delivery. */
export interface WebhookBackoff {
  baseMs: number;
  maxMs: number;
}

/** Options of the webhook dispatcher. */
export interface WebhookDispatcherOptions {
  /** Sleep between passes that found nothing due (default 1000 ms). */
  pollIntervalMs?: number;
  /** Most deliveries (one per registration) sent per pass (default 32). */
  batchSize?: number;
  /** How long a receiver has to answer (default 10 s). */
  timeoutMs?: number;
  /** Backoff of retries (default 30 s doubling up to 6 h). */
  backoff?: WebhookBackoff;
}

/** The webhook dispatcher of one gateway. */
export interface WebhookDispatcher {
  /** Run one pass now (it also runs on its own); resolves with the deliveries attempted. */
  tick(): Promise<number>;
  /** Start the background loop. */
  start(): void;
  /** Stop, abort requests in flight, and wait for the pass in progress. */
  close(): Promise<void>;
}

const USER_AGENT = 'Saffron-Webhooks/1';
/** Longest error text kept per attempt. */
const MAX_ERROR_LENGTH = 300;
/** The recorded error of a delivery whose destination the policy refused. */
export const DESTINATION_REFUSED = 'destination refused: not a public address';

/** The delay before attempt `attempt + 1`, after attempt `attempt` failed. */
export function webhookBackoffMs(backoff: WebhookBackoff, attempt: number): number {
  const ceiling = Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
}

/**
 * Why a request failed, in a few words that hold no secret (never the URL, never a body). A
 * destination refused by the policy is recorded as `destination refused` and nothing more:
 * the refusal is decided on the address before any connection, so the history reads the same
 * whether a port behind it is open or closed.
 */
function describeFailure(error: unknown): string {
  if (refusalIn(error) !== undefined) return DESTINATION_REFUSED;
  const e = toError(error);
  if (e.name === 'TimeoutError') return 'timed out';
  if (e.name === 'AbortError') return 'aborted: the gateway is closing';
  const cause = (e as Error & { cause?: { code?: unknown; message?: unknown } }).cause;
  const code = typeof cause?.code === 'string' ? cause.code : undefined;
  const text = code ?? (typeof cause?.message === 'string' ? cause.message : e.message);
  return `no answer: ${text}`.slice(0, MAX_ERROR_LENGTH);
}

/** Create the dispatcher of `ctx`'s gateway. */
export function createWebhookDispatcher(
  ctx: GatewayContext,
  options: WebhookDispatcherOptions = {},
): WebhookDispatcher {
  const pollIntervalMs = options.pollIntervalMs ?? 1000;
  const batchSize = options.batchSize ?? 32;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const backoff = options.backoff ?? { baseMs: 30_000, maxMs: 6 * 3_600_000 };
  // a lease outlives the request it covers, with room for recording the outcome
  const leaseMs = timeoutMs + 30_000;
  const log = ctx.app.log;
  const post = guardedFetch(ctx.destinations);
  const closing = new AbortController();
  const outcomes = new Counter({
    name: 'saffron_webhook_attempts_total',
    help: 'webhook delivery attempts by outcome (DELIVERED, FAILED, DEAD)',
    labelNames: ['outcome'],
    registers: [ctx.metrics],
  });
  let closed = false;

  const send = async (
    claim: ClaimedDelivery,
  ): Promise<{ statusCode: number | null; error: string | null }> => {
    let secret: string;
    try {
      secret = ctx.keys.open(claim.secretCiphertext);
    } catch {
      return { statusCode: null, error: 'the signing secret cannot be read' };
    }
    const body = JSON.stringify(claim.payload);
    const timestamp = Math.floor(ctx.now().getTime() / 1000);
    try {
      const response = await post(new URL(claim.url), {
        method: 'POST',
        redirect: 'manual',
        signal: AbortSignal.any([AbortSignal.timeout(timeoutMs), closing.signal]),
        headers: {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          [WEBHOOK_HEADERS.eventId]: claim.eventId,
          [WEBHOOK_HEADERS.eventType]: claim.eventType,
          [WEBHOOK_HEADERS.deliveryId]: claim.deliveryId,
          [WEBHOOK_HEADERS.webhookId]: claim.webhookId,
          [WEBHOOK_HEADERS.sequence]: String(claim.sequence),
          [WEBHOOK_HEADERS.attempt]: String(claim.attempt),
          [WEBHOOK_HEADERS.timestamp]: String(timestamp),
          [WEBHOOK_HEADERS.signature]: signWebhookPayload(secret, timestamp, body),
        },
        body,
      });
      // the answer's body is not needed: release the connection without reading it
      await response.body?.cancel().catch(() => undefined);
      const ok = response.status >= 200 && response.status < 300;
      return {
        statusCode: response.status,
        error: ok
          ? null
          : response.status >= 300 && response.status < 400
            ? `HTTP ${response.status} (redirects are not followed)`
            : `HTTP ${response.status}`,
      };
    } catch (error) {
      return { statusCode: null, error: describeFailure(error) };
    }
  };

  const attempt = async (claim: ClaimedDelivery): Promise<void> => {
    const started = performance.now();
    const at = ctx.now();
    const answer = await send(claim);
    const now = ctx.now();
    const outcome: AttemptOutcome =
      answer.error === null
        ? { status: 'DELIVERED' }
        : claim.attempt > claim.maxRetries
          ? { status: 'DEAD' }
          : {
              status: 'FAILED',
              nextAttemptAt: new Date(now.getTime() + webhookBackoffMs(backoff, claim.attempt)),
            };
    const entry: WebhookAttempt = {
      attempt: claim.attempt,
      at: at.toISOString(),
      status_code: answer.statusCode,
      error: answer.error,
      duration_ms: Math.round(performance.now() - started),
      outcome: outcome.status,
    };
    await ctx.store.transaction(async (tx) => {
      const applied = await recordWebhookAttempt(tx, claim, entry, outcome, now);
      if (applied && outcome.status === 'DEAD')
        await appendCommandAudit(
          tx,
          SYSTEM_ACTOR,
          [
            {
              event: 'WEBHOOK_DELIVERY_DEAD',
              details: {
                webhook_id: claim.webhookId,
                delivery_id: claim.deliveryId,
                event_id: claim.eventId,
                event_type: claim.eventType,
                attempts: claim.attempt,
                last_status_code: answer.statusCode,
                last_error: answer.error,
              },
            },
          ],
          now,
        );
    });
    outcomes.inc({ outcome: outcome.status });
    if (outcome.status !== 'DELIVERED')
      log.warn(
        {
          webhook_id: claim.webhookId,
          delivery_id: claim.deliveryId,
          attempt: claim.attempt,
          status_code: answer.statusCode,
          error: answer.error,
          outcome: outcome.status,
        },
        'webhook delivery attempt failed',
      );
  };

  const pass = async (): Promise<number> => {
    const now = ctx.now();
    const claims = await claimWebhookDeliveries(
      ctx.store,
      { limit: batchSize, leaseUntil: new Date(now.getTime() + leaseMs) },
      now,
    );
    await Promise.all(
      claims.map((claim) =>
        attempt(claim).catch((error: unknown) =>
          // not recorded: the lease runs out and the delivery is attempted again
          log.error(
            { err: error, webhook_id: claim.webhookId, delivery_id: claim.deliveryId },
            'recording a webhook attempt failed',
          ),
        ),
      ),
    );
    return claims.length;
  };

  // one pass at a time per process; a call during one waits for it
  const loop = createBackgroundLoop({
    intervalMs: pollIntervalMs,
    firstDelayMs: 0,
    // a pass that sent something is followed at once by another
    delayAfter: (sent) => (sent > 0 ? 0 : pollIntervalMs),
    pass,
    onError: (error) => log.error({ err: error }, 'a webhook dispatch pass failed'),
  });

  return {
    tick: () => loop.runNow(),
    start() {
      if (!closed) loop.start();
    },
    async close() {
      closed = true;
      const stopped = loop.stop();
      closing.abort();
      await stopped;
    },
  };
}
