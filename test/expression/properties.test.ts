import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BINARY_OPERATORS,
  evaluateExpression,
  ExpressionEvaluationError,
  ExpressionTypeError,
  formatExpression,
  parseExpression,
  type Expression,
  type PathExpression,
} from '../../runtime/expression/index.js';

type Arithmetic = number | { op: '+' | '-' | '*' | '/' | '%'; left: Arithmetic; right: Arithmetic };

const arithmetic = fc.letrec<{ node: Arithmetic }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.integer({ min: -1000, max: 1000 }),
    fc.record({
      op: fc.constantFrom('+', '-', '*', '/', '%'),
      left: tie('node'),
      right: tie('node'),
    }),
  ),
})).node;

/** Reference semantics: plain JavaScript, except that dividing by zero throws. */
function jsValue(node: Arithmetic): number {
  if (typeof node === 'number') return node;
  const left = jsValue(node.left);
  const right = jsValue(node.right);
  if ((node.op === '/' || node.op === '%') && right === 0) throw new Error('division by zero');
  switch (node.op) {
    case '+':
      return left + right;
    case '-':
      return left - right;
    case '*':
      return left * right;
    case '/':
      return left / right;
    case '%':
      return left % right;
  }
}

/** Source text with every operation parenthesised and negative numbers as unary minus. */
function jsSource(node: Arithmetic): string {
  if (typeof node === 'number') return String(node);
  return `(${jsSource(node.left)} ${node.op} ${jsSource(node.right)})`;
}

function outcome(compute: () => unknown): unknown {
  try {
    return { value: compute() };
  } catch (error) {
    return { error: error instanceof ExpressionEvaluationError ? 'evaluation' : String(error) };
  }
}

