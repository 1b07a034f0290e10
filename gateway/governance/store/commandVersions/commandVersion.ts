/**
 * The versioned command definition as operations return it: a JSON schema of the payload of
 * one command type at one version (semantic version text), optionally deprecated in favour
 * of a newer one, and the changelog entry each change leaves. The gateway owns the meaning
 * of versions (ordering, which one is current); the store keeps rows. Cloud tier only.
 */
import type { Codec } from '../../../../runtime/index.js';

/** The columns a command version read returns. */
export const COMMAND_VERSION_COLUMNS = [
  'id',
  'command_type',
  'version',
  'payload_schema',
  'description',
  'risk_level',
  'deprecated',
  'deprecated_at',
  'replaced_by',
  'created_by',
  'created_at',
] as const;

/** One version of a command type. */
export interface CommandVersionRecord {
  id: string;
  commandType: string;
  version: string;
  payloadSchema: unknown;
  description: string | null;
  riskLevel: string | null;
  deprecated: boolean;
  deprecatedAt: Date | null;
  replacedBy: string | null;
  createdBy: string | null;
  createdAt: Date;
}

/** A command version row as selected with {@link COMMAND_VERSION_COLUMNS}. */
export interface CommandVersionRow {
  id: string;
  command_type: string;
  version: string;
  payload_schema: unknown;
  description: string | null;
  risk_level: string | null;
  deprecated: unknown;
  deprecated_at: unknown;
  replaced_by: string | null;
  created_by: string | null;
  created_at: unknown;
}

/** Decode a command version row. */
export function rowToCommandVersion(codec: Codec, row: CommandVersionRow): CommandVersionRecord {
  return {
    id: row.id,
    commandType: row.command_type,
    version: row.version,
    payloadSchema: codec.parseJson(row.payload_schema),
    description: row.description,
    riskLevel: row.risk_level,
    deprecated: codec.parseBool(row.deprecated),
    deprecatedAt:
      row.deprecated_at === null || row.deprecated_at === undefined
        ? null
        : codec.parseTime(row.deprecated_at),
    replacedBy: row.replaced_by,
    createdBy: row.created_by,
    createdAt: codec.parseTime(row.created_at),
  };
}

/** One changelog entry. */
export interface CommandChangelogRecord {
  id: number;
  commandType: string;
  fromVersion: string | null;
  toVersion: string;
  changeType: string;
  changes: unknown;
  author: string | null;
  createdAt: Date;
}
