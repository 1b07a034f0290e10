/**
 * Conditions checked against the definition's `input_schema`.
 *
 * A condition over a path the input cannot have (`state.amount.minor` when `amount` is an
 * integer) or comparing a value with a literal of another type (`state.amount_minor > '10000'`)
 * would otherwise be found only when a workflow reaches the step — the first as a route
 * decided on a missing value, the second as EXPRESSION_TYPE_MISMATCH. With a schema, both are
 * reported at load, at the condition's line.
 *
 * Only what the schema declares is checked: a path whose first key the schema does not
 * declare may be written by a step and is left alone, and so is anything below a part of the
 * schema that gives no `type`. The schema describes the input at start; a step that changes
 * a declared field's type is not seen here.
 */
import {
  parseExpression,
  type Expression,
  type PathExpression,
  type PathSegment as ExpressionSegment,
} from '../expression/index.js';
import { checkJsonSchema, type JsonSchemaType } from '../jsonSchema/index.js';
import type { PathSegment } from './path.js';
import { errorIssue, warningIssue, type RawIssue } from './rawIssue.js';
import type { RawStepTree } from './rawSteps.js';
import { isRecord } from './values.js';

const ORDERING = new Set(['<', '<=', '>', '>=']);
const NUMERIC: readonly JsonSchemaType[] = ['integer', 'number'];

/** What the schema says a path leads to. */
type Lead =
  | { kind: 'typed'; types: readonly JsonSchemaType[] }
  | { kind: 'unknown' }
  | { kind: 'impossible'; severity: 'error' | 'warning'; message: string };

const typesOf = (node: Record<string, unknown>): JsonSchemaType[] | undefined => {
  const type = node.type;
  if (typeof type === 'string') return [type as JsonSchemaType];
  if (Array.isArray(type)) return type as JsonSchemaType[];
  return undefined;
};

const pathText = (segments: readonly ExpressionSegment[]): string =>
  'state' + segments.map((s) => (typeof s === 'number' ? `[${s}]` : `.${s}`)).join('');

const describeTypes = (types: readonly JsonSchemaType[]): string =>
  types.map((t) => (/^[aeiou]/.test(t) ? `an ${t}` : `a ${t}`)).join(' or ');

/** Follow `segments` of a state path through `schema`. */
function follow(schema: Record<string, unknown>, segments: readonly ExpressionSegment[]): Lead {
  let node: unknown = schema;
  for (const [i, segment] of segments.entries()) {
    if (!isRecord(node)) return { kind: 'unknown' };
    const types = typesOf(node);
    const here = pathText(segments.slice(0, i));
    if (typeof segment === 'number') {
      if (types && !types.includes('array')) {
        return {
          kind: 'impossible',
          severity: 'error',
          message: `${here} is ${describeTypes(types)} in the input schema: it has no element [${segment}]`,
        };
      }
      node = node.items;
      continue;
    }
    const properties = isRecord(node.properties) ? node.properties : undefined;
    if (properties && Object.hasOwn(properties, segment)) {
      node = properties[segment];
      continue;
    }
    if (i === 0) return { kind: 'unknown' }; // a key a step may write
    if (types && !types.includes('object')) {
      return {
        kind: 'impossible',
        severity: 'error',
        message: `${here} is ${describeTypes(types)} in the input schema: it has no property '${segment}'`,
      };
    }
    if (node.additionalProperties === false) {
      return {
        kind: 'impossible',
        severity: 'warning',
        message: `the input schema declares no '${segment}' in ${here} and allows no other keys: ${pathText(segments.slice(0, i + 1))} is missing unless a step writes it`,
      };
    }
    node = node.additionalProperties;
  }
  if (!isRecord(node)) return { kind: 'unknown' };
  const types = typesOf(node);
  return types ? { kind: 'typed', types } : { kind: 'unknown' };
}

const literalTypes = (value: unknown): readonly JsonSchemaType[] => {
  if (typeof value === 'number') return ['number'];
  if (typeof value === 'string') return ['string'];
  if (typeof value === 'boolean') return ['boolean'];
  return ['null'];
};

const compatible = (a: readonly JsonSchemaType[], b: readonly JsonSchemaType[]): boolean =>
  a.some((t) => b.includes(t) || (NUMERIC.includes(t) && b.some((u) => NUMERIC.includes(u))));

