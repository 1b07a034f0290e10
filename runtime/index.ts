/**
 * Saffron's engine core, for embedding in any Node service: definitions, expressions,
 * templates, the core model's closed sets, the stores over PostgreSQL / PGlite / SQLite, and
 * the schema model.
 *
 * Glossary:
 * - workflow: one execution of a definition, a row of workflow_executions
 * - definition: a workflow_type and its ordered steps, loaded from YAML (definition/)
 * - step kind: one of the 11 values of a step's `type` (STEP_KINDS)
 * - store: the database of one tier: cloud (PostgreSQL or PGlite) or edge (SQLite)
 * - core tables: the workflow tables both tiers share, with one schema definition (schema/)
 */
export * from './errors.js';
export { DependencyMissingError, importOptional, requireOptional } from './optionalDependency.js';
export * from './model/statuses.js';
export type { JsonObject } from './model/json.js';
export * from './definition/index.js';
export * from './expression/index.js';
export * from './template/index.js';
export * from './execution/index.js';
export * from './inference/index.js';
export * from './merge/index.js';
export * from './http/index.js';
export * from './store/index.js';
export * from './schema/index.js';
export * from './crypto/index.js';
export * from './wasm/index.js';
export * from './saf/index.js';
export * from './jsonSchema/index.js';
// the batched recording of task outcomes that actors/runtime/taskOutcomes.ts drives
export { commitStepsPostgres } from './store/postgres/commitStepsPostgres.js';
export {
  completeTasksPostgres,
  type TaskCompletion,
} from './store/postgres/completeTasksPostgres.js';
export { getGroupWorkflows } from './store/tasks/getGroupWorkflows.js';
export { finishTasks } from './store/tasks/finishTasks.js';
export { taskGroupKey, type TaskGroupMember, type TaskOutcome } from './store/tasks/taskGroups.js';
export * from './loop/index.js';
