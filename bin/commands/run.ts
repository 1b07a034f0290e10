/** `saffron run <workflow.yaml>`: start a workflow and drive it until it is no longer ACTIVE. */
import { dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import { loadWorkflowFile, registerWorkflowFolder } from '../definitions.js';
import {
  type EngineOptions,
  engineOptions,
  stepsRootOf,
  withRuntime,
  workflowsRegistry,
} from '../engineRuntime.js';
import { engineAction } from '../engineAction.js';
import type { CliIo } from '../io.js';
import { type DataOptions, readDataOption } from '../jsonOption.js';
import { reportSettled } from '../settled.js';

interface RunOptions extends EngineOptions, DataOptions {}

async function run(path: string, options: RunOptions, io: CliIo): Promise<void> {
  const data = readDataOption(options, io);
  const file = resolve(io.cwd, path);
  const folder = dirname(file);
  const stepsRoot = stepsRootOf(options, io, folder);
  const definition = await loadWorkflowFile(io, file, stepsRoot);
  // every definition beside the file, so FIRE_AND_FORGET targets and sub-workflows resolve;
  // the file itself is registered last so its type is the one that runs
  const registry = await workflowsRegistry(options, io, stepsRoot);
  await registerWorkflowFolder(io, registry, folder, stepsRoot, { strict: false, skip: file });
  registry.register(definition);
  await withRuntime(options, io, { stepsRoot, registry }, async (runtime) => {
    const started = await runtime.start(definition, data ?? {});
    reportSettled(io, await runtime.runUntilSettled(started.id), options.json === true);
  });
}

/** Register `run`. */
export function registerRunCommand(program: Command, io: CliIo): void {
  engineOptions(
    program
      .command('run')
      .description(
        'start a workflow and drive it until it completes, fails or waits; exit 1 when it ends FAILED or CANCELLED',
      )
      .argument('<workflow>', 'workflow definition YAML file')
      .option('--data <json>', 'initial data as a JSON object')
      .option('--data-file <file>', 'initial data from a JSON file'),
  ).action(engineAction(io, (path: string, options: RunOptions) => run(path, options, io)));
}
