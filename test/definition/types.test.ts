import { describe, expectTypeOf, it } from 'vitest';
import type {
  LoopStep,
  Route,
  StepDefinition,
  StepKind,
  WorkflowDefinition,
} from '../../runtime/definition/index.js';
import type { STEP_KINDS } from '../../runtime/definition/index.js';

describe('public types', () => {
  it('derives StepKind from STEP_KINDS and discriminates steps on type', () => {
    expectTypeOf<(typeof STEP_KINDS)[number]>().toEqualTypeOf<StepKind>();
    expectTypeOf<StepDefinition['type']>().toEqualTypeOf<StepKind>();
    expectTypeOf<Extract<StepDefinition, { type: 'LOOP' }>>().toEqualTypeOf<LoopStep>();
    expectTypeOf<LoopStep['loop_body']>().toEqualTypeOf<StepDefinition[]>();
  });

  it('exposes normalized routes and required defaults', () => {
    expectTypeOf<Route>().toEqualTypeOf<
      { condition: string; target: string } | { default: string }
    >();
    expectTypeOf<WorkflowDefinition['initial_state']>().toEqualTypeOf<Record<string, unknown>>();
    expectTypeOf<
      Extract<StepDefinition, { type: 'HTTP' }>['http_config']['timeout']
    >().toEqualTypeOf<number>();
    expectTypeOf<Extract<StepDefinition, { type: 'DECISION' }>>().not.toHaveProperty(
      'compensate_function',
    );
  });
});
