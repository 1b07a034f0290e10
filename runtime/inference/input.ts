/**
 * Reading `ai_config.input_source` from workflow state. The source is a state path as LOOP's
 * `iterate_over` takes it: `features`, `transaction.features`, `images[0]`, with or without
 * a leading `state.`.
 */
import { parsePath, resolvePath } from '../expression/index.js';
import type { JsonObject } from '../model/json.js';
import { InferenceError } from './errors.js';

/** The value at `source` in `state`; throws `INFERENCE_INPUT_INVALID` when there is none. */
export function readInputSource(state: JsonObject, source: string): unknown {
  let value: unknown;
  try {
    const parsed = parsePath(source.startsWith('state.') ? source : `state.${source}`);
    value = resolvePath(state, parsed.segments);
  } catch (cause) {
    throw new InferenceError(
      'INFERENCE_INPUT_INVALID',
      `input_source '${source}' is not a state path`,
      {
        cause,
      },
    );
  }
  if (value === undefined) {
    throw new InferenceError(
      'INFERENCE_INPUT_INVALID',
      `input_source '${source}' is missing from the workflow state`,
    );
  }
  return value;
}
