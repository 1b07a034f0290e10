import { randomUUID } from 'node:crypto';
import { translateDriverError } from '../errors.js';
import type { CloudHandle } from '../store.js';

/** A definition registered through the API. */
export interface StoredDefinition {
  workflowType: string;
  workflowVersion: string | null;
  definitionHash: string;
  sourceYaml: string;
  createdBy: string | null;
  createdAt: Date;
}

/**
 * Record a registered definition; registering the same text of a type again is a no-op.
 * Returns whether a new row was written.
 */
export async function saveWorkflowDefinition(
  h: CloudHandle,
  definition: Omit<StoredDefinition, 'createdAt'>,
): Promise<boolean> {
  try {
    const result = await h.cloud
      .insertInto('workflow_definitions')
      .values({
        id: randomUUID(),
        workflow_type: definition.workflowType,
        workflow_version: definition.workflowVersion,
        definition_hash: definition.definitionHash,
        source_yaml: definition.sourceYaml,
        created_by: definition.createdBy,
      })
      .onConflict((oc) => oc.columns(['workflow_type', 'definition_hash']).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  } catch (error) {
    throw translateDriverError(error, `save definition of ${definition.workflowType}`);
  }
}

/** Every registered definition, oldest first (so registering them in order leaves the latest). */
export async function listWorkflowDefinitions(h: CloudHandle): Promise<StoredDefinition[]> {
  try {
    const rows = await h.cloud
      .selectFrom('workflow_definitions')
      .selectAll()
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map((r) => ({
      workflowType: r.workflow_type,
      workflowVersion: r.workflow_version,
      definitionHash: r.definition_hash,
      sourceYaml: r.source_yaml,
      createdBy: r.created_by,
      createdAt: h.codec.parseTime(r.created_at),
    }));
  } catch (error) {
    throw translateDriverError(error, 'list definitions');
  }
}
