/**
 * LOOP: run the body steps in order once per item (ITERATE) or while a condition holds
 * (WHILE), never more than `max_iterations` times; reaching the limit stops the loop and is
 * recorded in the audit log (spec: "the loop stops at max_iterations").
 *
 * The whole loop is one step and one commit. Body steps run in this process: kinds that wait
 * (HUMAN_IN_LOOP pauses, sub-workflows) or leave the body by a jump are rejected with a clear
 * error; a DECISION may route to another step of the same body; HTTP retries wait in memory.
 */
import type { LoopStep, StepDefinition } from '../../definition/index.js';
import { toError } from '../../errors.js';
import {
  compileExpression,
  ExpressionTypeError,
  isTruthy,
  parsePath,
  resolvePath,
} from '../../expression/index.js';
import type { JsonObject } from '../../model/json.js';
import { contextScope, createStepLogger, type StepContext } from '../context.js';
import { StepError } from '../errors.js';
import type { StepResult, StepRun } from '../run.js';

type ExecuteStep = (step: StepDefinition, run: StepRun) => Promise<StepResult>;

function listAt(state: JsonObject, path: string): unknown {
  try {
    const parsed = parsePath(path.startsWith('state.') ? path : `state.${path}`);
    return resolvePath(state, parsed.segments);
  } catch {
    return undefined;
  }
}

async function runBody(
  loop: LoopStep,
  run: StepRun,
  state: JsonObject,
  index: number,
  item: unknown,
  execute: ExecuteStep,
): Promise<{ ok: true; state: JsonObject } | { ok: false; result: StepResult }> {
  let current = state;
  let position = 0;
  let guard = 0;
  while (position < loop.loop_body.length) {
    if (++guard > loop.loop_body.length * 100) {
      return {
        ok: false,
        result: {
          kind: 'failed',
          error: new StepError(
            'LOOP_BODY_UNSUPPORTED',
            loop.name,
            'routes inside the loop body cycle without end',
          ),
        },
      };
    }
    const body = loop.loop_body[position]!;
    const context: StepContext = {
      ...run.context,
      stepName: body.name,
      idempotencyKey: `${run.context.idempotencyKey}:${index}:${body.name}`,
      loop_item: item,
      loop_index: index,
      loopItem: item,
      loopIndex: index,
      ...(loop.item_var_name ? { [loop.item_var_name]: item } : {}),
      log: createStepLogger(run.effects, body.name),
    };
    let attempt = 0;
    let result = await execute(body, { ...run, state: current, context, attempt });
    while (result.kind === 'retry') {
      await run.clock.sleep(result.dueAt.getTime() - run.clock.now().getTime(), run.context.signal);
      attempt = result.attempt;
      result = await execute(body, { ...run, state: current, context, attempt });
    }
    switch (result.kind) {
      case 'completed':
        current = result.state;
        position++;
        break;
      case 'jumped': {
        const target = loop.loop_body.findIndex((s) => s.name === result.target);
        if (target < 0) {
          return {
            ok: false,
            result: {
              kind: 'failed',
              error: new StepError(
                'LOOP_BODY_UNSUPPORTED',
                body.name,
                `a step in the body of LOOP ${loop.name} cannot jump out of it (to '${result.target}')`,
              ),
            },
          };
        }
        current = result.state;
        position = target;
        break;
      }
      case 'failed':
        return { ok: false, result };
      case 'paused':
      case 'subWorkflow':
        return {
          ok: false,
          result: {
            kind: 'failed',
            error: new StepError(
              'LOOP_BODY_UNSUPPORTED',
              body.name,
              `a step in the body of LOOP ${loop.name} cannot ${result.kind === 'paused' ? 'pause for human input' : 'start a sub-workflow'}`,
            ),
          },
        };
    }
  }
  return { ok: true, state: current };
}

/** Execute a LOOP step; `execute` runs one body step (the engine's step dispatcher). */
export async function executeLoop(
  step: LoopStep,
  run: StepRun,
  execute: ExecuteStep,
): Promise<StepResult> {
  let state = run.state;
  let items: unknown[] | undefined;
  if (step.mode === 'ITERATE') {
    const source = listAt(state, step.iterate_over ?? '');
    if (!Array.isArray(source)) {
      return {
        kind: 'failed',
        error: new StepError(
          'LOOP_SOURCE_INVALID',
          step.name,
          `iterate_over '${step.iterate_over}' is not a list in state`,
        ),
      };
    }
    items = source;
  }
  let condition: ((scope: { state: JsonObject; context: JsonObject }) => unknown) | undefined;
  if (step.mode === 'WHILE') condition = compileExpression(step.while_condition ?? 'false');

  const shouldContinue = (index: number): boolean | StepError => {
    if (items) return index < items.length;
    try {
      return isTruthy(
        condition!({
          state,
          context: { ...contextScope(run.context), loop_index: index, loopIndex: index },
        }),
      );
    } catch (error) {
      const mismatch = error instanceof ExpressionTypeError;
      return new StepError(
        mismatch ? 'EXPRESSION_TYPE_MISMATCH' : 'LOOP_SOURCE_INVALID',
        step.name,
        `while_condition failed: ${toError(error).message}`,
        { cause: error, ...(mismatch && { details: { ...error.operands } }) },
      );
    }
  };
  let index = 0;
  for (;;) {
    const more = shouldContinue(index);
    if (more instanceof StepError) return { kind: 'failed', error: more };
    if (!more) break;
    if (index >= step.max_iterations) {
      run.effects.audit.push({
        eventType: 'LOOP_LIMIT_REACHED',
        stepName: step.name,
        eventData: {
          max_iterations: step.max_iterations,
          ...(items ? { items: items.length } : {}),
        },
      });
      run.context.log.warn(`LOOP ${step.name} stopped at max_iterations (${step.max_iterations})`);
      break;
    }
    const outcome = await runBody(step, run, state, index, items?.[index], execute);
    if (!outcome.ok) return outcome.result;
    state = outcome.state;
    index++;
  }
  return { kind: 'completed', state };
}
