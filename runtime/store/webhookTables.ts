/**
 * Kysely table types of webhooks and audit retention (cloud tier): webhook_registrations,
 * webhook_deliveries (with migration 0006's ordering and history columns) and
 * audit_retention_policies. Conventions as in database.ts.
 */
import type { ColumnType } from 'kysely';
import type { DefaultInt, DefaultJson, DefaultTime, NullableTime } from './database.js';

/** A column with a database default, written as `T`. */
type Defaulted<T> = ColumnType<T, T | undefined, T>;

/** webhook_registrations row. */
export interface WebhookRegistrationsTable {
  webhook_id: string;
  name: string | null;
  url: string;
  event_types: DefaultJson;
  /** The signing secret, sealed with the gateway's keyring; never returned by the API. */
  secret_ciphertext: string;
  active: Defaulted<boolean | number>;
  max_retries: DefaultInt;
  created_by: string | null;
  created_at: DefaultTime;
  updated_at: DefaultTime;
  event_sequence: DefaultInt;
}

/** webhook_deliveries row. */
export interface WebhookDeliveriesTable {
  delivery_id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  payload: ColumnType<unknown, string, string>;
  status: Defaulted<string>;
  attempt_count: DefaultInt;
  next_attempt_at: NullableTime;
  last_status_code: number | null;
  last_error: string | null;
  created_at: DefaultTime;
  delivered_at: NullableTime;
  sequence: DefaultInt;
  attempts: DefaultJson;
}

/** audit_retention_policies row. */
export interface AuditRetentionPoliciesTable {
  policy_id: string;
  name: string;
  table_name: string;
  retention_days: number;
  event_types: DefaultJson;
  archive: Defaulted<boolean | number>;
  enabled: Defaulted<boolean | number>;
  last_run_at: NullableTime;
  created_at: DefaultTime;
  updated_at: DefaultTime;
}
