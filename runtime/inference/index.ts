/**
 * Model inference for AI_INFERENCE steps: a {@link ModelRegistry} that loads models once
 * through per-runtime {@link InferenceProvider}s (ONNX Runtime on CPU and custom functions
 * built in; TensorFlow Lite only when a provider is registered), and the pre/postprocessing
 * pipeline around a run. The engine's step kind and, later, the edge agent both use it.
 */
export { customProvider } from './customProvider.js';
export { INFERENCE_ERROR_CODES, InferenceError, type InferenceErrorCode } from './errors.js';
export { readInputSource } from './input.js';
export {
  createModelRegistry,
  type InferenceResult,
  type InferenceRunOptions,
  type ModelHandle,
  type ModelRef,
  type ModelRegistry,
  type ModelRegistryOptions,
} from './modelRegistry.js';
export { onnxProvider, type OnnxProviderOptions } from './onnxProvider.js';
export { DEFAULT_THRESHOLD, postprocess, softmax } from './postprocess.js';
export { normalize, preprocessInput, resizeNearest } from './preprocess.js';
export type {
  CustomModelFunction,
  InferenceContext,
  InferenceProvider,
  LoadedModel,
  ModelFile,
  ModelLoadRequest,
  ModelOutput,
  ModelRunOptions,
  TensorSpec,
} from './provider.js';
export { fitShape, sampleShape, type DeclaredDim, type FittedShape } from './shape.js';
export { toNested, toTensor, type NumericTensor } from './tensor.js';
