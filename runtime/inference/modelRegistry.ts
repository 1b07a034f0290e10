/**
 * The models one runtime can run, loaded once and shared by every step and workflow.
 *
 * A model is identified by its provider and the real path of its file; its session is
 * reused until the file changes (inode, size, mtime or ctime differ), then the next run
 * loads the new file and the old session is released once the runs using it have finished.
 * A file that fails to load stays failed (fast) until it changes. Custom models are keyed
 * by name. `close()` releases every session — the runtime calls it from its own `close()`.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { AI_RUNTIMES, type AiConfig, type AiRuntime } from '../definition/index.js';
import type { JsonObject } from '../model/json.js';
import { customProvider } from './customProvider.js';
import { InferenceError } from './errors.js';
import { locateModelFile, type LocationCache } from './modelFiles.js';
import { onnxProvider, type OnnxProviderOptions } from './onnxProvider.js';
import { postprocess } from './postprocess.js';
import { preprocessInput } from './preprocess.js';
import type { CustomModelFunction, InferenceProvider, LoadedModel } from './provider.js';
import { withTimeout } from './timeout.js';

/** Options of {@link createModelRegistry}. */
export interface ModelRegistryOptions {
  /** Folder `model_path` values resolve under and may not leave (default: the working directory). */
  root?: string;
  /** Folder of `<model_name>.onnx` files for steps without `model_path`. */
  modelsDir?: string;
  /**
   * Providers by runtime kind, replacing or adding to the built-in `onnx` and `custom` ones —
   * `tflite` has none unless given here.
   */
  providers?: Partial<Record<AiRuntime, InferenceProvider>>;
  /** Functions of `runtime: custom` models, by model name. */
  custom?: Readonly<Record<string, CustomModelFunction>>;
  /** Session options of the built-in ONNX provider. */
  onnx?: OnnxProviderOptions;
}

/** Which model to load: `ai_config`'s `model_name`, `runtime` and `model_path`. */
export interface ModelRef {
  name: string;
  runtime: AiRuntime;
  path?: string;
}

/** A loaded model and where it came from. */
export interface ModelHandle {
  runtime: AiRuntime;
  /** The file it was loaded from (file-backed providers only). */
  file?: { path: string; sha256: string };
  model: LoadedModel;
}

/** Options of {@link ModelRegistry.run}. */
export interface InferenceRunOptions {
  /** Aborts the run (the step's signal). */
  signal?: AbortSignal;
  workflowId?: string;
  stepName?: string;
}

/** What {@link ModelRegistry.run} produced. */
export interface InferenceResult {
  /** The postprocessed result, for `state[output_key]`. */
  output: JsonObject;
  model: ModelHandle;
  /** Wall time of the model run itself (not loading, not pre/postprocessing). */
  durationMs: number;
}

/** Loads, caches and runs models. */
export interface ModelRegistry {
  /** Runtime kinds with a provider, in `AI_RUNTIMES` order. */
  runtimes(): AiRuntime[];
  /** Register (or replace) the function of a `runtime: custom` model. */
  registerCustom(name: string, fn: CustomModelFunction): void;
  /**
   * The loaded model for `ref`, loading it on first use or after its file changed. The handle
   * stays valid until the file changes or the registry closes.
   */
  loadModel(ref: ModelRef): Promise<ModelHandle>;
  /**
   * Run an AI_INFERENCE step's model on `input` (the value at `input_source`): preprocess,
   * run within `timeout_ms`, postprocess. Throws {@link InferenceError}s; applying
   * `fallback_on_error` is the step's business.
   */
  run(config: AiConfig, input: unknown, options?: InferenceRunOptions): Promise<InferenceResult>;
  /** Release every loaded model; later calls fail with `INFERENCE_CLOSED`. */
  close(): Promise<void>;
}

interface Entry {
  stamp: string;
  handle: Promise<ModelHandle>;
  /** Runs holding this entry. */
  users: number;
  retired: boolean;
  closed?: Promise<void>;
}

function closeEntry(entry: Entry): Promise<void> {
  entry.closed ??= entry.handle.then(
    (handle) => handle.model.close(),
    () => undefined,
  );
  return entry.closed;
}

function unavailable(runtime: AiRuntime): InferenceError {
  const hint =
    runtime === 'tflite'
      ? ': Node has no maintained TensorFlow Lite runtime; convert the model to ONNX (runtime: onnx) or register a provider (createRuntime({ inference: { providers: { tflite } } }))'
      : ` (register one with createRuntime({ inference: { providers: { ${runtime} } } }))`;
  return new InferenceError(
    'INFERENCE_RUNTIME_UNAVAILABLE',
    `no provider for runtime '${runtime}'${hint}`,
  );
}

