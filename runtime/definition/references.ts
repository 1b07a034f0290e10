/**
 * Checks of the names steps use to refer to each other: unique step names, DECISION route
 * targets and `dependencies` (existence and cycles).
 *
 * A dangling target or a dependency cycle would otherwise surface only when a workflow reaches
 * that step — possibly on a device in the field, with a payment in flight.
 *
 * Scope rules: a route may jump to a step in its own list or in an enclosing one (leaving a
 * LOOP), never into a LOOP body from outside; dependencies name steps of the same list, since
 * they order steps within one list.
 */
import { ROUTE_TARGET_ALIASES } from './kinds.js';
import { formatPath } from './path.js';
import { errorIssue, warningIssue, type RawIssue } from './rawIssue.js';
import { enclosingLists, type RawStep, type RawStepTree } from './rawSteps.js';
import { didYouMean } from './suggest.js';
import { isRecord } from './values.js';

const TARGET_KEYS = ['target', ...ROUTE_TARGET_ALIASES, 'default'] as const;

function checkDuplicateNames(tree: RawStepTree, issues: RawIssue[]): void {
  const first = new Map<string, RawStep>();
  for (const step of tree.steps) {
    if (step.name === undefined) continue;
    const earlier = first.get(step.name);
    if (earlier === undefined) {
      first.set(step.name, step);
    } else {
      issues.push(
        errorIssue(
          'DUPLICATE_STEP_NAME',
          [...step.path, 'name'],
          `duplicate step name '${step.name}' (also used by the step at ${formatPath(earlier.path)})`,
        ),
      );
    }
  }
}

function checkRoutes(tree: RawStepTree, step: RawStep, issues: RawIssue[]): void {
  const routes = step.record.routes;
  if (step.type !== 'DECISION' || !Array.isArray(routes)) return;
  const scopes = new Set(enclosingLists(tree, step.list));
  const reachable = tree.steps.filter((s) => scopes.has(s.list) && s.name !== undefined);
  const reachableNames = new Set(reachable.map((s) => s.name ?? ''));
  let defaultAt: number | undefined;
  routes.forEach((route: unknown, index) => {
    if (!isRecord(route)) return;
    const routePath = [...step.path, 'routes', index];
    if (defaultAt !== undefined) {
      issues.push(
        'default' in route
          ? errorIssue(
              'DUPLICATE_DEFAULT_ROUTE',
              [...routePath, 'default'],
              `a second default route; routes[${defaultAt}] is already the default`,
            )
          : warningIssue(
              'UNREACHABLE_ROUTE',
              routePath,
              `route is never evaluated: routes[${defaultAt}] is a default route before it`,
            ),
      );
    } else if ('default' in route) {
      defaultAt = index;
    }
    for (const key of TARGET_KEYS) {
      const target = route[key];
      if (typeof target !== 'string' || reachableNames.has(target)) continue;
      const elsewhere = tree.steps.find((s) => s.name === target);
      const loop = elsewhere === undefined ? undefined : tree.lists[elsewhere.list]?.loopName;
      issues.push(
        errorIssue(
          'UNKNOWN_TARGET',
          [...routePath, key],
          elsewhere !== undefined
            ? `step '${target}' is inside the body of LOOP '${loop ?? '?'}' and cannot be a jump target from here`
            : `unknown step '${target}'${didYouMean(target, reachableNames)}`,
        ),
      );
    }
  });
}

function checkDependencies(tree: RawStepTree, issues: RawIssue[]): void {
  for (const list of tree.lists) {
    const siblings = new Map(
      list.steps.filter((s) => s.name !== undefined).map((s) => [s.name ?? '', s]),
    );
    const edges = new Map<string, { to: string; index: number }[]>();
    for (const step of list.steps) {
      const dependencies = step.record.dependencies;
      if (!Array.isArray(dependencies) || step.name === undefined) continue;
      const out: { to: string; index: number }[] = [];
      dependencies.forEach((dependency: unknown, index) => {
        if (typeof dependency !== 'string') return;
        const path = [...step.path, 'dependencies', index];
        if (siblings.has(dependency)) {
          out.push({ to: dependency, index });
        } else if (tree.steps.some((s) => s.name === dependency)) {
          issues.push(
            errorIssue(
              'UNKNOWN_DEPENDENCY',
              path,
              `step '${dependency}' is not in the same step list as '${step.name ?? ''}'`,
            ),
          );
        } else {
          issues.push(
            errorIssue(
              'UNKNOWN_DEPENDENCY',
              path,
              `unknown step '${dependency}'${didYouMean(dependency, siblings.keys())}`,
            ),
          );
        }
      });
      edges.set(step.name, out);
    }
    const before = issues.length;
    reportCycles(edges, siblings, issues);
    if (issues.length === before) reportForwardDependencies(list.steps, edges, issues);
  }
}

/**
 * Steps run in declaration order (a step's dependencies only let it run alongside the steps
 * between it and them), so a dependency must be declared before the step that names it.
 * Checked only when there is no cycle, which is the clearer report of the same mistake.
 */
function reportForwardDependencies(
  steps: readonly RawStep[],
  edges: Map<string, { to: string; index: number }[]>,
  issues: RawIssue[],
): void {
  const position = new Map(steps.map((s, i) => [s.name, i]));
  for (const step of steps) {
    if (step.name === undefined) continue;
    const at = position.get(step.name) ?? 0;
    for (const edge of edges.get(step.name) ?? []) {
      if ((position.get(edge.to) ?? 0) <= at) continue;
      issues.push(
        errorIssue(
          'DEPENDENCY_ORDER',
          [...step.path, 'dependencies', edge.index],
          `step '${step.name}' depends on '${edge.to}', which is declared after it; steps run in declaration order, so declare '${edge.to}' first`,
        ),
      );
    }
  }
}

/** Depth-first search; each cycle is reported once, at the edge that closes it. */
function reportCycles(
  edges: Map<string, { to: string; index: number }[]>,
  steps: Map<string, RawStep>,
  issues: RawIssue[],
): void {
  const state = new Map<string, 'active' | 'done'>();
  const stack: string[] = [];
  const seen = new Set<string>();
  const visit = (name: string): void => {
    state.set(name, 'active');
    stack.push(name);
    for (const edge of edges.get(name) ?? []) {
      const mark = state.get(edge.to);
      if (mark === 'active') {
        const cycle = stack.slice(stack.indexOf(edge.to));
        const key = [...cycle].sort().join('\u0000');
        if (!seen.has(key)) {
          seen.add(key);
          const step = steps.get(name);
          issues.push(
            errorIssue(
              'CYCLE',
              [...(step?.path ?? []), 'dependencies', edge.index],
              `dependency cycle: ${[...cycle, edge.to].join(' → ')}`,
            ),
          );
        }
      } else if (mark === undefined) {
        visit(edge.to);
      }
    }
    stack.pop();
    state.set(name, 'done');
  };
  for (const name of edges.keys()) if (!state.has(name)) visit(name);
}

/** Check step names, route targets and dependencies of a raw definition. */
export function checkReferences(tree: RawStepTree): RawIssue[] {
  const issues: RawIssue[] = [];
  checkDuplicateNames(tree, issues);
  for (const step of tree.steps) checkRoutes(tree, step, issues);
  checkDependencies(tree, issues);
  return issues;
}
