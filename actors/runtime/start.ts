/**
 * Creating workflows: the row of a new workflow and the commit that creates it, one at a
 * time (`Runtime.start`) or as a batch in one transaction (`Runtime.startMany`).
 */
import {
  ConflictError,
  mergeState,
  validateJson,
  WorkflowError,
  type JsonObject,
  type WorkflowDefinition,
  type WorkflowRecord,
} from '../../runtime/index.js';
import { initialWorkflowSnapshot, persistWorkflowSnapshot } from '../workflow/snapshot.js';
import { newPlan, type CommitPlan } from './commitPlan.js';
import { writePlans } from './writePlans.js';
import { driveWorkflow, loadWorkflow } from './drive.js';
import { compileCached, type Internals } from './internals.js';

/** Options of {@link Runtime.startMany}. */
export interface StartManyOptions {
  ownerId?: string;
  dataRegion?: string;
  /** Drive each workflow's first steps before returning, as `start` does (default true). */
  run?: boolean;
  /** Most workflows driven at once (default 16). */
  concurrency?: number;
  /** Called once the batch is committed (`started` 0) and after each workflow's first drive. */
  onProgress?: (started: number, total: number) => void;
}

const isPlainObject = (v: unknown): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A workflow's input as a plain JSON copy, or undefined when none was given; refuses
 * (INVALID_INPUT) a value that is not a JSON object or cannot be serialized. `what` names it
 * in the message.
 */
export function checkInput(value: unknown, what: string): JsonObject | undefined {
  if (value === undefined) return undefined;
  if (!isPlainObject(value))
    throw new WorkflowError('INVALID_INPUT', `${what} must be a JSON object`);
  try {
    return JSON.parse(JSON.stringify(value)) as JsonObject;
  } catch (cause) {
    throw new WorkflowError('INVALID_INPUT', `${what} is not JSON-serializable`, { cause });
  }
}

/**
 * Refuse `data` that does not match `definition.input_schema` (INVALID_INPUT, every failing
 * path in `details.issues`; the messages name paths and rules, never the values).
 */
export function checkInputSchema(
  definition: WorkflowDefinition,
  data: JsonObject,
  what: string,
): void {
  if (definition.input_schema === undefined) return;
  const issues = validateJson(definition.input_schema, data);
  if (issues.length === 0) return;
  const first = issues[0]!;
  throw new WorkflowError(
    'INVALID_INPUT',
    `${what} does not match the input schema of '${definition.workflow_type}': ${first.path} ${first.message}` +
      (issues.length > 1 ? ` (and ${issues.length - 1} more)` : ''),
    { details: { issues } },
  );
}

/**
 * The commit that creates a workflow: its row, its WORKFLOW_STARTED audit row, and — when
 * this node drives it right away — its heartbeat.
 */
export function createPlan(
  record: WorkflowRecord,
  now: Date,
  driver: string | undefined,
): CommitPlan {
  const { status, state, currentStepIndex, currentStep } = record;
  const plan = newPlan(
    record.id,
    0,
    { status, state, currentStepIndex, currentStep, actorSnapshot: record.actorSnapshot ?? {} },
    driver ? { workerId: driver, currentStep, at: now } : 'keep',
  );
  plan.created = record;
  plan.audit.push({
    workflowId: record.id,
    eventType: 'WORKFLOW_STARTED',
    eventData: {
      workflow_version: record.workflowVersion,
      ...(record.idempotencyKey ? { idempotency_key: record.idempotencyKey } : {}),
    },
    timestamp: now,
  });
  return plan;
}

/** The definition `workflow` names, registering a definition object; UNKNOWN_WORKFLOW_TYPE otherwise. */
export function definitionOf(
  internals: Internals,
  workflow: string | WorkflowDefinition,
): WorkflowDefinition {
  const definition = typeof workflow === 'string' ? internals.registry.get(workflow) : workflow;
  if (!definition) {
    const known = internals.registry.types();
    throw new WorkflowError(
      'UNKNOWN_WORKFLOW_TYPE',
      `unknown workflow type '${typeof workflow === 'string' ? workflow : workflow.workflow_type}'${known.length ? ` (registered: ${known.join(', ')})` : ' (none registered)'}`,
    );
  }
  if (typeof workflow !== 'string' && !internals.registry.get(definition.workflow_type))
    internals.registry.register(definition);
  return definition;
}

