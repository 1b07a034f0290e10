import { describe, expect, it } from 'vitest';
import {
  ExpressionSyntaxError,
  MAX_NESTING,
  MAX_SOURCE_LENGTH,
  parseExpression,
  type Expression,
} from '../../runtime/expression/index.js';

const lit = (value: number | string | boolean | null): Expression => ({ kind: 'literal', value });
const state = (...segments: (string | number)[]): Expression => ({
  kind: 'path',
  root: 'state',
  segments,
});

function syntaxError(source: string): ExpressionSyntaxError {
  try {
    parseExpression(source);
  } catch (error) {
    if (error instanceof ExpressionSyntaxError) return error;
    throw error;
  }
  throw new Error(`expected a syntax error for ${source}`);
}

describe('parseExpression: literals and paths', () => {
  it('reads numbers, strings with escapes and keyword literals', () => {
    expect(parseExpression('42')).toEqual(lit(42));
    expect(parseExpression('2.5e3')).toEqual(lit(2500));
    expect(parseExpression(`'it\\'s\\n'`)).toEqual(lit("it's\n"));
    expect(parseExpression(`"say \\"hi\\" \\u00e9"`)).toEqual(lit('say "hi" é'));
    expect(parseExpression('true')).toEqual(lit(true));
    expect(parseExpression('False')).toEqual(lit(false));
    expect(parseExpression('None')).toEqual(lit(null));
    expect(parseExpression('null')).toEqual(lit(null));
  });

  it('reads state, bare and context paths with indexes and quoted keys', () => {
    expect(parseExpression('state.a.b')).toEqual(state('a', 'b'));
    expect(parseExpression('a.b')).toEqual(state('a', 'b'));
    expect(parseExpression(`a[0]['k']["x y"]`)).toEqual(state('a', 0, 'k', 'x y'));
    expect(parseExpression('state')).toEqual(state());
    expect(parseExpression('context.loop_index')).toEqual({
      kind: 'path',
      root: 'context',
      segments: ['loop_index'],
    });
    expect(parseExpression('state.in.not')).toEqual(state('in', 'not'));
  });

  it('reads list literals', () => {
    expect(parseExpression(`['A', 1]`)).toEqual({ kind: 'list', items: [lit('A'), lit(1)] });
    expect(parseExpression('[]')).toEqual({ kind: 'list', items: [] });
  });

  it('treats exists() specially: it takes the path', () => {
    expect(parseExpression('exists(a.b)')).toEqual({
      kind: 'exists',
      path: state('a', 'b'),
    });
  });
});

describe('parseExpression: precedence', () => {
  const shape = (source: string): unknown => strip(parseExpression(source));
  // Compact form for readable assertions: [operator, left, right] or leaf text.
  function strip(expr: Expression): unknown {
    switch (expr.kind) {
      case 'binary':
      case 'logical':
        return [expr.operator, strip(expr.left), strip(expr.right)];
      case 'unary':
        return [expr.operator, strip(expr.operand)];
      case 'path':
        return expr.segments.join('.');
      case 'literal':
        return expr.value;
      default:
        return expr.kind;
    }
  }

  it('binds * tighter than + and + tighter than comparisons', () => {
    expect(shape('a + b * c == d')).toEqual(['==', ['+', 'a', ['*', 'b', 'c']], 'd']);
    expect(shape('a - b - c')).toEqual(['-', ['-', 'a', 'b'], 'c']);
    expect(shape('a / b % c')).toEqual(['%', ['/', 'a', 'b'], 'c']);
  });

  it('binds unary minus tighter than *', () => {
    expect(shape('-a * b')).toEqual(['*', ['-', 'a'], 'b']);
    expect(shape('a - -b')).toEqual(['-', 'a', ['-', 'b']]);
  });

  it('orders or < and < not < comparison, like Python', () => {
    expect(shape('a or b and c')).toEqual(['or', 'a', ['and', 'b', 'c']]);
    expect(shape('not a == b')).toEqual(['not', ['==', 'a', 'b']]);
    expect(shape('!a == b')).toEqual(['not', ['==', 'a', 'b']]);
    expect(shape('not a and b')).toEqual(['and', ['not', 'a'], 'b']);
    expect(shape('a && b || c')).toEqual(['or', ['and', 'a', 'b'], 'c']);
  });

  it('parses in and not in at comparison level', () => {
    expect(shape('a + 1 in b')).toEqual(['in', ['+', 'a', 1], 'b']);
    expect(shape('a not in b or c')).toEqual(['or', ['not in', 'a', 'b'], 'c']);
  });

  it('honours parentheses', () => {
    expect(shape('(a + b) * c')).toEqual(['*', ['+', 'a', 'b'], 'c']);
    expect(shape('(a or b) and c')).toEqual(['and', ['or', 'a', 'b'], 'c']);
  });
});

