/**
 * `timeout_ms` for a model run, on the wall clock (like the HTTP step's timeout: it bounds
 * real compute, so an injected test clock must not stretch or shrink it).
 *
 * The run races a timer. On expiry the step stops waiting and the run's signal is aborted —
 * a custom function that watches `context.signal` can stop; anything else keeps running to
 * completion in the background and its result is dropped. Nothing can cancel ONNX Runtime
 * here: onnxruntime-node 1.30 executes `session.run` synchronously on the JS thread (inside
 * a `setImmediate`), and its `RunOptions.terminate` is not implemented for Node. A blocking
 * run therefore also delays the timer itself, so a result is accepted only if it arrived
 * within `timeout_ms` as measured when it arrives: a late result is a timeout too, never a
 * silent success.
 */
import { toError } from '../errors.js';
import { InferenceError } from './errors.js';

/**
 * Run `work` with an abort signal, failing with `INFERENCE_TIMEOUT` when it takes longer
 * than `ms`. `parent` (the step's signal) aborts the run too.
 */
export function withTimeout<T>(
  work: (signal: AbortSignal) => Promise<T>,
  ms: number,
  what: string,
  parent?: AbortSignal,
): Promise<T> {
  const controller = new AbortController();
  const timeoutError = () =>
    new InferenceError('INFERENCE_TIMEOUT', `${what} gave no result within ${ms} ms`, {
      details: { timeout_ms: ms },
    });
  const onParentAbort = () => controller.abort(parent?.reason);
  if (parent?.aborted) controller.abort(parent.reason);
  else parent?.addEventListener('abort', onParentAbort, { once: true });
  const started = performance.now();
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const settle = (error: Error | undefined, value?: T) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      parent?.removeEventListener('abort', onParentAbort);
      if (error === undefined && performance.now() - started > ms) error = timeoutError();
      if (error === undefined) {
        resolve(value as T);
        return;
      }
      if (error instanceof InferenceError && error.code === 'INFERENCE_TIMEOUT') {
        controller.abort(error);
      }
      reject(error);
    };
    const timer = setTimeout(() => settle(timeoutError()), ms);
    try {
      work(controller.signal).then(
        (value) => settle(undefined, value),
        (error: unknown) => settle(toError(error ?? 'the model run failed')),
      );
    } catch (error) {
      settle(toError(error ?? 'the model run failed'));
    }
  });
}
