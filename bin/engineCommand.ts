/**
 * What every engine command (`run`, `start`, `resume`, `worker`, …) shares: its options, and
 * the engine database opened and its schema brought up to date, a runtime over it whose
 * step functions load from the steps root, and both closed whatever happens. Secrets come
 * from the command's environment (`SAFFRON_SECRET_<NAME>`), and so does WASM_STORAGE_DIR.
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import {
  createRuntime,
  createWorkflowRegistry,
  type Runtime,
  type RuntimeOptions,
  type WorkflowRegistry,
} from '../actors/index.js';
import {
  destinationOptionsFromEnv,
  envSecrets,
  storeWasmSource,
  wasmStorageDir,
  WorkflowError,
  type Store,
} from '../runtime/index.js';
import { registerWorkflowFolder } from './definitions.js';
import { describeEngineDatabase, type EngineDatabase, openEngineDatabase } from './engineStore.js';
import type { CliIo } from './io.js';
import type { DatabaseOptions } from './storeOption.js';

/** Options every engine command takes. */
export interface EngineOptions extends DatabaseOptions {
  steps?: string;
  workflows?: string[];
  json?: boolean;
}

/** Add the options every engine command takes. */
export function engineOptions(command: Command): Command {
  return command
    .option(
      '--db <location>',
      'SQLite file, postgres://… URL or pglite:DIR (default: DATABASE_URL, else ./.saffron/saffron.db)',
    )
    .option('--database-url <url>', 'alias of --db')
    .option(
      '--steps <dir>',
      'root of step modules (default: SAFFRON_STEPS_DIR, else the working directory; for run and start the YAML file’s folder)',
    )
    .option(
      '--workflows <dir>',
      'register the workflow YAML files of this folder (types of spawned workflows); repeatable',
      (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
    )
    .option('--json', 'print the result as JSON');
}

/** The step-module root: `--steps`, else SAFFRON_STEPS_DIR, else `fallback` (default cwd). */
export function stepsRootOf(options: EngineOptions, io: CliIo, fallback = io.cwd): string {
  return resolve(io.cwd, options.steps ?? io.env.SAFFRON_STEPS_DIR ?? fallback);
}

/** A registry holding the definitions of every `--workflows` folder. */
export async function workflowsRegistry(
  options: EngineOptions,
  io: CliIo,
  stepsRoot: string,
): Promise<WorkflowRegistry> {
  const registry = createWorkflowRegistry();
  for (const dir of options.workflows ?? [])
    await registerWorkflowFolder(io, registry, dir, stepsRoot, { strict: true });
  return registry;
}

/** A WORKFLOW_NOT_FOUND that names the database it was looked for in; other errors as they are. */
function notFoundIn(error: unknown, database: EngineDatabase): unknown {
  if (!(error instanceof WorkflowError) || error.code !== 'WORKFLOW_NOT_FOUND') return error;
  return new WorkflowError(
    'WORKFLOW_NOT_FOUND',
    `${error.message} in ${describeEngineDatabase(database)}`,
    { cause: error, details: { ...error.details, database: database.label } },
  );
}

/**
 * Run `fn` with a runtime over the engine database (and the database itself); close both
 * whatever happens. `runtime` may be a function, called once the database is open, for options
 * that hold resources the runtime then owns (a thread pool).
 */
export async function withRuntime<T>(
  options: EngineOptions,
  io: CliIo,
  setup: {
    stepsRoot: string;
    registry: WorkflowRegistry;
    runtime?: Partial<RuntimeOptions> | (() => Partial<RuntimeOptions>);
    /** PostgreSQL pool size (default 4). */
    connections?: number;
  },
  fn: (runtime: Runtime, store: Store) => Promise<T>,
): Promise<T> {
  const { store, database } = await openEngineDatabase(options, io, setup.connections);
  try {
    const runtime = createRuntime({
      store,
      stepsRoot: setup.stepsRoot,
      registry: setup.registry,
      secrets: envSecrets(io.env),
      outbound: destinationOptionsFromEnv(io.env),
      // WASM binaries: device_wasm_cache on SQLite, WASM_STORAGE_DIR files on the cloud.
      wasmSource: storeWasmSource(store, { storageDir: wasmStorageDir(io.env, io.cwd) }),
      onBackgroundError: (error, id) =>
        io.stderr.write(`saffron: background drive of workflow ${id} failed: ${String(error)}\n`),
      ...(typeof setup.runtime === 'function' ? setup.runtime() : setup.runtime),
    });
    try {
      return await fn(runtime, store);
    } catch (error) {
      throw notFoundIn(error, database);
    } finally {
      await runtime.close();
    }
  } finally {
    await store.close();
  }
}