describe('parseExpression: errors carry the column and the source', () => {
  it.each([
    ['(a + 1', "expected ')' at column 7", 7],
    ['state.a.b == (1 + 2', "expected ')' at column 20", 20],
    ['a ==', 'expected an expression at column 5', 5],
    ['a b', 'expected an operator or end of expression at column 3', 3],
    ['a.', "expected a name after '.' at column 3", 3],
    ['a[-1]', 'expected a non-negative integer index or a quoted key at column 3', 3],
    ['a[0', "expected ']' at column 4", 4],
    ["'abc", 'unterminated string starting at column 1', 1],
    ["'\\q'", "unknown escape '\\q' at column 2", 2],
    ['a = 1', "unexpected character '=' (use '==' to compare) at column 3", 3],
    ['amount => 10', "unexpected '=>' (did you mean '>='?) at column 8", 8],
    ['amount =< 10', "unexpected '=<' (did you mean '<='?) at column 8", 8],
    ['a @ b', "unexpected character '@' at column 3", 3],
    ['1 < a < 3', "comparisons cannot be chained (use 'and') at column 7", 7],
    ['x and', 'expected an expression at column 6', 6],
    ['', 'expected an expression at column 1', 1],
  ])('%s', (source, message, column) => {
    const error = syntaxError(source);
    expect(error.message).toBe(message);
    expect(error.column).toBe(column);
    expect(error.source).toBe(source);
    expect(error.code).toBe('EXPRESSION_SYNTAX');
    expect(error.name).toBe('ExpressionSyntaxError');
  });

  it('rejects unknown functions at parse time', () => {
    const error = syntaxError('1 + foo(2)');
    expect(error.message).toBe("unknown function 'foo' at column 5");
  });

  it('checks function arity at parse time', () => {
    expect(syntaxError('len(a, b)').message).toBe('len() takes 1 argument, got 2 at column 1');
    expect(syntaxError('round()').message).toBe(
      'round() takes 1 to 2 arguments, got 0 at column 1',
    );
    expect(syntaxError('max()').message).toBe('max() takes at least 1 argument, got 0 at column 1');
  });

  it('requires a path inside exists()', () => {
    expect(syntaxError('exists(1)').message).toBe('exists() expects a path at column 1');
    expect(syntaxError('x and exists(a + 1)').column).toBe(7);
  });

  it('uses a function name without parentheses as a path', () => {
    expect(parseExpression('len')).toEqual(state('len'));
  });
});

describe('parseExpression: limits', () => {
  it('rejects sources longer than the limit', () => {
    const error = syntaxError('1'.repeat(MAX_SOURCE_LENGTH + 1));
    expect(error.column).toBe(MAX_SOURCE_LENGTH + 1);
    expect(() => parseExpression(' '.repeat(MAX_SOURCE_LENGTH - 1) + '1')).not.toThrow();
  });

  it('rejects parentheses nested deeper than the limit without overflowing the stack', () => {
    const ok = '('.repeat(MAX_NESTING) + '1' + ')'.repeat(MAX_NESTING);
    expect(parseExpression(ok)).toEqual(lit(1));
    const deep = '('.repeat(MAX_NESTING + 1) + '1' + ')'.repeat(MAX_NESTING + 1);
    expect(syntaxError(deep).message).toMatch(/nests more than 64 levels deep at column 65$/);
    expect(syntaxError('('.repeat(2000) + '1').code).toBe('EXPRESSION_SYNTAX');
  });

  it('rejects long prefix chains and long operator chains', () => {
    expect(syntaxError('not '.repeat(200) + 'a').code).toBe('EXPRESSION_SYNTAX');
    expect(syntaxError('-'.repeat(200) + '1').code).toBe('EXPRESSION_SYNTAX');
    expect(syntaxError(Array(1000).fill('a').join(' + ')).message).toMatch(/levels deep/);
    expect(() => parseExpression(Array(100).fill('a').join(' + '))).not.toThrow();
  });
});
