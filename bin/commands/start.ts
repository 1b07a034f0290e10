/**
 * `saffron start <workflow.yaml>`: create workflows and return without waiting for them to
 * finish — one from `--data`, or one per line of a JSON Lines `--data-file`, all created in
 * one transaction (a bad line starts nothing).
 *
 * What "start" means here, and why: nothing in the runtime picks up an ACTIVE workflow that
 * has no heartbeat and no task (a heartbeat means "a node is driving it"; without one, an
 * ACTIVE workflow waits for an explicit `next`). So `start` does what `runtime.start` does: it
 * runs each workflow's steps in this process until the workflow first waits — for its ASYNC /
 * PARALLEL tasks, a human, a sub-workflow or a `next` — or ends, and returns. It never runs
 * task bodies: those stay queued in the `tasks` table for `saffron worker` processes, which
 * run them and drive the workflows on from there. Each workflow is created with this node's
 * heartbeat, so if `start` dies before running it, a worker's zombie scan takes it over.
 * `--executor` chooses where the steps `start` runs execute (inline or threads; `postgres`
 * runs them inline and insists on a PostgreSQL database, where workers share the queue).
 */
import cliProgress from 'cli-progress';
import type { Command } from 'commander';
import type { JsonObject, WorkflowRecord } from '../../runtime/index.js';
import { engineAction } from '../engineAction.js';
import { type EngineOptions, engineOptions, withRuntime } from '../engineCommand.js';
import { engineTarget } from '../engineStore.js';
import {
  chooseExecutor,
  executorOption,
  executorRuntime,
  type ExecutorOptions,
} from '../executorOption.js';
import { CliExit, type CliIo, printJson } from '../io.js';
import { type DataOptions, isJsonLines, readDataLines, readDataOption } from '../jsonOption.js';
import { endedMessage, succeeded } from '../settled.js';
import { loadWorkflowToStart } from '../workflowFile.js';

interface StartCommandOptions extends EngineOptions, DataOptions, ExecutorOptions {}

/** Batches from this size on report progress on stderr, every this many workflows. */
const PROGRESS_EVERY = 1000;

/** The initial data of each workflow to start. */
function dataItems(options: StartCommandOptions, io: CliIo): JsonObject[] {
  if (options.data === undefined && options.dataFile !== undefined && isJsonLines(options.dataFile))
    return readDataLines(options.dataFile, io);
  return [readDataOption(options, io) ?? {}];
}

/** Progress of a large batch: a bar on a terminal, else a line every {@link PROGRESS_EVERY}. */
function progressReporter(
  io: CliIo,
  type: string,
  total: number,
): ((started: number) => void) | undefined {
  if (total < PROGRESS_EVERY) return undefined;
  let bar: cliProgress.SingleBar | undefined;
  return (started) => {
    if (started === 0) {
      io.stderr.write(`saffron: created ${total} workflow(s) of ${type}; starting them\n`);
      if (io.stderr.isTTY) {
        bar = new cliProgress.SingleBar(
          { format: '  [{bar}] {value}/{total}', stream: process.stderr, hideCursor: true },
          cliProgress.Presets.shades_classic,
        );
        bar.start(total, 0);
      }
      return;
    }
    if (bar) {
      bar.update(started);
      if (started === total) bar.stop();
    } else if (started % PROGRESS_EVERY === 0 || started === total)
      io.stderr.write(`saffron: started ${started}/${total}\n`);
  };
}

function report(io: CliIo, records: readonly WorkflowRecord[], json: boolean): void {
  if (json)
    printJson(
      io,
      records.map((r) => ({ id: r.id, status: r.status, current_step: r.currentStep })),
    );
  else io.stdout.write(records.map((r) => `${r.id} ${r.status}\n`).join(''));
  const failed = records.filter((r) => !succeeded(r.status));
  if (failed.length === 0) return;
  if (records.length === 1) throw new CliExit(1, endedMessage(failed[0]!));
  throw new CliExit(
    1,
    `${failed.length} of ${records.length} workflow(s) ended FAILED, FAILED_ROLLED_BACK or CANCELLED; first: ${endedMessage(failed[0]!)}`,
  );
}

async function start(path: string, options: StartCommandOptions, io: CliIo): Promise<void> {
  const items = dataItems(options, io);
  const executor = chooseExecutor(options.executor, engineTarget(options, io));
  const { definition, registry, stepsRoot } = await loadWorkflowToStart(path, options, io);
  const onProgress = progressReporter(io, definition.workflow_type, items.length);
  await withRuntime(
    options,
    io,
    {
      stepsRoot,
      registry,
      // never run task bodies here: that would mean waiting for them
      runtime: () => executorRuntime(executor, stepsRoot, false),
      connections: 8,
    },
    async (runtime) => {
      const records = await runtime.startMany(definition, items, {
        ...(onProgress ? { onProgress } : {}),
      });
      report(io, records, options.json === true);
    },
  );
}

/** Register `start`. */
export function registerStartCommand(program: Command, io: CliIo): void {
  engineOptions(
    executorOption(
      program
        .command('start')
        .description(
          'create workflows and run each until it first waits (tasks, a human, a sub-workflow, `next`) or ends, then return; queued tasks are left to `saffron worker`',
        )
        .argument('<workflow>', 'workflow definition YAML file')
        .option('--data <json>', 'initial data as a JSON object')
        .option(
          '--data-file <file>',
          'initial data from a JSON file, or from a .jsonl file one workflow per line (created in one transaction)',
        ),
      'where the steps start runs execute: inline (this process) or threads (a worker-thread pool here); postgres runs them inline and requires PostgreSQL. Task bodies are always left to `saffron worker`',
    ),
  ).action(
    engineAction(io, (path: string, options: StartCommandOptions) => start(path, options, io)),
  );
}
