/**
 * The inspection sink: turns committed step commits into inspection messages
 * (`@xstate.actor`, `@xstate.event`, `@xstate.snapshot`) and hands them to an observer.
 *
 * It is called only after a commit is written (groupCommitQueue.ts; held commits of the edge's
 * `boundaries` durability when their transaction is written), so nobody is told of a step that
 * a crash could still undo before its write. It never throws and never waits: a failing
 * observer is ignored, a slow one queues on its side. Every context, state and event is
 * redacted first (redact.ts).
 *
 * An actor is announced the first time the sink sees its workflow: at its creation, with its
 * machine definition and initial snapshot, or at the first commit of a workflow this runtime
 * did not create (started elsewhere, or before a restart), with the snapshot that commit left.
 */
import {
  isTerminalWorkflowStatus,
  type Clock,
  type JsonObject,
  type WorkflowStatus,
} from '../../runtime/index.js';
import type { CommitPlan } from '../runtime/commitPlan.js';
import type { CompiledWorkflow } from '../workflow/compileMachine.js';
import type { WorkflowEvent } from '../workflow/events.js';
import type { PersistedWorkflowSnapshot } from '../workflow/snapshot.js';
import { machineDefinition } from './definition.js';
import {
  INSPECT_PROTOCOL_VERSION,
  type InspectedEvent,
  type InspectedSnapshot,
  type InspectionMessage,
  type InspectionObserver,
} from './protocol.js';
import { redactForInspection } from './redact.js';

/** A workflow as a commit left it, for a message that does not come from a plan. */
export interface InspectedWorkflow {
  id: string;
  status: WorkflowStatus;
  state: JsonObject;
  actorSnapshot: JsonObject | null | undefined;
  parentWorkflowId?: string | null | undefined;
}

/** What the sink needs from its runtime. */
export interface InspectionSinkOptions {
  observer: InspectionObserver;
  clock: Clock;
  /** The compiled machine of a definition hash, if this runtime has it. */
  compiledOf(hash: string): CompiledWorkflow | undefined;
  /** More masking after the built-in redaction (e.g. the edge agent's card masking). */
  redact?: (value: JsonObject) => JsonObject;
  /** Most workflows remembered as announced (default 10,000); past it the oldest are forgotten. */
  maxActors?: number;
}

/** The sink a runtime calls after its commits. */
export interface InspectionSink {
  /** Plans that were just written, in commit order. */
  committed(plans: readonly CommitPlan[]): void;
  /** A change committed outside step commits (cancel, pause, retry): its event and the row after. */
  changed(workflow: InspectedWorkflow, event: WorkflowEvent | InspectedEvent): void;
}

/** The event a snapshot of a new workflow carries. */
const INIT_EVENT: InspectedEvent = { type: 'xstate.init' };
/** The event of a commit that took none (a retry's fresh position, a creation folded into a step). */
const UPDATE_EVENT: InspectedEvent = { type: 'wf.updated' };

/** Create a sink that sends to `options.observer`. */
export function createInspectionSink(options: InspectionSinkOptions): InspectionSink {
  const maxActors = options.maxActors ?? 10_000;
  /** Announced workflows and the root of each one's tree, oldest first. */
  const roots = new Map<string, string>();
  const definitions = new WeakMap<CompiledWorkflow, string>();
  let seq = 0;

  const send = (message: InspectionMessage) => {
    try {
      const o = options.observer;
      if (typeof o === 'function') o(message);
      else o.next(message);
    } catch {
      // an inspector never fails the engine
    }
  };

  const clean = (value: JsonObject): JsonObject => {
    const redacted = redactForInspection(value);
    const safe = typeof redacted === 'object' && redacted !== null ? redacted : {};
    return options.redact ? options.redact(safe) : safe;
  };

  const base = (sessionId: string) => ({
    sessionId,
    rootId: roots.get(sessionId) ?? sessionId,
    createdAt: String(options.clock.now().getTime()),
    id: String(++seq),
    _version: INSPECT_PROTOCOL_VERSION,
  });

  const snapshotOf = (w: InspectedWorkflow): InspectedSnapshot => {
    const persisted = (w.actorSnapshot ?? {}) as Partial<PersistedWorkflowSnapshot>;
    return {
      status: isTerminalWorkflowStatus(w.status) ? 'done' : 'active',
      value: persisted.value ?? {},
      context: clean({
        ...((persisted.context ?? {}) as unknown as JsonObject),
        workflowStatus: w.status,
        state: w.state,
      }),
    };
  };

  const remember = (id: string, root: string) => {
    if (roots.size >= maxActors) roots.delete(roots.keys().next().value!);
    roots.set(id, root);
  };

  const announce = (w: InspectedWorkflow, parentId: string | undefined) => {
    const persisted = (w.actorSnapshot ?? {}) as Partial<PersistedWorkflowSnapshot>;
    const compiled =
      persisted.definitionHash === undefined
        ? undefined
        : options.compiledOf(persisted.definitionHash);
    let definition: string | undefined;
    if (compiled) {
      definition = definitions.get(compiled);
      if (definition === undefined) {
        definition = machineDefinition(compiled);
        definitions.set(compiled, definition);
      }
    }
    remember(w.id, parentId === undefined ? w.id : (roots.get(parentId) ?? parentId));
    send({
      type: '@xstate.actor',
      ...base(w.id),
      name: compiled?.definition.workflow_type ?? persisted.machineId ?? w.id,
      definition,
      parentId,
      snapshot: snapshotOf(w),
    });
  };

  const eventOf = (event: WorkflowEvent | InspectedEvent): InspectedEvent =>
    clean(event) as InspectedEvent;

  const emitPlan = (plan: CommitPlan) => {
    const after: InspectedWorkflow = {
      id: plan.workflowId,
      status: plan.row.status,
      state: plan.row.state,
      actorSnapshot: plan.row.actorSnapshot,
    };
    const events = (plan.events ?? []).map(eventOf);
    if (plan.created) {
      const created = plan.created;
      announce(
        {
          id: created.id,
          status: created.status,
          state: created.state,
          actorSnapshot: created.actorSnapshot,
        },
        created.parentWorkflowId ?? undefined,
      );
    } else if (!roots.has(plan.workflowId)) announce(after, undefined);
    for (const event of events)
      send({ type: '@xstate.event', ...base(plan.workflowId), event, sourceId: undefined });
    send({
      type: '@xstate.snapshot',
      ...base(plan.workflowId),
      event: events.at(-1) ?? (plan.created ? INIT_EVENT : UPDATE_EVENT),
      snapshot: snapshotOf(after),
    });
    for (const child of plan.children)
      announce(
        {
          id: child.id,
          status: child.status,
          state: child.state,
          actorSnapshot: child.actorSnapshot,
        },
        plan.workflowId,
      );
  };

  return {
    committed(plans) {
      for (const plan of plans) {
        try {
          emitPlan(plan);
        } catch {
          // a plan the sink cannot read is not inspected; the commit stands
        }
      }
    },
    changed(workflow, event) {
      try {
        if (!roots.has(workflow.id)) announce(workflow, workflow.parentWorkflowId ?? undefined);
        const e = eventOf(event);
        send({ type: '@xstate.event', ...base(workflow.id), event: e, sourceId: undefined });
        send({
          type: '@xstate.snapshot',
          ...base(workflow.id),
          event: e,
          snapshot: snapshotOf(workflow),
        });
      } catch {
        // as in `committed`
      }
    },
  };
}
