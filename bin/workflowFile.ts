/**
 * The workflow file `run` and `start` begin: its definition, and a registry holding it and
 * every definition beside it (and in `--workflows` folders), so FIRE_AND_FORGET targets and
 * sub-workflows resolve. The file itself is registered last, so its type is the one started.
 */
import { dirname, resolve } from 'node:path';
import type { WorkflowRegistry } from '../actors/index.js';
import type { WorkflowDefinition } from '../runtime/index.js';
import { loadWorkflowFile, registerWorkflowFolder } from './definitions.js';
import { type EngineOptions, stepsRootOf, workflowsRegistry } from './engineCommand.js';
import type { CliIo } from './io.js';

/** A loaded workflow file and what starting it needs. */
export interface WorkflowFile {
  definition: WorkflowDefinition;
  registry: WorkflowRegistry;
  /** Root of step modules: `--steps`, else SAFFRON_STEPS_DIR, else the file's folder. */
  stepsRoot: string;
}

/** Load the workflow file at `path` (relative to the working directory). */
export async function loadWorkflowToStart(
  path: string,
  options: EngineOptions,
  io: CliIo,
): Promise<WorkflowFile> {
  const file = resolve(io.cwd, path);
  const folder = dirname(file);
  const stepsRoot = stepsRootOf(options, io, folder);
  const definition = await loadWorkflowFile(io, file, stepsRoot);
  const registry = await workflowsRegistry(options, io, stepsRoot);
  await registerWorkflowFolder(io, registry, folder, stepsRoot, { strict: false, skip: file });
  registry.register(definition);
  return { definition, registry, stepsRoot };
}
