/**
 * Enqueue webhook events: one `webhook_deliveries` row per event and subscribed, active
 * registration, written in the caller's transaction — call it in the transaction of the fact
 * the event reports (an outbox), so an event exists exactly when its fact was committed.
 *
 * Order: each registration hands out sequence numbers from `event_sequence`, bumped under the
 * registration's row lock. Two transactions emitting to one registration therefore take
 * turns, and sequence order is commit order: when the dispatcher sees number n, every
 * smaller number is committed (or rolled back with its fact). Locks are taken in
 * `webhook_id` order by one statement, so emitters cannot deadlock on each other; the cost is
 * that facts subscribed to by the same registration commit one at a time from that point —
 * call this late in the transaction. With no subscriber for the kinds, it is one indexed
 * read and nothing is locked.
 *
 * An event emitted again with the same `eventId` is not enqueued twice. Cloud tier only: on
 * an edge store (SQLite) this does nothing.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import type {
  WebhookEnvelope,
  WebhookEvent,
  WebhookEventData,
  WebhookEventKind,
} from './webhookEvent.js';

/**
 * Lock the active registrations subscribed to any of `kinds` (in id order, until the
 * transaction ends) and return their ids.
 */
async function lockSubscribers(
  h: CloudHandle,
  kinds: readonly WebhookEventKind[],
): Promise<string[]> {
  const result = await sql<{ webhook_id: string }>`
    SELECT r.webhook_id FROM webhook_registrations AS r
    WHERE r.active AND EXISTS (
      SELECT 1 FROM jsonb_array_elements_text(CAST(${JSON.stringify(kinds)} AS jsonb)) AS k(kind)
      WHERE r.event_types @> jsonb_build_array(k.kind))
    ORDER BY r.webhook_id
    FOR UPDATE`.execute(h.db);
  return result.rows.map((r) => r.webhook_id);
}

/**
 * Whether an active registration subscribes to any of `kinds`; those registrations stay
 * locked until the transaction ends (see the module comment). For emitters that would read
 * more to build an event only when someone listens.
 */
export async function hasWebhookSubscribers(
  h: CloudHandle,
  kinds: readonly WebhookEventKind[],
): Promise<boolean> {
  if (kinds.length === 0) return false;
  try {
    return (await lockSubscribers(h, [...new Set(kinds)])).length > 0;
  } catch (error) {
    throw translateDriverError(error, 'lock webhook subscriptions');
  }
}

/**
 * Enqueue `events` for every active registration subscribed to their kinds, in the caller's
 * transaction (see the module comment); returns the number of deliveries created.
 */
export async function emitWebhookEvents(
  h: CloudHandle,
  events: readonly WebhookEvent[],
  now: Date,
): Promise<number> {
  if (events.length === 0) return 0;
  try {
    const subscribers = await lockSubscribers(h, [...new Set(events.map((e) => e.kind))]);
    if (subscribers.length === 0) return 0;
    const at = h.codec.time(now);
    const rows = events.map((event, ord) => {
      const id = event.eventId ?? randomUUID();
      const envelope: WebhookEnvelope = {
        id,
        type: event.kind,
        created_at: now.toISOString(),
        data: event.data,
      };
      return { ord, event_id: id, kind: event.kind, payload: envelope };
    });
    const result = await sql<{ delivery_id: string }>`
      WITH ev AS (
        SELECT e.ord, e.event_id, e.kind, e.payload
        FROM jsonb_to_recordset(CAST(${JSON.stringify(rows)} AS jsonb))
          AS e(ord integer, event_id uuid, kind text, payload jsonb)
      ), matches AS (
        SELECT r.webhook_id, ev.ord, ev.event_id, ev.kind, ev.payload
        FROM webhook_registrations AS r JOIN ev ON r.event_types @> jsonb_build_array(ev.kind)
        WHERE r.active AND r.webhook_id IN (
          SELECT CAST(s.id AS uuid)
          FROM jsonb_array_elements_text(CAST(${JSON.stringify(subscribers)} AS jsonb)) AS s(id))
      ), counts AS (
        SELECT webhook_id, count(*) AS n FROM matches GROUP BY webhook_id
      ), bumped AS (
        UPDATE webhook_registrations AS r SET event_sequence = r.event_sequence + c.n
        FROM counts AS c WHERE r.webhook_id = c.webhook_id
        RETURNING r.webhook_id, r.event_sequence - c.n AS base
      )
      INSERT INTO webhook_deliveries (delivery_id, webhook_id, event_id, event_type, payload,
        status, attempt_count, next_attempt_at, created_at, sequence)
      SELECT gen_random_uuid(), m.webhook_id, m.event_id, m.kind, m.payload, 'PENDING', 0,
        CAST(${at} AS timestamptz), CAST(${at} AS timestamptz),
        b.base + row_number() OVER (PARTITION BY m.webhook_id ORDER BY m.ord)
      FROM matches AS m JOIN bumped AS b ON b.webhook_id = m.webhook_id
      ON CONFLICT (webhook_id, event_id) DO NOTHING
      RETURNING delivery_id`.execute(h.db);
    return result.rows.length;
  } catch (error) {
    throw translateDriverError(error, `emit ${events.length} webhook event(s)`);
  }
}

/**
 * Emit one webhook event of `kind` with `data`, in the caller's transaction — the function
 * other modules call when a fact worth telling subscribers about commits (approvals call it
 * with `approval.requested` / `approval.decided`). Returns the number of deliveries created.
 *
 * @example
 * await store.transaction(async (tx) => {
 *   await saveApproval(tx, approval);
 *   await emitWebhookEvent(tx, 'approval.requested', { approval_id, …, requested_by }, now);
 * });
 */
export function emitWebhookEvent<K extends WebhookEventKind>(
  h: CloudHandle,
  kind: K,
  data: WebhookEventData[K],
  now: Date,
  eventId?: string,
): Promise<number> {
  const event = { kind, data, ...(eventId ? { eventId } : {}) } as WebhookEvent;
  return emitWebhookEvents(h, [event], now);
}