/** A new workflow of `definition`, ACTIVE at its first step. */
export function initialRecord(
  internals: Internals,
  definition: WorkflowDefinition,
  initialData: JsonObject,
  now: Date,
  options: { idempotencyKey?: string; ownerId?: string; dataRegion?: string },
): WorkflowRecord {
  const compiled = compileCached(internals, definition);
  return {
    id: internals.ids.uuid(),
    workflowType: definition.workflow_type,
    workflowVersion: definition.workflow_version ?? null,
    status: 'ACTIVE',
    currentStepIndex: 0,
    currentStep: definition.steps[0]!.name,
    state: mergeState(structuredClone(definition.initial_state), initialData),
    definitionSnapshot: definition as unknown as JsonObject,
    definitionHash: compiled.hash,
    actorSnapshot: persistWorkflowSnapshot(
      initialWorkflowSnapshot(compiled),
    ) as unknown as JsonObject,
    idempotencyKey: options.idempotencyKey ?? null,
    ownerId: options.ownerId ?? null,
    dataRegion: options.dataRegion ?? null,
    parentWorkflowId: null,
    version: 0,
    metadata: {},
    createdAt: now,
    updatedAt: now,
  };
}

/** Workflows per insert statement of a batch start (bounded by the drivers' parameter limits). */
const CREATE_CHUNK = 500;

/**
 * Create workflows in one transaction, with this node's heartbeat when it drives them (so a
 * crash before it does leaves them to the zombie scanner), then drive them `concurrency` at a
 * time. Until its drive, each counts as driven here, so the heartbeat pulse keeps it fresh
 * however long the batch takes; should another node take one over anyway (a version
 * conflict), it is reported as that node left it. On an error the remaining drives stop and
 * the error is thrown; the workflows not driven yet keep their heartbeats, which now go
 * stale, so the zombie scanner takes them over.
 */
export async function startBatch(
  internals: Internals,
  definition: WorkflowDefinition,
  data: readonly JsonObject[],
  options: StartManyOptions,
): Promise<WorkflowRecord[]> {
  const inputs = data.map((d, i) => {
    const input = checkInput(d, `workflow data [${i}]`) ?? {};
    checkInputSchema(definition, input, `workflow data [${i}]`);
    return input;
  });
  const now = internals.clock.now();
  const records = inputs.map((d) => initialRecord(internals, definition, d, now, options));
  const driver = options.run === false ? undefined : internals.workerId;
  const plans = records.map((r) => createPlan(r, now, driver));
  await internals.store.transaction(async (tx) => {
    for (let i = 0; i < plans.length; i += CREATE_CHUNK)
      await writePlans(tx, plans.slice(i, i + CREATE_CHUNK), now);
  });
  options.onProgress?.(0, records.length);
  if (!driver) return records;
  for (const r of records) {
    internals.lastBeat.set(r.id, now.getTime());
    internals.driving.add(r.id);
  }
  const results: WorkflowRecord[] = [...records];
  let next = 0;
  let started = 0;
  let failure: { error: unknown } | undefined;
  const driveFirst = async (record: WorkflowRecord) => {
    try {
      return await driveWorkflow(internals, record.id, { kind: 'start' }, record);
    } catch (error) {
      if (error instanceof ConflictError) return loadWorkflow(internals, record.id);
      throw error;
    }
  };
  const lane = async () => {
    while (next < records.length && !failure) {
      const i = next++;
      try {
        results[i] = await driveFirst(records[i]!);
      } catch (error) {
        failure ??= { error };
        return;
      }
      options.onProgress?.(++started, records.length);
    }
  };
  const lanes = Math.max(1, Math.min(options.concurrency ?? 16, records.length));
  await Promise.all(Array.from({ length: lanes }, lane));
  if (failure) {
    for (const r of records.slice(next)) internals.driving.delete(r.id);
    throw failure.error;
  }
  return results;
}
