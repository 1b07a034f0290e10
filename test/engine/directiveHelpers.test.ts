/**
 * The typed directive helpers of the package's public surface: each is typed `never` (the
 * compiler knows nothing after the call runs) and throws the directive the engine reads.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  jumpTo,
  pause,
  proceed,
  readDirective,
  startSubWorkflow,
  StartSubWorkflowDirective,
  WorkflowJumpDirective,
  WorkflowPauseDirective,
  WorkflowProceedDirective,
  type JsonObject,
} from '../../index.js';

function thrownBy(call: () => unknown): unknown {
  try {
    call();
  } catch (error) {
    return error;
  }
  throw new Error('expected the helper to throw');
}

describe('directive helpers', () => {
  it('are typed never, with the arguments each directive takes', () => {
    expectTypeOf(pause).toEqualTypeOf<(result?: JsonObject) => never>();
    expectTypeOf(proceed).toEqualTypeOf<(result?: JsonObject) => never>();
    expectTypeOf(jumpTo).toEqualTypeOf<(stepName: string) => never>();
    expectTypeOf(startSubWorkflow).toEqualTypeOf<
      (workflowType: string, initialData?: JsonObject) => never
    >();
    // a call narrows like a throw: after it, `input` is known to be defined
    const decide = (input: JsonObject | undefined): JsonObject => {
      if (!input) pause();
      expectTypeOf(input).toEqualTypeOf<JsonObject>();
      return input;
    };
    expect(decide({ a: 1 })).toEqual({ a: 1 });
  });

  it('throw the directives the engine reads', () => {
    const paused = thrownBy(() => pause({ prompt: 'approve?' }));
    expect(paused).toBeInstanceOf(WorkflowPauseDirective);
    expect(readDirective(paused)).toEqual({ kind: 'pause', result: { prompt: 'approve?' } });
    expect(readDirective(thrownBy(() => pause()))).toEqual({ kind: 'pause', result: {} });

    const proceeded = thrownBy(() => proceed({ review: 'auto' }));
    expect(proceeded).toBeInstanceOf(WorkflowProceedDirective);
    expect(readDirective(proceeded)).toEqual({ kind: 'proceed', result: { review: 'auto' } });

    const jumped = thrownBy(() => jumpTo('approve'));
    expect(jumped).toBeInstanceOf(WorkflowJumpDirective);
    expect(readDirective(jumped)).toEqual({ kind: 'jump', target: 'approve' });

    const child = thrownBy(() => startSubWorkflow('credit_check', { applicant: 'a1' }));
    expect(child).toBeInstanceOf(StartSubWorkflowDirective);
    expect(readDirective(child)).toEqual({
      kind: 'subWorkflow',
      workflowType: 'credit_check',
      initialData: { applicant: 'a1' },
    });
  });
});
