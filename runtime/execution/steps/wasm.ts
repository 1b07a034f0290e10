/**
 * WASM: run a sandboxed WebAssembly module on the step's input and merge its JSON output into
 * state with the step's `merge_strategy` / `merge_conflict_behavior` (spec module contract:
 * one JSON value on stdin — the whole state, or with `state_mapping` an object of the mapped
 * top-level keys renamed to the module's input keys —, one JSON object on stdout, exit 0).
 *
 * Failures of the module — not found, tampered, invalid, trapped, non-zero exit, bad output,
 * timeout — go through `fallback_on_error`: `fail` fails the step (the error names the step,
 * the hash and the cause), `skip` completes it with `{}`, `default` completes it with
 * `default_result` (or `{}` without one). The engine giving up on the step (abort, runner
 * closed) and a merge conflict under RAISE_ERROR are not the module's failures: they always
 * fail the step.
 */
import type { WasmStep } from '../../definition/index.js';
import { toError } from '../../errors.js';
import { mergeState } from '../../merge/index.js';
import type { JsonObject } from '../../model/json.js';
import { WasmError, type WasmErrorCode } from '../../wasm/errors.js';
import { StepError } from '../errors.js';
import type { StepResult, StepRun } from '../run.js';

/** Codes that mean the engine, not the module, ended the call: no fallback applies. */
const ENGINE_CODES: ReadonlySet<WasmErrorCode> = new Set(['WASM_ABORTED', 'WASM_RUNNER_CLOSED']);

/** The module's stdin: the whole state, or the mapped keys (absent state keys are left out). */
function moduleInput(step: WasmStep, state: JsonObject): unknown {
  const mapping = step.wasm_config.state_mapping;
  if (mapping === undefined) return state;
  const input: JsonObject = {};
  for (const [stateKey, inputKey] of Object.entries(mapping))
    if (Object.hasOwn(state, stateKey)) input[inputKey] = state[stateKey];
  return input;
}

function merged(step: WasmStep, state: JsonObject, output: JsonObject): StepResult {
  try {
    return {
      kind: 'completed',
      state: mergeState(state, output, {
        strategy: step.merge_strategy,
        onConflict: step.merge_conflict_behavior,
      }),
    };
  } catch (error) {
    return {
      kind: 'failed',
      error: new StepError('STEP_RESULT_INVALID', step.name, toError(error).message, {
        cause: error,
        details: { wasm_hash: step.wasm_config.wasm_hash },
      }),
    };
  }
}

/** The step's error for a module failure: step name, module hash and cause in the message. */
function stepError(step: WasmStep, error: WasmError): WasmError {
  const hash = step.wasm_config.wasm_hash;
  return new WasmError(error.code, `WASM step '${step.name}' (module ${hash}): ${error.message}`, {
    cause: error,
    details: { ...error.details, step: step.name, wasm_hash: hash },
  });
}

/** Execute a WASM step once. */
export async function executeWasm(step: WasmStep, run: StepRun): Promise<StepResult> {
  if (!run.wasm)
    return {
      kind: 'failed',
      error: new StepError(
        'STEP_KIND_UNAVAILABLE',
        step.name,
        'WASM steps need a WASM runner this runtime was not given',
      ),
    };
  const config = step.wasm_config;
  const result = await run.wasm.run({
    hash: config.wasm_hash,
    entrypoint: config.entrypoint,
    input: moduleInput(step, run.state),
    timeoutMs: config.timeout_ms,
    signal: run.context.signal,
  });
  const stderr = result.stderr === '' ? {} : { stderr: result.stderr };
  if (result.ok) {
    run.context.log.debug('WASM module ran', {
      wasm_hash: config.wasm_hash,
      thread_id: result.thread.threadId,
      compiled: result.thread.compiled,
      ...stderr,
    });
    return merged(step, run.state, result.output);
  }
  const error = stepError(step, result.error);
  const fallback = ENGINE_CODES.has(error.code) ? 'fail' : config.fallback_on_error;
  switch (fallback) {
    case 'fail':
      run.context.log.error(error.message, { code: error.code, ...stderr });
      return { kind: 'failed', error };
    case 'skip':
      run.context.log.warn(`${error.message}; fallback_on_error skip: continuing with {}`, {
        code: error.code,
        ...stderr,
      });
      return { kind: 'completed', state: run.state };
    case 'default':
      run.context.log.warn(
        `${error.message}; fallback_on_error default: continuing with default_result`,
        { code: error.code, ...stderr },
      );
      return merged(step, run.state, config.default_result ?? {});
    default: {
      const never: never = fallback;
      throw new Error(`unknown fallback_on_error ${String(never)}`);
    }
  }
}
