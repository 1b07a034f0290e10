/**
 * Workflow definitions carried by the signed device configuration (spec: "A config component
 * detects changes by ETag and hot-reloads workflow definitions"). The configuration's content
 * may hold
 *
 * ```json
 * { "workflows": { "pos_payment": { "definition_yaml": "…", "definition_hash": "…" } } }
 * ```
 *
 * keyed by workflow type, so configuration layers merge per type (a device layer can override
 * one workflow of the fleet layer). `definition_hash` is optional.
 *
 * - Checking (the config sync's `validate` hook): every definition must load, declare the
 *   type it is filed under and match its hash — otherwise the whole document is refused and
 *   the last good configuration stays, like any other schema failure.
 * - Applying: a definition is deployed only when its hash differs from the one this
 *   configuration last deployed for that type (kept in `edge_sync_state`). So re-applying
 *   the same configuration — at every start, or after a poll that changed something else —
 *   does not undo a newer `update_workflow` command; a configuration that changes the
 *   definition does replace it.
 */
import { z } from 'zod';
import type { EdgeStore } from '../../runtime/index.js';
import { readSyncState, writeSyncState } from '../state/syncState.js';
import type { DeployResult, WorkflowCatalog } from './workflowCatalog.js';

/** `edge_sync_state` key: workflow type → hash last deployed from the configuration. */
const APPLIED_KEY = 'config_workflows';

const workflowsMember = z.record(
  z.string().min(1).max(200),
  z.looseObject({
    definition_yaml: z
      .string()
      .min(1)
      .max(256 * 1024),
    definition_hash: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .optional(),
  }),
);

/** A workflow definition named by the configuration. */
interface ConfigWorkflow {
  workflowType: string;
  yaml: string;
  definitionHash?: string;
}

/** The workflows of a device configuration's content; throws when `workflows` is malformed. */
function workflowsOf(content: unknown): ConfigWorkflow[] {
  const member =
    content !== null && typeof content === 'object'
      ? (content as { workflows?: unknown }).workflows
      : undefined;
  if (member === undefined) return [];
  const parsed = workflowsMember.safeParse(member);
  if (!parsed.success)
    throw new Error(
      `config.workflows: ${parsed.error.issues
        .slice(0, 3)
        .map((i) => `${['workflows', ...i.path.map(String)].join('.')}: ${i.message}`)
        .join('; ')}`,
    );
  return Object.entries(parsed.data).map(([workflowType, w]) => ({
    workflowType,
    yaml: w.definition_yaml,
    ...(w.definition_hash !== undefined ? { definitionHash: w.definition_hash } : {}),
  }));
}

/** Check every workflow of a configuration's content; throws at the first bad one. */
export async function checkConfigWorkflows(
  catalog: WorkflowCatalog,
  content: unknown,
): Promise<void> {
  for (const workflow of workflowsOf(content)) {
    try {
      await catalog.check(workflow);
    } catch (error) {
      throw new Error(
        `workflows.${workflow.workflowType}: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
  }
}

/** Deploy the workflows of a configuration's content that it has not deployed yet. */
export async function applyConfigWorkflows(
  store: EdgeStore,
  catalog: WorkflowCatalog,
  content: unknown,
  now: Date,
): Promise<DeployResult[]> {
  const workflows = workflowsOf(content);
  if (workflows.length === 0) return [];
  const stored = await readSyncState(store, APPLIED_KEY);
  const applied = { ...((stored?.value ?? {}) as Record<string, string>) };
  const results: DeployResult[] = [];
  for (const workflow of workflows) {
    const { hash } = await catalog.check(workflow);
    if (applied[workflow.workflowType] === hash) continue;
    results.push(await catalog.deploy({ ...workflow, source: { kind: 'config' } }));
    applied[workflow.workflowType] = hash;
    await writeSyncState(store, APPLIED_KEY, applied, now);
  }
  return results;
}
