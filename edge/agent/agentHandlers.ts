/**
 * Handlers of the commands that need the whole agent (the components' own — UPDATE_CONFIG,
 * DIAGNOSTIC, sync_wasm — are in commands/defaultHandlers.ts):
 *
 * - `SYNC_TRANSACTIONS`: upload the store-and-forward queue now; the ack carries the outcome.
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
  /** Upload queued transactions now; resolves with a JSON summary for the ack. */
  syncTransactions(): Promise<unknown>;
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
const reboot = z.looseObject({
  delay_seconds: z.number().int().min(0).max(3600).optional(),
  reason: z.string().max(500).optional(),
});

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
    SYNC_TRANSACTIONS: async () => (await deps.syncTransactions()) ?? {},
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
