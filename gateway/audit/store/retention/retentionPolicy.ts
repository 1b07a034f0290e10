/**
 * Audit retention policies: how long rows of an audit table are kept. A policy names one
 * table (the closed set below, mirrored by the table's CHECK constraint), a retention in
 * days, and optionally the event types it is limited to (empty = every row of the table).
 * The purge (enforceRetentionPolicy.ts) deletes exactly the rows older than
 * `now − retention_days`. Cloud tier only.
 */
import type { Codec } from '../../../../runtime/index.js';

/** Tables a policy can govern, and the column that dates their rows. */
export const RETENTION_TABLES = [
  'command_audit_log',
  'workflow_audit_log',
  'workflow_execution_logs',
  'webhook_deliveries',
] as const;
/** A table a policy can govern. */
export type RetentionTable = (typeof RETENTION_TABLES)[number];

/** Tables whose rows have an event type a policy can be limited to. */
export const EVENT_TYPED_RETENTION_TABLES: readonly RetentionTable[] = [
  'command_audit_log',
  'workflow_audit_log',
  'webhook_deliveries',
];

/** The columns a policy read returns. */
export const RETENTION_POLICY_COLUMNS = [
  'policy_id',
  'name',
  'table_name',
  'retention_days',
  'event_types',
  'archive',
  'enabled',
  'last_run_at',
  'created_at',
  'updated_at',
] as const;

/** A retention policy. */
export interface RetentionPolicyRecord {
  policyId: string;
  name: string;
  tableName: RetentionTable;
  retentionDays: number;
  /** Only rows of these event types; empty for all. */
  eventTypes: string[];
  archive: boolean;
  enabled: boolean;
  lastRunAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A policy row as selected with {@link RETENTION_POLICY_COLUMNS}. */
export interface RetentionPolicyRow {
  policy_id: string;
  name: string;
  table_name: string;
  retention_days: number | string;
  event_types: unknown;
  archive: unknown;
  enabled: unknown;
  last_run_at: unknown;
  created_at: unknown;
  updated_at: unknown;
}

/** Decode a policy row. */
export function rowToRetentionPolicy(codec: Codec, row: RetentionPolicyRow): RetentionPolicyRecord {
  const types = codec.parseJson(row.event_types);
  return {
    policyId: row.policy_id,
    name: row.name,
    tableName: row.table_name as RetentionTable,
    retentionDays: codec.parseInt(row.retention_days),
    eventTypes: Array.isArray(types) ? types.filter((t): t is string => typeof t === 'string') : [],
    archive: codec.parseBool(row.archive),
    enabled: codec.parseBool(row.enabled),
    lastRunAt:
      row.last_run_at === null || row.last_run_at === undefined
        ? null
        : codec.parseTime(row.last_run_at),
    createdAt: codec.parseTime(row.created_at),
    updatedAt: codec.parseTime(row.updated_at),
  };
}

/** The instant before which `policy` deletes rows, at `now`. */
export function retentionCutoff(
  policy: Pick<RetentionPolicyRecord, 'retentionDays'>,
  now: Date,
): Date {
  return new Date(now.getTime() - policy.retentionDays * 86_400_000);
}
