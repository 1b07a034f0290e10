/**
 * Loading the workflow definitions an engine command needs: the file `run` starts, and the
 * folders whose types it may spawn (FIRE_AND_FORGET targets, sub-workflows). An invalid
 * definition is reported the way `saffron validate` does, with every problem and its line.
 */
import { readdirSync } from 'node:fs';
import { extname, join, relative, resolve } from 'node:path';
import type { WorkflowRegistry } from '../actors/index.js';
import {
  DefinitionError,
  formatDefinitionIssues,
  loadDefinition,
  loadDefinitionFile,
  type WorkflowDefinition,
  type WorkflowRecord,
} from '../runtime/index.js';
import { CliExit, type CliIo } from './io.js';

function shown(io: CliIo, file: string): string {
  return relative(io.cwd, file) || file;
}

function invalid(io: CliIo, file: string, error: DefinitionError): CliExit {
  const name = shown(io, file);
  const errors = error.issues.filter((i) => i.severity === 'error').length;
  const warnings = error.issues.length - errors;
  const counts = `${errors} error(s)${warnings ? `, ${warnings} warning(s)` : ''}`;
  const lines = formatDefinitionIssues(error.issues, name).replace(/^/gm, '  ');
  return new CliExit(1, `invalid ${name}: ${counts}\n${lines}`);
}

/** Load one definition file, resolving its step functions under `stepsRoot`. */
export async function loadWorkflowFile(
  io: CliIo,
  file: string,
  stepsRoot: string,
): Promise<WorkflowDefinition> {
  try {
    return (await loadDefinitionFile(file, { stepsRoot })).definition;
  } catch (error) {
    if (error instanceof DefinitionError) throw invalid(io, file, error);
    throw error;
  }
}

/** The `.yaml`/`.yml` files of a folder (not recursive), sorted. */
function yamlFiles(io: CliIo, dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((f) => ['.yaml', '.yml'].includes(extname(f)))
      .sort()
      .map((f) => join(dir, f));
  } catch (error) {
    const reason =
      (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such folder' : String(error);
    throw new CliExit(1, `cannot read workflows folder ${shown(io, dir)}: ${reason}`);
  }
}

/**
 * Register every definition in `dir`. With `strict` (a folder the user named) an invalid file
 * is an error; otherwise (the folder `run` found its file in) it is skipped with a warning,
 * so an unrelated broken file next to the one being run does not stop it.
 */
export async function registerWorkflowFolder(
  io: CliIo,
  registry: WorkflowRegistry,
  dir: string,
  stepsRoot: string,
  options: { strict: boolean; skip?: string },
): Promise<void> {
  for (const file of yamlFiles(io, resolve(io.cwd, dir))) {
    if (file === options.skip) continue;
    try {
      registry.register(await loadWorkflowFile(io, file, stepsRoot));
    } catch (error) {
      if (options.strict || !(error instanceof CliExit)) throw error;
      io.stderr.write(
        `saffron: warning: skipped ${error.message.split('\n')[0]} (run 'saffron validate' for details)\n`,
      );
    }
  }
}

/**
 * Check that the step functions of a stored workflow load from `stepsRoot` before driving
 * it. Without this, a forgotten `--steps` would run the current step, fail to import its
 * module, and leave a waiting workflow FAILED instead of refusing up front.
 */
export async function checkStepFunctions(record: WorkflowRecord, stepsRoot: string): Promise<void> {
  if (record.definitionSnapshot === null) return;
  try {
    // JSON is YAML: the snapshot loads through the same door as a file
    await loadDefinition(JSON.stringify(record.definitionSnapshot), { stepsRoot });
  } catch (error) {
    if (!(error instanceof DefinitionError)) throw error;
    const missing = error.issues.filter((i) => i.code === 'FUNCTION_NOT_FOUND');
    if (missing.length === 0) return; // anything else is the runtime's to judge
    const lines = missing.map((i) => `  ${i.path}: ${i.message}`).join('\n');
    throw new CliExit(
      1,
      `step functions of workflow ${record.id} (${record.workflowType}) do not load from ${stepsRoot}; ` +
        `pass --steps DIR or set SAFFRON_STEPS_DIR\n${lines}`,
    );
  }
}
