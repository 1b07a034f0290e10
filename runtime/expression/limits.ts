/**
 * Size limits that keep hostile definitions from exhausting the stack. The parser recurses
 * for parentheses, prefix operators and call arguments ({@link MAX_NESTING}); evaluation and
 * formatting recurse over the tree, where a flat chain `a + b + c ...` adds one level per
 * operator ({@link MAX_TREE_DEPTH}). Both are reported as syntax errors with a column.
 */
import type { Expression } from './ast.js';
import type { TokenCursor } from './cursor.js';

/** Longest accepted expression text, in UTF-16 code units. */
export const MAX_SOURCE_LENGTH = 4096;
/** Deepest accepted nesting of parentheses, prefix operators, lists and calls. */
export const MAX_NESTING = 64;
/** Deepest accepted syntax tree. */
export const MAX_TREE_DEPTH = 256;

function childrenOf(expr: Expression): readonly Expression[] {
  switch (expr.kind) {
    case 'unary':
      return [expr.operand];
    case 'binary':
    case 'logical':
      return [expr.left, expr.right];
    case 'call':
      return expr.args;
    case 'list':
      return expr.items;
    case 'exists':
      return [expr.path];
    default:
      return [];
  }
}

/** Tracks nesting and tree depth while one source text is parsed. */
export class DepthGuard {
  private nesting = 0;
  private readonly depths = new WeakMap<Expression, number>();

  constructor(private readonly cursor: TokenCursor) {}

  /** Run `parse` one nesting level deeper, rejecting more than {@link MAX_NESTING} levels. */
  nested<T>(column: number, parse: () => T): T {
    if (this.nesting >= MAX_NESTING) {
      throw this.cursor.error(`expression nests more than ${MAX_NESTING} levels deep`, column);
    }
    this.nesting += 1;
    try {
      return parse();
    } finally {
      this.nesting -= 1;
    }
  }

  /** Record the depth of a new node, rejecting trees deeper than {@link MAX_TREE_DEPTH}. */
  node<T extends Expression>(expr: T, column: number): T {
    const depths = childrenOf(expr).map((child) => this.depths.get(child) ?? 1);
    const depth = 1 + Math.max(0, ...depths);
    if (depth > MAX_TREE_DEPTH) {
      throw this.cursor.error(`expression is more than ${MAX_TREE_DEPTH} levels deep`, column);
    }
    this.depths.set(expr, depth);
    return expr;
  }
}
