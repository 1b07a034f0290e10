/**
 * Inference errors with stable codes. An AI_INFERENCE step turns any of them into its
 * `fallback_on_error` behaviour, so each says what failed in words an operator can act on:
 * which model, which file, which element of the input.
 */
import { SaffronError, type SaffronErrorOptions } from '../errors.js';

/** Stable codes of {@link InferenceError}. */
export const INFERENCE_ERROR_CODES = [
  /** No model file, or no custom function, answers to the model name. */
  'MODEL_NOT_FOUND',
  /** `model_path` / `model_name` would leave the folder models are read from. */
  'MODEL_PATH_INVALID',
  /** The file exists but the provider cannot load it (corrupt, unsupported opset, …). */
  'MODEL_LOAD_FAILED',
  /** No provider is registered for the step's `runtime` (tflite by default). */
  'INFERENCE_RUNTIME_UNAVAILABLE',
  /** The value at `input_source` is missing, not numeric, ragged, or of the wrong shape. */
  'INFERENCE_INPUT_INVALID',
  /** The model's output does not fit the postprocessing (or is not JSON). */
  'INFERENCE_OUTPUT_INVALID',
  /** No result within `timeout_ms`. */
  'INFERENCE_TIMEOUT',
  /** The model itself failed while running. */
  'INFERENCE_FAILED',
  /** The registry was closed. */
  'INFERENCE_CLOSED',
] as const;
/** One of {@link INFERENCE_ERROR_CODES}. */
export type InferenceErrorCode = (typeof INFERENCE_ERROR_CODES)[number];

/** Why loading or running a model failed. Only timeouts are retryable. */
export class InferenceError extends SaffronError {
  override readonly name = 'InferenceError';
  declare readonly code: InferenceErrorCode;
  constructor(code: InferenceErrorCode, message: string, options: SaffronErrorOptions = {}) {
    super(code, message, { retryable: code === 'INFERENCE_TIMEOUT', ...options });
  }
}