/** Every state path of `expr`, and every comparison of a path with a literal or a path. */
function walk(
  expr: Expression,
  onPath: (path: PathExpression) => void,
  onCompare: (operator: string, left: Expression, right: Expression) => void,
): void {
  switch (expr.kind) {
    case 'path':
      onPath(expr);
      return;
    case 'exists':
      return; // asks whether the path is there: never an error
    case 'literal':
      return;
    case 'list':
      for (const item of expr.items) walk(item, onPath, onCompare);
      return;
    case 'unary':
      walk(expr.operand, onPath, onCompare);
      return;
    case 'call':
      for (const arg of expr.args) walk(arg, onPath, onCompare);
      return;
    case 'binary':
      onCompare(expr.operator, expr.left, expr.right);
      walk(expr.left, onPath, onCompare);
      walk(expr.right, onPath, onCompare);
      return;
    case 'logical':
      walk(expr.left, onPath, onCompare);
      walk(expr.right, onPath, onCompare);
      return;
  }
}

/** Issues of one condition's source against `schema`. */
function checkCondition(
  source: unknown,
  schema: Record<string, unknown>,
  path: PathSegment[],
): RawIssue[] {
  if (typeof source !== 'string') return [];
  let expr: Expression;
  try {
    expr = parseExpression(source);
  } catch {
    return []; // reported by the syntax checks
  }
  const issues: RawIssue[] = [];
  const typed = (e: Expression): { types: readonly JsonSchemaType[]; what: string } | undefined => {
    if (e.kind === 'literal')
      return { types: literalTypes(e.value), what: JSON.stringify(e.value) };
    if (e.kind !== 'path' || e.root !== 'state') return undefined;
    const lead = follow(schema, e.segments);
    return lead.kind === 'typed' ? { types: lead.types, what: pathText(e.segments) } : undefined;
  };
  walk(
    expr,
    (p) => {
      if (p.root !== 'state') return;
      const lead = follow(schema, p.segments);
      if (lead.kind !== 'impossible') return;
      const make = lead.severity === 'error' ? errorIssue : warningIssue;
      issues.push(make('CONDITION_PATH_INVALID', path, `condition '${source}': ${lead.message}`));
    },
    (operator, left, right) => {
      const ordering = ORDERING.has(operator);
      if (!ordering && operator !== '==' && operator !== '!=') return;
      const a = typed(left);
      const b = typed(right);
      if (!a || !b || (left.kind === 'literal' && right.kind === 'literal')) return;
      if (compatible(a.types, b.types)) return;
      const clash = `${a.what} is ${describeTypes(a.types)} and ${b.what} is ${describeTypes(b.types)}`;
      issues.push(
        ordering
          ? errorIssue(
              'CONDITION_TYPE_MISMATCH',
              path,
              `condition '${source}': ${clash}; ordering values of different types fails the step (EXPRESSION_TYPE_MISMATCH)`,
            )
          : warningIssue(
              'CONDITION_TYPE_MISMATCH',
              path,
              `condition '${source}': ${clash}, so '${operator}' is always ${operator === '==' ? 'false' : 'true'}`,
            ),
      );
    },
  );
  return issues;
}

/**
 * Problems of `input_schema` itself, then of every DECISION condition and LOOP
 * `while_condition` against it. Nothing when the definition declares no schema.
 */
export function checkInputSchema(definition: unknown, tree: RawStepTree): RawIssue[] {
  if (!isRecord(definition) || definition.input_schema === undefined) return [];
  const schema = definition.input_schema;
  const schemaIssues = checkJsonSchema(schema, 'input_schema');
  if (schemaIssues.length > 0 || !isRecord(schema)) {
    return schemaIssues.map((issue) =>
      errorIssue('INPUT_SCHEMA_INVALID', ['input_schema'], `${issue.path}: ${issue.message}`),
    );
  }
  return tree.steps.flatMap((step) => {
    if (step.type === 'DECISION' && Array.isArray(step.record.routes)) {
      return step.record.routes.flatMap((route: unknown, index) =>
        isRecord(route)
          ? checkCondition(route.condition, schema, [...step.path, 'routes', index, 'condition'])
          : [],
      );
    }
    if (step.type === 'LOOP') {
      return checkCondition(step.record.while_condition, schema, [...step.path, 'while_condition']);
    }
    return [];
  });
}
