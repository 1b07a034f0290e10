/**
 * `--executor inline|threads|postgres` of `run` and `start` (docs/architecture.md#execution-providers): where step
 * functions and ASYNC / PARALLEL task bodies run. The default follows the database: on
 * PostgreSQL the tasks table is a queue that `saffron worker` processes on any machine share
 * (claims with SKIP LOCKED, wake-ups by NOTIFY), so tasks go there; SQLite and PGlite are one
 * machine's files, so the command runs its tasks itself and needs no other process.
 */
import { Option, type Command } from 'commander';
import type { RuntimeOptions } from '../actors/index.js';
import {
  describeStoreTarget,
  inlineExecutor,
  threadsExecutor,
  type StoreTarget,
} from '../runtime/index.js';
import { CliExit } from './io.js';

/** The execution providers. */
export const EXECUTORS = ['inline', 'threads', 'postgres'] as const;

/** One execution provider. */
export type ExecutorKind = (typeof EXECUTORS)[number];

/** Options carrying `--executor`. */
export interface ExecutorOptions {
  executor?: ExecutorKind;
}

/** Add `--executor` described by `help` (commander checks the value against {@link EXECUTORS}). */
export function executorOption(command: Command, help: string): Command {
  return command.addOption(
    new Option('--executor <kind>', `${help}; default postgres on PostgreSQL, else inline`).choices(
      EXECUTORS,
    ),
  );
}

/** The executor to use on `target`: the one asked for, else the database's default. */
export function chooseExecutor(asked: ExecutorKind | undefined, target: StoreTarget): ExecutorKind {
  const kind = asked ?? (target.kind === 'postgres' ? 'postgres' : 'inline');
  if (kind === 'postgres' && target.kind !== 'postgres')
    throw new CliExit(
      2,
      `--executor postgres queues tasks for \`saffron worker\` processes sharing a PostgreSQL database (--db postgres://…); ${describeStoreTarget(target)} is not PostgreSQL — use --executor inline or threads`,
    );
  return kind;
}

/**
 * The runtime options of `kind`: the step executor (created here, closed by the runtime) and
 * whether this process runs the tasks it dispatches (`runTasks`, false when workers do).
 */
export function executorRuntime(
  kind: ExecutorKind,
  stepsRoot: string,
  runTasks: boolean,
): Partial<RuntimeOptions> {
  return {
    executor: kind === 'threads' ? threadsExecutor({ stepsRoot }) : inlineExecutor({ stepsRoot }),
    runTasks: runTasks && kind !== 'postgres',
  };
}
