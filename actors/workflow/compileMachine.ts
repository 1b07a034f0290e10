/**
 * Compiles a workflow definition into an XState v5 machine: one state node per top-level
 * step (with `ready` and, for steps that run a function, `waitingHuman` / `waitingChild`
 * substates; ASYNC and PARALLEL steps wait in `waitingTasks`), guarded transitions for DECISION routes, a root-level transition per jump
 * target, and final states for the four terminal outcomes.
 *
 * The machine decides only *where* a workflow is; running steps is the engine's job, and
 * every transition is computed purely (../pureTransition.ts) so the engine can commit
 * the next snapshot and the step's effects in one database transaction before anything else
 * happens. No `after` delays: timers are database rows, which a snapshot can be restored
 * alongside; in-memory delays cannot.
 */
import {
  assign,
  setup,
  type AnyMachineSnapshot,
  type AnyStateMachine,
  type StateMachine,
} from 'xstate';
import {
  definitionHash,
  type StepDefinition,
  type WorkflowDefinition,
} from '../../runtime/index.js';
import { pureInitialSnapshot } from '../pureTransition.js';
import { initialContext, type WorkflowMachineContext } from './context.js';
import type { WorkflowEvent } from './events.js';

/** Step kinds whose function may pause or start a sub-workflow. */
const FUNCTION_KINDS = new Set<StepDefinition['type']>(['STANDARD', 'DECISION', 'HUMAN_IN_LOOP']);

/** Final states and the statuses they mean. */
export const FINAL_STATES = {
  completed: 'COMPLETED',
  failed: 'FAILED',
  rolledBack: 'FAILED_ROLLED_BACK',
  cancelled: 'CANCELLED',
} as const;

/** A compiled definition. */
export interface CompiledWorkflow {
  definition: WorkflowDefinition;
  hash: string;
  machine: AnyStateMachine;
  /** State key of each top-level step (step names are sanitized for XState paths). */
  keyOf(stepName: string): string | undefined;
  /** The top-level step of a state key, with its index. */
  stepAt(key: string): { step: StepDefinition; index: number } | undefined;
  /**
   * The machine's initial snapshot, computed on first use and then shared: snapshots are
   * immutable (every transition returns a new one), and every workflow starts from this one.
   */
  initialSnapshot(): AnyMachineSnapshot;
}

