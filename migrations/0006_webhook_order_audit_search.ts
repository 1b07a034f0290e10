/**
 * Migration 0006_webhook_order_audit_search: ordered webhook delivery with retry history, and
 * full-text search of command audit details. Frozen: never edit a shipped migration; add a new one.
 *
 * - `webhook_registrations.event_sequence`: the last sequence number handed to an event of
 *   this registration. Enqueuing bumps it under the row lock, so sequence order is commit
 *   order and a receiver can be served strictly in order (runtime/store/webhooks).
 * - `webhook_deliveries.sequence` (that number) and `attempts` (one entry per attempt: when,
 *   HTTP status, error, duration), with the indexes the dispatcher and the lists use.
 * - `command_audit_log.search_vector` now also covers the values inside `details` (and the
 *   actor's role), so `GET /api/v1/audit?q=` finds "disk full" in an error message; the
 *   column is regenerated and its GIN index rebuilt.
 * - `idx_command_audit_log_command`: audit rows of one command.
 */
import type { Migration } from '../runtime/store/migrate/migration.js';

export const migration: Migration = {
  id: '0006_webhook_order_audit_search',
  description: 'ordered webhook deliveries with retry history; audit search over details',
  statements: [
    `ALTER TABLE webhook_registrations ADD COLUMN event_sequence BIGINT NOT NULL DEFAULT 0`,
    `ALTER TABLE webhook_deliveries ADD COLUMN sequence BIGINT NOT NULL DEFAULT 0`,
    `ALTER TABLE webhook_deliveries ADD COLUMN attempts JSONB NOT NULL DEFAULT '[]'::jsonb`,
    `CREATE INDEX idx_webhook_deliveries_order ON webhook_deliveries (webhook_id, sequence)`,
    `CREATE INDEX idx_webhook_deliveries_head ON webhook_deliveries (webhook_id, status, sequence)`,
    `ALTER TABLE command_audit_log DROP COLUMN search_vector`,
    `ALTER TABLE command_audit_log ADD COLUMN search_vector TSVECTOR GENERATED ALWAYS AS (to_tsvector('simple', event_type || ' ' || coalesce(actor, '') || ' ' || coalesce(actor_role, '') || ' ' || coalesce(device_id, '')) || jsonb_to_tsvector('simple', details, '["string", "numeric", "boolean"]')) STORED`,
    `CREATE INDEX idx_command_audit_log_search ON command_audit_log USING gin (search_vector)`,
    `CREATE INDEX idx_command_audit_log_command ON command_audit_log (command_id)`,
  ],
};
