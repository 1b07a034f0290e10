/**
 * Command types an operator may send and the payload each one takes (spec: UPDATE_CONFIG,
 * SYNC_TRANSACTIONS, UPDATE_WORKFLOW, REBOOT, DIAGNOSTIC; the edge also handles `sync_wasm`
 * and `update_workflow`, kept as spelled so the device receives the name it dispatches on).
 * Payloads are strict objects: a misspelt field is an error, not an ignored instruction.
 */
import { z } from 'zod';
import type { STORED_COMMAND_TYPES } from '../../runtime/index.js';
import { versionField } from '../governance/semver.js';

const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, 'must be a SHA-256 hex digest');

const updateWorkflow = z.strictObject({
  workflow_type: z.string().min(1).max(200),
  workflow_version: z.string().min(1).max(50).optional(),
  /** The definition YAML to hot-deploy (edge_workflow_cache). */
  definition_yaml: z
    .string()
    .min(1)
    .max(256 * 1024),
  definition_hash: sha256Hex.optional(),
});

const syncWasm = z.strictObject({
  binary_hash: sha256Hex,
  name: z.string().min(1).max(200).optional(),
  version_tag: z.string().min(1).max(50).optional(),
});

/** Payload schema of each command type. */
export const COMMAND_PAYLOADS = {
  UPDATE_CONFIG: z.strictObject({
    /** Fetch even when the held ETag matches. */
    force: z.boolean().optional(),
    reason: z.string().max(500).optional(),
  }),
  SYNC_TRANSACTIONS: z.strictObject({
    /** Upload records from this sequence number on (default: everything unsynced). */
    since_sequence: z.number().int().min(1).optional(),
    max_records: z.number().int().min(1).max(500).optional(),
  }),
  UPDATE_WORKFLOW: updateWorkflow,
  update_workflow: updateWorkflow,
  REBOOT: z.strictObject({
    delay_seconds: z.number().int().min(0).max(3600).optional(),
    reason: z.string().max(500).optional(),
  }),
  DIAGNOSTIC: z.strictObject({
    checks: z.array(z.string().min(1).max(100)).max(50).optional(),
    upload_logs: z.boolean().optional(),
  }),
  SYNC_WASM: syncWasm,
  sync_wasm: syncWasm,
} as const satisfies Record<(typeof STORED_COMMAND_TYPES)[number], z.ZodType>;

/** Every accepted command type. */
export type CommandTypeName = keyof typeof COMMAND_PAYLOADS;

const common = {
  /** Redeliveries allowed after the first delivery (default 3). */
  max_retries: z.number().int().min(0).max(20).default(3),
  /** The command fails as `expired` if not finished within this many seconds. */
  expires_in_seconds: z
    .number()
    .int()
    .min(1)
    .max(30 * 86_400)
    .optional(),
  /**
   * The command version whose payload schema applies (governance/commandVersions.ts);
   * default: the type's current version.
   */
  command_version: versionField.optional(),
};

/** A validated command request. */
export interface CreateCommand {
  command_type: CommandTypeName;
  payload: Record<string, unknown>;
  max_retries: number;
  expires_in_seconds?: number;
  command_version?: string;
}

/** The body of `POST /api/v1/devices/{id}/commands`: one variant per command type. */
export const createCommandBody = z.discriminatedUnion(
  'command_type',
  (Object.keys(COMMAND_PAYLOADS) as CommandTypeName[]).map((type) =>
    z.strictObject({
      command_type: z.literal(type),
      // prefault: an absent payload is validated as {} (a required field still fails)
      payload: (COMMAND_PAYLOADS[type] as z.ZodObject).prefault({}),
      ...common,
    }),
  ) as unknown as [z.ZodObject, ...z.ZodObject[]],
) as unknown as z.ZodType<CreateCommand>;
