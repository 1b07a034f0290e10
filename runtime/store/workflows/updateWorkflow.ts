import { executeCached } from '../cachedQuery.js';
import { ConflictError, translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';
import type { JsonObject } from '../../model/json.js';
import type { WorkflowRecord } from './record.js';

/** The columns a step commit changes. */
export type WorkflowChanges = Partial<
  Pick<
    WorkflowRecord,
    | 'status'
    | 'currentStepIndex'
    | 'currentStep'
    | 'state'
    | 'actorSnapshot'
    | 'metadata'
    | 'ownerId'
  >
>;

/**
 * Apply `changes` if the row is still at `expectedVersion` (one writer per workflow), and
 * return the new version. A concurrent writer makes this a ConflictError.
 */
export async function updateWorkflow(
  h: StoreHandle,
  id: string,
  expectedVersion: number,
  changes: WorkflowChanges,
  now = new Date(),
): Promise<number> {
  const json = (value: JsonObject | null) => (value === null ? null : h.codec.json(value));
  const set = {
    ...(changes.status !== undefined && { status: changes.status }),
    ...(changes.currentStepIndex !== undefined && {
      current_step_index: changes.currentStepIndex,
    }),
    ...(changes.currentStep !== undefined && { current_step: changes.currentStep }),
    ...(changes.state !== undefined && { state: h.codec.json(changes.state) }),
    ...(changes.actorSnapshot !== undefined && { actor_snapshot: json(changes.actorSnapshot) }),
    ...(changes.metadata !== undefined && { metadata: h.codec.json(changes.metadata) }),
    ...(changes.ownerId !== undefined && { owner_id: changes.ownerId }),
    version: expectedVersion + 1,
    updated_at: h.codec.time(now),
  };
  let updated: bigint;
  try {
    // one compiled statement per set of changed columns (a step commit always changes the same)
    const result = await executeCached(
      h,
      `updateWorkflow:${Object.keys(set).join(',')}`,
      [...Object.values(set), id, expectedVersion],
      () =>
        h.db
          .updateTable('workflow_executions')
          .set(set)
          .where('id', '=', id)
          .where('version', '=', expectedVersion),
    );
    updated = result.numAffectedRows ?? 0n;
  } catch (error) {
    throw translateDriverError(error, `update workflow ${id}`);
  }
  if (updated !== 1n) {
    throw new ConflictError(`workflow ${id} changed since version ${expectedVersion}`, {
      details: { workflowId: id, expectedVersion },
    });
  }
  return expectedVersion + 1;
}
