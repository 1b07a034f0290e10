/**
 * Pure transitions of the runtime's machines without an actor per call. XState's own
 * `transition()` and `initialTransition()` build an inert actor (and its system) for every
 * call, which costs more than the transition itself: a workflow event took 26–64 µs
 * through `transition()` on the development machine and 10–20 µs through `pureTransition`.
 * A payment takes about a dozen transitions, a task's completion one or two, a gateway one
 * per device event. These keep one inert scope per machine instead.
 *
 * That is safe for machines like ours, which only `assign`: nothing in a transition keeps
 * state in the scope — `defer`, `emit`, `stopChild` and the action executor do nothing, as
 * in XState's inert scope, and a machine that spawned or invoked actors (registering them in
 * the scope's system) must not use these. Actions other than built-ins are not executed,
 * exactly as `transition()` returns them without running them.
 */
import {
  createActor,
  type AnyStateMachine,
  type EventFromLogic,
  type InputFrom,
  type SnapshotFrom,
} from 'xstate';

/** The actor scope a machine's `transition` takes. */
type Scope = Parameters<AnyStateMachine['transition']>[2];

const scopes = new WeakMap<AnyStateMachine, Scope>();

function inertScope(machine: AnyStateMachine): Scope {
  let scope = scopes.get(machine);
  if (scope === undefined) {
    const self = createActor(machine);
    const nothing = () => undefined;
    scope = {
      self,
      id: '',
      sessionId: '',
      system: self.system,
      logger: nothing,
      defer: nothing,
      emit: nothing,
      stopChild: nothing,
      actionExecutor: nothing,
    };
    scopes.set(machine, scope);
  }
  return scope;
}

/** The snapshot after `event` (unchanged when no transition is enabled). */
export function pureTransition<M extends AnyStateMachine>(
  machine: M,
  snapshot: SnapshotFrom<M>,
  event: EventFromLogic<M>,
): SnapshotFrom<M> {
  return machine.transition(snapshot, event, inertScope(machine)) as SnapshotFrom<M>;
}

/** The machine's initial snapshot. */
export function pureInitialSnapshot<M extends AnyStateMachine>(
  machine: M,
  input?: InputFrom<M>,
): SnapshotFrom<M> {
  return machine.getInitialSnapshot(inertScope(machine), input) as SnapshotFrom<M>;
}
