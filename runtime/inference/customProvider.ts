/**
 * `runtime: custom`: models that are JavaScript functions registered with the runtime under
 * their model name — rules engines, hand-written scorers, or a client of a model server.
 * They receive the (preprocessed) input as JSON and return JSON; with a numeric result the
 * same postprocessing as for ONNX applies.
 */
import { InferenceError } from './errors.js';
import type { CustomModelFunction, InferenceProvider } from './provider.js';

/** The built-in `custom` provider over a live table of functions (later registrations count). */
export function customProvider(
  functions: ReadonlyMap<string, CustomModelFunction>,
): InferenceProvider {
  return {
    load({ name }) {
      const fn = functions.get(name);
      if (fn === undefined) {
        const known = [...functions.keys()].sort();
        return Promise.reject(
          new InferenceError(
            'MODEL_NOT_FOUND',
            `no custom model '${name}' is registered` +
              (known.length ? ` (registered: ${known.join(', ')})` : ''),
          ),
        );
      }
      return Promise.resolve({
        inputs: [],
        outputs: [],
        async run(input, options) {
          let value: unknown;
          try {
            value = await fn(structuredClone(input), options.context);
          } catch (cause) {
            throw new InferenceError(
              'INFERENCE_FAILED',
              `custom model '${name}' threw: ${cause instanceof Error ? cause.message : String(cause)}`,
              { cause },
            );
          }
          return { kind: 'value', value };
        },
        close: () => Promise.resolve(),
      });
    },
  };
}
