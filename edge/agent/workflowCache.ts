/**
 * `edge_workflow_cache`: workflow YAML hot-deployed to this device (spec: "workflow YAML
 * definitions hot-deployed by an update_workflow command"), one row per workflow type — the
 * version new workflows of that type start on. Workflows already running never read it:
 * they run on the definition snapshot taken when they started.
 */
import { translateDriverError, type EdgeHandle } from '../../runtime/index.js';

/** A hot-deployed definition as stored. */
export interface CachedWorkflow {
  workflowType: string;
  workflowVersion: string | null;
  yaml: string;
  /** `definitionHash` of the loaded definition (SHA-256 hex). */
  definitionHash: string;
  /** The command that deployed it; null when it came with the signed configuration. */
  sourceCommandId: string | null;
  updatedAt: Date;
}

/** Every hot-deployed definition, by workflow type. */
export async function listCachedWorkflows(h: EdgeHandle): Promise<CachedWorkflow[]> {
  try {
    const rows = await h.edge
      .selectFrom('edge_workflow_cache')
      .selectAll()
      .orderBy('workflow_type')
      .execute();
    return rows.map((row) => ({
      workflowType: row.workflow_type,
      workflowVersion: row.workflow_version,
      yaml: row.yaml,
      definitionHash: row.definition_hash,
      sourceCommandId: row.source_command_id,
      updatedAt: h.codec.parseTime(row.updated_at),
    }));
  } catch (error) {
    throw translateDriverError(error, 'list hot-deployed workflows');
  }
}

/** Store `entry` as the definition new workflows of its type start on. */
export async function saveCachedWorkflow(
  h: EdgeHandle,
  entry: Omit<CachedWorkflow, 'updatedAt'>,
  now: Date,
): Promise<void> {
  const at = h.codec.time(now);
  const row = {
    workflow_version: entry.workflowVersion,
    yaml: entry.yaml,
    definition_hash: entry.definitionHash,
    source_command_id: entry.sourceCommandId,
    updated_at: at,
  };
  try {
    await h.edge
      .insertInto('edge_workflow_cache')
      .values({ workflow_type: entry.workflowType, ...row, created_at: at })
      .onConflict((oc) => oc.column('workflow_type').doUpdateSet(row))
      .execute();
  } catch (error) {
    throw translateDriverError(error, `store hot-deployed workflow ${entry.workflowType}`);
  }
}
