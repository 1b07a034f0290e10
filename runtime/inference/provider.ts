/**
 * The port between the inference pipeline and whatever runs models. One provider per
 * `ai_config.runtime` kind: ONNX Runtime and custom functions are built in; TensorFlow Lite
 * (no maintained Node runtime exists) or a remote model server plug in the same way, and
 * the edge agent reuses the same registry. Kept to two calls — load and run — so a new
 * provider is a page of code.
 */
import type { NumericTensor } from './tensor.js';
import type { DeclaredDim } from './shape.js';

/** A model input or output as the model declares it. */
export interface TensorSpec {
  name: string;
  /** Element type (`float32`, `int64`, …) when the model declares one. */
  type?: string;
  /** Declared shape; absent when the model does not say. */
  shape?: readonly DeclaredDim[];
}

/** What a model run sees of its caller. */
export interface InferenceContext {
  modelName: string;
  workflowId?: string;
  stepName?: string;
  /** Aborted when the step times out or the engine gives up on it. */
  signal: AbortSignal;
}

/** Options of {@link LoadedModel.run}. */
export interface ModelRunOptions {
  /** Name of the output to return (default: the model's first output). */
  output?: string;
  /** How errors name the input (the step's `input_source`; default `the input`). */
  label?: string;
  context: InferenceContext;
}

/** One model output: a tensor (batch dimension added for the run removed), or any JSON value. */
export type ModelOutput =
  { kind: 'tensor'; name: string; tensor: NumericTensor } | { kind: 'value'; value: unknown };

/** A model ready to run. */
export interface LoadedModel {
  /** Declared inputs, in order (empty when the model declares none, e.g. custom functions). */
  readonly inputs: readonly TensorSpec[];
  readonly outputs: readonly TensorSpec[];
  /**
   * Run once on `input`: a number array (nested for rank > 1) for a single-input model, or an
   * object of such arrays keyed by input name.
   */
  run(input: unknown, options: ModelRunOptions): Promise<ModelOutput>;
  /** Release native resources once runs in flight have finished. */
  close(): Promise<void>;
}

/** A model file as the registry read it. */
export interface ModelFile {
  /** Real path (symlinks resolved). */
  path: string;
  bytes: Uint8Array;
  /** Lowercase hex SHA-256 of `bytes`. */
  sha256: string;
}

/** What a provider is asked to load. */
export interface ModelLoadRequest {
  /** `ai_config.model_name`. */
  name: string;
  /** The model file, for providers with a {@link InferenceProvider.fileExtension}. */
  file?: ModelFile;
}

/** Loads models of one runtime kind. */
export interface InferenceProvider {
  /**
   * Extension of this kind's files in a models directory (`.onnx`). Providers without one
   * (custom functions) load by name and never touch the file system.
   */
  readonly fileExtension?: string;
  load(request: ModelLoadRequest): Promise<LoadedModel>;
}

/** A `runtime: custom` model: `(input, context) => output`, sync or async. */
export type CustomModelFunction = (input: unknown, context: InferenceContext) => unknown;