function loadFailed(ref: ModelRef, where: string, cause: unknown): InferenceError {
  if (cause instanceof InferenceError) return cause;
  const message = cause instanceof Error ? cause.message : String(cause);
  return new InferenceError(
    'MODEL_LOAD_FAILED',
    `cannot load ${ref.runtime} model '${ref.name}' from ${where}: ${message}`,
    { cause },
  );
}

/** A registry with the built-in `onnx` and `custom` providers plus `options.providers`. */
export function createModelRegistry(options: ModelRegistryOptions = {}): ModelRegistry {
  const folders = { root: options.root ?? process.cwd(), modelsDir: options.modelsDir };
  const functions = new Map(Object.entries(options.custom ?? {}));
  const providers = new Map<AiRuntime, InferenceProvider>([
    ['onnx', onnxProvider(options.onnx)],
    ['custom', customProvider(functions)],
  ]);
  for (const kind of AI_RUNTIMES) {
    const provider = options.providers?.[kind];
    if (provider) providers.set(kind, provider);
  }
  const entries = new Map<string, Entry>();
  const locations: LocationCache = new Map();
  let closed = false;

  const retire = (key: string, entry: Entry) => {
    if (entries.get(key) === entry) entries.delete(key);
    entry.retired = true;
    if (entry.users === 0) void closeEntry(entry);
  };

  /** The cache entry for `ref`, loading it when absent or stale. */
  const entryFor = (ref: ModelRef): Entry => {
    if (closed) throw new InferenceError('INFERENCE_CLOSED', 'the model registry is closed');
    const provider = providers.get(ref.runtime);
    if (provider === undefined) throw unavailable(ref.runtime);
    const extension = provider.fileExtension;
    let key: string;
    let stamp = '';
    let load: () => Promise<ModelHandle>;
    if (extension === undefined) {
      key = `${ref.runtime}:${ref.name}`;
      load = async () => {
        try {
          return { runtime: ref.runtime, model: await provider.load({ name: ref.name }) };
        } catch (cause) {
          throw loadFailed(ref, 'its provider', cause);
        }
      };
    } else {
      const located = locateModelFile(ref.name, ref.path, extension, folders, locations);
      key = `${ref.runtime}:${located.path}`;
      stamp = located.stamp;
      load = async () => {
        try {
          const bytes = await readFile(located.path);
          const sha256 = createHash('sha256').update(bytes).digest('hex');
          const model = await provider.load({
            name: ref.name,
            file: { path: located.path, bytes, sha256 },
          });
          return { runtime: ref.runtime, file: { path: located.path, sha256 }, model };
        } catch (cause) {
          throw loadFailed(ref, located.path, cause);
        }
      };
    }
    const current = entries.get(key);
    if (current && current.stamp === stamp) return current;
    const entry: Entry = { stamp, handle: load(), users: 0, retired: false };
    // Failed file loads stay cached under their stamp; failed name loads are retried.
    entry.handle.catch(() => {
      if (extension === undefined && entries.get(key) === entry) entries.delete(key);
    });
    if (current) retire(key, current);
    entries.set(key, entry);
    return entry;
  };

  return {
    runtimes: () => AI_RUNTIMES.filter((kind) => providers.has(kind)),

    registerCustom(name, fn) {
      functions.set(name, fn);
      const key = `custom:${name}`;
      const entry = entries.get(key);
      if (entry) retire(key, entry);
    },

    // async: a synchronous failure (no provider, bad path) becomes a rejection
    loadModel: async (ref) => entryFor(ref).handle,

    async run(config, input, runOptions = {}) {
      const ref: ModelRef = {
        name: config.model_name,
        runtime: config.runtime,
        ...(config.model_path === undefined ? {} : { path: config.model_path }),
      };
      const entry = entryFor(ref);
      entry.users++;
      try {
        const handle = await entry.handle;
        const label = config.input_source;
        const prepared = preprocessInput(input, config.preprocessing, handle.model.inputs, label);
        const started = performance.now();
        const output = await withTimeout(
          (signal) =>
            handle.model.run(prepared, {
              ...(config.postprocessing_params?.output === undefined
                ? {}
                : { output: config.postprocessing_params.output }),
              label,
              context: {
                modelName: config.model_name,
                ...(runOptions.workflowId === undefined
                  ? {}
                  : { workflowId: runOptions.workflowId }),
                ...(runOptions.stepName === undefined ? {} : { stepName: runOptions.stepName }),
                signal,
              },
            }),
          config.timeout_ms,
          `${config.runtime} model '${config.model_name}'`,
          runOptions.signal,
        );
        const durationMs = performance.now() - started;
        return { output: postprocess(output, config), model: handle, durationMs };
      } finally {
        if (--entry.users === 0 && entry.retired) void closeEntry(entry);
      }
    },

    async close() {
      closed = true;
      const all = [...entries.values()];
      entries.clear();
      await Promise.all(all.map(closeEntry));
    },
  };
}