function stateKeys(steps: readonly StepDefinition[]): string[] {
  const used = new Set<string>([...Object.keys(FINAL_STATES), 'compensating']);
  return steps.map((step, index) => {
    let key = step.name.replace(/[.#\s]/g, '_');
    if (used.has(key)) key = `${key}__${index}`;
    used.add(key);
    return key;
  });
}

/** Count a visit to `key` and reset the per-visit fields. */
const enterStep = (key: string) =>
  assign(({ context }: { context: WorkflowMachineContext }) => ({
    visits: { ...context.visits, [key]: (context.visits[key] ?? 0) + 1 },
    attempt: 0,
    retryAt: null,
    childId: null,
    taskGroup: null,
  }));

/** Push the compensation an event carries onto the saga stack. */
const registerCompensation = assign(
  ({ context, event }: { context: WorkflowMachineContext; event: WorkflowEvent }) =>
    'compensation' in event && event.compensation
      ? { saga: [...context.saga, { step: event.step, fn: event.compensation }] }
      : {},
);

/** Keep the error a failing step reported. */
const recordError = assign(({ event }: { event: WorkflowEvent }) =>
  event.type === 'wf.step.failed' ? { error: event.error } : {},
);

/** Compile `definition` (already validated) into its machine. */
export function compileWorkflowMachine(definition: WorkflowDefinition): CompiledWorkflow {
  const hash = definitionHash(definition);
  const steps = definition.steps;
  const keys = stateKeys(steps);
  const keyByName = new Map(steps.map((s, i) => [s.name, keys[i]!]));
  const stepByKey = new Map(steps.map((s, i) => [keys[i]!, { step: s, index: i }]));

  const machineId = `workflow-${definition.workflow_type.replace(/[.#\s]/g, '_')}`;
  const ref = (key: string) => `#${machineId}.${key}`;
  const goTo = (key: string) =>
    key in FINAL_STATES
      ? { target: ref(key), actions: registerCompensation }
      : { target: ref(key), actions: [registerCompensation, enterStep(key)] };
  const jumpTo = (name: string) => ({
    guard: ({ event }: { event: WorkflowEvent }) =>
      event.type === 'wf.step.jumped' && event.target === name,
    ...goTo(keyByName.get(name)!),
  });

  const states: Record<string, unknown> = {};
  steps.forEach((step, index) => {
    const key = keys[index]!;
    const next = index + 1 < steps.length ? keys[index + 1]! : 'completed';
    const ready: { on: Record<string, unknown> } = {
      on: {
        'wf.step.retry': {
          actions: assign(({ event }: { event: WorkflowEvent }) =>
            event.type === 'wf.step.retry' ? { retryAt: event.dueAt, attempt: event.attempt } : {},
          ),
        },
      },
    };
    const substates: Record<string, unknown> = { ready };
    if (FUNCTION_KINDS.has(step.type)) {
      ready.on['wf.step.paused'] = 'waitingHuman';
      ready.on['wf.child.started'] = {
        target: 'waitingChild',
        actions: assign(({ event }: { event: WorkflowEvent }) =>
          event.type === 'wf.child.started' ? { childId: event.childId } : {},
        ),
      };
      substates.waitingHuman = { on: { 'wf.human.resumed': 'ready' } };
      substates.waitingChild = { on: { 'wf.child.completed': goTo(next) } };
    }
    if (step.type === 'ASYNC' || step.type === 'PARALLEL') {
      ready.on['wf.tasks.dispatched'] = {
        target: 'waitingTasks',
        actions: assign(({ event }: { event: WorkflowEvent }) =>
          event.type === 'wf.tasks.dispatched' ? { taskGroup: event.group } : {},
        ),
      };
      substates.waitingTasks = { on: { 'wf.tasks.completed': goTo(next) } };
    }
    const routeTargets =
      step.type === 'DECISION'
        ? [
            ...new Set((step.routes ?? []).map((r) => ('default' in r ? r.default : r.target))),
          ].filter((t) => keyByName.has(t))
        : [];
    states[key] = {
      initial: 'ready',
      meta: { stepName: step.name, kind: step.type, index },
      states: substates,
      on: {
        'wf.step.completed': goTo(next),
        ...(routeTargets.length ? { 'wf.step.jumped': routeTargets.map(jumpTo) } : {}),
      },
    };
  });

  const machine = setup({
    types: { context: {} as WorkflowMachineContext, events: {} as WorkflowEvent },
  }).createMachine({
    id: machineId,
    context: { ...initialContext(), visits: { [keys[0]!]: 1 } },
    initial: keys[0]!,
    on: {
      'wf.step.jumped': steps.map((s) => jumpTo(s.name)),
      'wf.step.failed': [
        {
          guard: ({ context }: { context: WorkflowMachineContext }) => context.saga.length > 0,
          target: '.compensating',
          actions: recordError,
        },
        {
          target: '.failed',
          actions: recordError,
        },
      ],
      'wf.cancelled': '.cancelled',
      'wf.paused': {
        actions: assign(({ event }: { event: WorkflowEvent }) =>
          event.type === 'wf.paused' ? { pausedFrom: event.from } : {},
        ),
      },
      'wf.unpaused': { actions: assign({ pausedFrom: null }) },
    },
    states: {
      ...(states as Record<string, object>),
      compensating: {
        on: {
          'wf.compensation.recorded': {
            actions: assign(({ context }: { context: WorkflowMachineContext }) => ({
              saga: context.saga.slice(0, -1),
            })),
          },
          'wf.compensated': { target: 'rolledBack', actions: assign({ saga: [] }) },
        },
      },
      completed: { type: 'final' },
      failed: { type: 'final' },
      rolledBack: { type: 'final' },
      cancelled: { type: 'final' },
    },
  } as never) as unknown as StateMachine<
    WorkflowMachineContext,
    WorkflowEvent,
    never,
    never,
    never,
    never,
    never,
    never,
    never,
    never,
    never,
    never,
    never,
    never
  >;

  const compiled = machine as unknown as AnyStateMachine;
  let initial: AnyMachineSnapshot | undefined;
  return {
    definition,
    hash,
    machine: compiled,
    keyOf: (name) => keyByName.get(name),
    stepAt: (key) => stepByKey.get(key),
    initialSnapshot: () => (initial ??= pureInitialSnapshot(compiled)),
  };
}
