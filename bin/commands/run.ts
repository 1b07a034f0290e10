/**
 * `saffron run <workflow.yaml>`: start a workflow and wait until it is no longer ACTIVE (nor
 * waiting for tasks): with `--executor inline | threads` this process runs everything; with
 * `postgres` its tasks go to `saffron worker` processes and `run` waits for them.
 */
import type { Command } from 'commander';
import { describeStoreTarget } from '../../runtime/index.js';
import { settleWithWorkers } from '../awaitWorkers.js';
import { engineAction } from '../engineAction.js';
import { type EngineOptions, engineOptions, withRuntime } from '../engineCommand.js';
import { engineTarget } from '../engineStore.js';
import {
  chooseExecutor,
  executorOption,
  executorRuntime,
  type ExecutorOptions,
} from '../executorOption.js';
import type { CliIo } from '../io.js';
import { type DataOptions, readDataOption } from '../jsonOption.js';
import { reportSettled } from '../settled.js';
import { loadWorkflowToStart } from '../workflowFile.js';

interface RunOptions extends EngineOptions, DataOptions, ExecutorOptions {}

async function run(path: string, options: RunOptions, io: CliIo): Promise<void> {
  const data = readDataOption(options, io);
  const target = engineTarget(options, io);
  const executor = chooseExecutor(options.executor, target);
  const { definition, registry, stepsRoot } = await loadWorkflowToStart(path, options, io);
  const runtime = () => executorRuntime(executor, stepsRoot, true);
  await withRuntime(options, io, { stepsRoot, registry, runtime }, async (runtime, store) => {
    const started = await runtime.start(definition, data ?? {});
    const settled =
      executor === 'postgres'
        ? await settleWithWorkers(runtime, store, started.id, io, {
            location: describeStoreTarget(target),
          })
        : await runtime.runUntilSettled(started.id);
    reportSettled(io, settled, options.json === true);
  });
}

/** Register `run`. */
export function registerRunCommand(program: Command, io: CliIo): void {
  engineOptions(
    executorOption(
      program
        .command('run')
        .description(
          'start a workflow and drive it until it completes, fails or waits; exit 1 when it ends FAILED or CANCELLED',
        )
        .argument('<workflow>', 'workflow definition YAML file')
        .option('--data <json>', 'initial data as a JSON object')
        .option('--data-file <file>', 'initial data from a JSON file'),
      'where steps and ASYNC/PARALLEL tasks run: inline (this process), threads (a worker-thread pool here) or postgres (tasks queued for `saffron worker` processes, which run waits for)',
    ),
  ).action(engineAction(io, (path: string, options: RunOptions) => run(path, options, io)));
}
