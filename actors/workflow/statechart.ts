/**
 * The compiled machine of a workflow as a graph a UI can draw: one node per state of the
 * machine (each step, `compensating` and the four final states), one edge per transition
 * the machine declares, and what each step holds inside it (its substates, a PARALLEL
 * step's branches, a LOOP step's body). It is read off the XState machine itself, not
 * rebuilt from the definition, so the picture is the machine the engine runs.
 *
 * Machine-level transitions (a failure from any step, a cancel, an operator jump) are kept
 * apart as `from: null` edges: drawn from every step they would bury the graph.
 */
import type { StateNode } from 'xstate';
import type { StepDefinition } from '../../runtime/index.js';
import { FINAL_STATES, type CompiledWorkflow } from './compileMachine.js';

/** A node of the graph. */
export interface StatechartNode {
  /** The state key (a step's sanitized name, `compensating`, or a final state). */
  id: string;
  label: string;
  role: 'step' | 'compensating' | 'final';
  /** The step kind, for step nodes. */
  kind?: StepDefinition['type'];
  /** The step's position in the definition. */
  index?: number;
  /** The step's substates (`ready`, `waitingTasks`, `waitingHuman`, `waitingChild`). */
  substates: string[];
  /** What runs inside the step: PARALLEL branches or the LOOP body, in order. */
  inner?: { group: 'parallel' | 'loop'; steps: { name: string; kind?: string }[]; note?: string };
  /** The workflow status a final node means. */
  status?: string;
}

/** A transition of the machine. */
export interface StatechartEdge {
  /** Source state key; null for machine-level transitions (taken from any state). */
  from: string | null;
  to: string;
  event: string;
  /** Why the transition is taken, when the event alone does not say (a DECISION route). */
  label?: string;
}

/** The drawable graph of a compiled workflow. */
export interface Statechart {
  machineId: string;
  definitionHash: string;
  initial: string;
  nodes: StatechartNode[];
  edges: StatechartEdge[];
}

type AnyNode = StateNode<never, never>;

/** The transitions of `node` to top-level states, by event. */
const targetsOf = (node: AnyNode): { event: string; to: string }[] =>
  [...node.transitions.entries()].flatMap(([event, list]) =>
    list.flatMap((transition) =>
      (transition.target ?? [])
        // a target inside a step (`ready → waitingTasks`) is a substate change, not an edge
        .filter((target) => target.path.length === 1)
        .map((target) => ({ event, to: target.key })),
    ),
  );

function innerOf(step: StepDefinition): StatechartNode['inner'] {
  if (step.type === 'PARALLEL')
    return {
      group: 'parallel',
      steps: step.tasks.map((task) => ({ name: task.name })),
      ...(step.allow_partial_success ? { note: 'partial success allowed' } : {}),
    };
  if (step.type === 'LOOP')
    return {
      group: 'loop',
      steps: step.loop_body.map((inner) => ({ name: inner.name, kind: inner.type })),
      note:
        step.mode === 'WHILE'
          ? `while ${step.while_condition ?? ''} (max ${step.max_iterations})`
          : `for each ${step.item_var_name ?? 'item'} in ${step.iterate_over ?? ''} (max ${step.max_iterations})`,
    };
  return undefined;
}

/** The graph of `compiled`'s machine. */
export function describeStatechart(compiled: CompiledWorkflow): Statechart {
  const machine = compiled.machine;
  const root = machine.root as unknown as AnyNode;
  const nodes: StatechartNode[] = [];
  const edges: StatechartEdge[] = [];
  for (const [key, node] of Object.entries(root.states) as [string, AnyNode][]) {
    const at = compiled.stepAt(key);
    if (at) {
      const inner = innerOf(at.step);
      nodes.push({
        id: key,
        label: at.step.name,
        role: 'step',
        kind: at.step.type,
        index: at.index,
        substates: Object.keys(node.states),
        ...(inner ? { inner } : {}),
      });
      const routes = at.step.type === 'DECISION' ? (at.step.routes ?? []) : [];
      for (const { event, to } of targetsOf(node)) {
        const route =
          event === 'wf.step.jumped'
            ? routes.find((r) => compiled.keyOf('default' in r ? r.default : r.target) === to)
            : undefined;
        const label =
          route === undefined ? undefined : 'default' in route ? 'default' : route.condition;
        edges.push({ from: key, to, event, ...(label !== undefined ? { label } : {}) });
      }
    } else if (key in FINAL_STATES) {
      nodes.push({
        id: key,
        label: key,
        role: 'final',
        substates: [],
        status: FINAL_STATES[key as keyof typeof FINAL_STATES],
      });
    } else {
      nodes.push({ id: key, label: key, role: 'compensating', substates: [] });
      for (const { event, to } of targetsOf(node)) edges.push({ from: key, to, event });
    }
  }
  const seen = new Set<string>();
  for (const { event, to } of targetsOf(root)) {
    // the root's jump transitions reach every step: one edge per target is plenty
    const id = `${event}→${to}`;
    if (seen.has(id)) continue;
    seen.add(id);
    edges.push({ from: null, to, event });
  }
  return {
    machineId: machine.id,
    definitionHash: compiled.hash,
    initial: (machine.config as { initial?: string }).initial ?? nodes[0]?.id ?? '',
    nodes,
    edges,
  };
}