describe('property: arithmetic agrees with JavaScript', () => {
  it('for random integer expressions', () => {
    fc.assert(
      fc.property(arithmetic, (node) => {
        const ours = outcome(() =>
          evaluateExpression(parseExpression(jsSource(node)), { state: {} }),
        );
        const js = outcome(() => jsValue(node));
        const expected =
          typeof js === 'object' && js !== null && 'error' in js ? { error: 'evaluation' } : js;
        expect(ours).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });

  it('for integers read from state', () => {
    fc.assert(
      fc.property(
        fc.integer(),
        fc.integer(),
        fc.constantFrom('+', '-', '*', '/', '%'),
        (a, b, op) => {
          const source = `a ${op} b`;
          const scope = { state: { a, b } };
          if ((op === '/' || op === '%') && b === 0) {
            expect(() => evaluateExpression(parseExpression(source), scope)).toThrow(
              ExpressionEvaluationError,
            );
          } else {
            const js = jsValue({ op, left: a, right: b });
            expect(evaluateExpression(parseExpression(source), scope)).toBe(js);
          }
        },
      ),
    );
  });
});

const segment = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.constantFrom('a', 'in', 'not', 'True'),
  fc.nat(50),
);
const path: fc.Arbitrary<PathExpression> = fc.record({
  kind: fc.constant('path' as const),
  root: fc.constantFrom('state' as const, 'context' as const),
  segments: fc.array(segment, { maxLength: 3 }),
});
const literal = fc.record({
  kind: fc.constant('literal' as const),
  value: fc.oneof(
    fc.double({ min: 0, noNaN: true, noDefaultInfinity: true }).filter((n) => !Object.is(n, -0)),
    fc.nat(),
    fc.string({ unit: 'binary', maxLength: 8 }),
    fc.boolean(),
    fc.constant(null),
  ),
});

const randomTree = fc.letrec<{ expr: Expression }>((tie) => ({
  expr: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    literal,
    path,
    fc.record({ kind: fc.constant('exists' as const), path }),
    fc.record({
      kind: fc.constant('unary' as const),
      operator: fc.constantFrom('not' as const, '-' as const),
      operand: tie('expr'),
    }),
    fc.record({
      kind: fc.constant('binary' as const),
      operator: fc.constantFrom(...BINARY_OPERATORS),
      left: tie('expr'),
      right: tie('expr'),
    }),
    fc.record({
      kind: fc.constant('logical' as const),
      operator: fc.constantFrom('and' as const, 'or' as const),
      left: tie('expr'),
      right: tie('expr'),
    }),
    fc.record({
      kind: fc.constant('list' as const),
      items: fc.array(tie('expr'), { maxLength: 3 }),
    }),
    fc.oneof(
      fc.record({
        kind: fc.constant('call' as const),
        name: fc.constantFrom('len' as const, 'lower' as const, 'upper' as const, 'abs' as const),
        args: fc.tuple(tie('expr')),
      }),
      fc.record({
        kind: fc.constant('call' as const),
        name: fc.constantFrom('min' as const, 'max' as const),
        args: fc.array(tie('expr'), { minLength: 1, maxLength: 3 }),
      }),
      fc.record({
        kind: fc.constant('call' as const),
        name: fc.constant('round' as const),
        args: fc.array(tie('expr'), { minLength: 1, maxLength: 2 }),
      }),
    ),
  ),
})).expr;

describe('property: formatting round-trips', () => {
  it('parseExpression(formatExpression(ast)) deep-equals ast', () => {
    fc.assert(
      fc.property(randomTree, (tree) => {
        const text = formatExpression(tree);
        expect(parseExpression(text)).toEqual(tree);
        expect(formatExpression(parseExpression(text))).toBe(text);
      }),
      { numRuns: 1000 },
    );
  });
});

const key = fc.constantFrom('a', 'b', 'c');
const jsonState = fc.dictionary(key, fc.jsonValue({ maxDepth: 3 }));
const statePath: fc.Arbitrary<Expression> = fc.record({
  kind: fc.constant('path' as const),
  root: fc.constantFrom('state' as const, 'context' as const),
  segments: fc.array(fc.oneof(key, fc.nat(3)), { minLength: 1, maxLength: 3 }),
});
const jsonLiteral: fc.Arbitrary<Expression> = fc.record({
  kind: fc.constant('literal' as const),
  value: fc.oneof(
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer(),
    fc.string({ maxLength: 4 }),
    fc.boolean(),
    fc.constant(null),
  ),
});
const COMPARISONS = ['==', '!=', '<', '<=', '>', '>=', 'in', 'not in'] as const;

const booleanTree = fc.letrec<{ expr: Expression; leaf: Expression }>((tie) => ({
  leaf: fc.oneof(
    statePath,
    jsonLiteral,
    fc.record({
      kind: fc.constant('exists' as const),
      path: statePath as fc.Arbitrary<PathExpression>,
    }),
  ),
  expr: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({
      kind: fc.constant('binary' as const),
      operator: fc.constantFrom(...COMPARISONS),
      left: tie('leaf'),
      right: tie('leaf'),
    }),
    fc.record({
      kind: fc.constant('logical' as const),
      operator: fc.constantFrom('and' as const, 'or' as const),
      left: tie('expr'),
      right: fc.oneof(tie('expr'), tie('leaf')),
    }),
    fc.record({
      kind: fc.constant('unary' as const),
      operator: fc.constant('not' as const),
      operand: fc.oneof(tie('expr'), tie('leaf')),
    }),
  ),
})).expr;

/** A boolean, or the operator of the ordering across types that failed. */
function comparisonOutcome(compute: () => unknown): unknown {
  try {
    const value = compute();
    expect(typeof value).toBe('boolean');
    return value;
  } catch (error) {
    if (!(error instanceof ExpressionTypeError)) throw error;
    expect(['<', '<=', '>', '>=']).toContain(error.operands.operator);
    expect(error.operands.left).not.toBe('null');
    expect(error.operands.right).not.toBe('null');
    return { mismatch: error.operands };
  }
}

describe('property: comparisons and logic fail only on an ordering across types', () => {
  it('evaluate to a boolean for any JSON state, or to a type mismatch of < <= > >=', () => {
    fc.assert(
      fc.property(booleanTree, jsonState, jsonState, (tree, state, context) => {
        const result = comparisonOutcome(() => evaluateExpression(tree, { state, context }));
        expect(
          comparisonOutcome(() =>
            evaluateExpression(parseExpression(formatExpression(tree)), { state, context }),
          ),
        ).toEqual(result);
      }),
      { numRuns: 1000 },
    );
  });

  it('paths through a missing key evaluate to null', () => {
    fc.assert(
      fc.property(
        jsonState,
        fc.array(fc.oneof(key, fc.nat(3)), { maxLength: 3 }),
        (state, rest) => {
          const tree: Expression = { kind: 'path', root: 'state', segments: ['zz', ...rest] };
          expect(evaluateExpression(tree, { state: { ...state, y: state } })).toBeNull();
        },
      ),
    );
  });
});
