/**
 * Handlers of the commands that need the whole agent (the components' own — UPDATE_CONFIG,
 * DIAGNOSTIC, sync_wasm — are in commands/defaultHandlers.ts):
 *
 * - `SYNC_TRANSACTIONS`: upload the store-and-forward queue now, at most `max_records`; with
 *   `since_sequence`, send again every record held from that sequence number on, PENDING or
 *   SYNCED (REJECTED ones are skipped and counted) — edge/sync/resendBatches.ts. The ack
 *   carries the outcome: `{uploaded, synced, duplicates, rejected, remaining}`, and for a
 *   resend `from_sequence`, `highest_sequence_sent`, `skipped_rejected`,
 *   `lowest_held_sequence` and `highest_held_sequence` (a lowest held above `from_sequence`
 *   means the records in between are gone from this device). A failed upload is reported in
 *   the ack's `error`, as for a background round; a bad payload fails the command.
 * - `UPDATE_WORKFLOW` / `update_workflow`: hot-deploy `definition_yaml` (workflowCatalog.ts);
 *   WASM binaries the new definition needs are prefetched in the background.
 * - `REBOOT`: acked first, then (after `delay_seconds`) the agent's restart hook runs: the CLI
 *   stops the agent cleanly and exits with a code its supervisor restarts it on.
 *
 * Payloads are checked loosely (unknown members allowed): the cloud validated them strictly,
 * and a device must not fail a command over a field a newer cloud added.
 */
import { z } from 'zod';
import { wasmHashesOf } from '../wasm/wasmHashes.js';
import type { CommandHandler } from '../commands/command.js';
import type { SafUploadRequest, SafUploadResult } from '../sync/safSync.js';
import type { WorkflowCatalog } from './workflowCatalog.js';
import { payloadOf } from '../commands/payloadOf.js';

/** What a restart request carries to the restart hook. */
export interface RestartRequest {
  commandId: string;
  reason: string | null;
  delaySeconds: number;
}

/** What the agent handlers use. */
export interface AgentHandlerDeps {
  catalog: WorkflowCatalog;
  /** Upload (or send again) store-and-forward records now; never throws. */
  syncTransactions(request: SafUploadRequest): Promise<SafUploadResult>;
  /** Fetch the binaries of a new definition in the background. */
  prefetchWasm(hashes: string[]): void;
  /** Run after the REBOOT ack reached the cloud. */
  restart(request: RestartRequest): void;
}

const updateWorkflow = z.looseObject({
  workflow_type: z.string().min(1).max(200),
  workflow_version: z.string().max(50).optional(),
  definition_yaml: z.string().min(1),
  definition_hash: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
});
const syncTransactions = z.looseObject({
  since_sequence: z.number().int().min(1).optional(),
  max_records: z.number().int().min(1).optional(),
});
const reboot = z.looseObject({
  delay_seconds: z.number().int().min(0).max(3600).optional(),
  reason: z.string().max(500).optional(),
});

/** The SYNC_TRANSACTIONS ack of `result` (see the module comment). */
function syncAck(result: SafUploadResult) {
  const { uploaded, synced, duplicates, rejected, remaining, resend, error } = result;
  return {
    uploaded,
    synced,
    duplicates,
    rejected,
    remaining,
    ...(resend
      ? {
          from_sequence: resend.fromSequence,
          highest_sequence_sent: resend.highestSent,
          skipped_rejected: resend.skippedRejected,
          lowest_held_sequence: resend.lowestHeld,
          highest_held_sequence: resend.highestHeld,
        }
      : {}),
    ...(error ? { error } : {}),
  };
}

/** The handlers of SYNC_TRANSACTIONS, UPDATE_WORKFLOW / update_workflow and REBOOT. */
export function agentCommandHandlers(deps: AgentHandlerDeps): Record<string, CommandHandler> {
  const deploy: CommandHandler = async (payload, command) => {
    const body = payloadOf(updateWorkflow, payload);
    const result = await deps.catalog.deploy({
      yaml: body.definition_yaml,
      workflowType: body.workflow_type,
      ...(body.definition_hash !== undefined ? { definitionHash: body.definition_hash } : {}),
      source: { kind: 'command', commandId: command.command_id },
    });
    const entry = deps.catalog.get(result.workflowType);
    if (entry) deps.prefetchWasm(wasmHashesOf([entry.definition]));
    return {
      workflow_type: result.workflowType,
      workflow_version: result.workflowVersion,
      definition_hash: result.definitionHash,
      previous_hash: result.previousHash,
      changed: result.changed,
    };
  };

  return {
    SYNC_TRANSACTIONS: async (payload) => {
      const { since_sequence, max_records } = payloadOf(syncTransactions, payload);
      const result = await deps.syncTransactions({
        ...(since_sequence !== undefined ? { fromSequence: since_sequence } : {}),
        ...(max_records !== undefined ? { maxRecords: max_records } : {}),
      });
      return syncAck(result);
    },
    UPDATE_WORKFLOW: deploy,
    update_workflow: deploy,
    REBOOT: (payload, command, context) => {
      const { delay_seconds = 0, reason } = payloadOf(reboot, payload);
      const request: RestartRequest = {
        commandId: command.command_id,
        reason: reason ?? null,
        delaySeconds: delay_seconds,
      };
      context.afterAck(() => deps.restart(request));
      return { restarting: true, delay_seconds };
    },
  };
}
