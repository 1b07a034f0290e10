import { describe, expect, it } from 'vitest';
import {
  compileExpression,
  evaluateExpression,
  ExpressionEvaluationError,
  ExpressionTypeError,
  formatExpression,
  isTruthy,
  parseExpression,
  type ExpressionScope,
} from '../../runtime/expression/index.js';

const scope: ExpressionScope = {
  state: {
    amount: 150,
    price: 2.5,
    name: 'Ada',
    status: 'APPROVED',
    tags: ['vip', 'eu'],
    items: [{ id: 'a', qty: 2 }, { id: 'b' }],
    customer: { tier: 'gold', address: { city: 'Lyon' } },
    empty: '',
    zero: 0,
    nothing: null,
    list: [],
    dict: {},
    'odd key': 7,
  },
  context: { loop_index: 3, loop_item: { sku: 'X1' } },
};

const run = (source: string, s: ExpressionScope = scope): unknown =>
  evaluateExpression(parseExpression(source), s);

function evaluationError(source: string): ExpressionEvaluationError {
  try {
    run(source);
  } catch (error) {
    if (error instanceof ExpressionEvaluationError) return error;
    throw error;
  }
  throw new Error(`expected an evaluation error for ${source}`);
}

describe('paths', () => {
  it.each([
    ['amount', 150],
    ['state.amount', 150],
    ['customer.address.city', 'Lyon'],
    ["customer['tier']", 'gold'],
    ['items[1].id', 'b'],
    ["state['odd key']", 7],
    ['context.loop_index', 3],
    ['context.loop_item.sku', 'X1'],
    ['tags[1]', 'eu'],
  ])('%s → %j', (source, expected) => {
    expect(run(source)).toEqual(expected);
  });

  it.each([
    'missing',
    'customer.missing.deeper',
    'items[5]',
    'items[0].qty.x',
    "tags['0']",
    'name.length',
    'customer.constructor',
    'customer.__proto__',
    'items.length',
    'context.nope',
  ])('missing path %s is null', (source) => {
    expect(run(source)).toBeNull();
  });

  it('treats an absent context as empty', () => {
    expect(run('context.loop_index', { state: {} })).toBeNull();
  });
});

describe('arithmetic', () => {
  it.each([
    ['1 + 2', 3],
    ['amount - 50', 100],
    ['price * 4', 10],
    ['7 / 2', 3.5],
    ['7 % 3', 1],
    ['-7 % 3', -1],
    ['-amount', -150],
    ['--3', 3],
    ['2 + 3 * 4', 14],
    ['(2 + 3) * 4', 20],
    ['10 - 4 - 3', 3],
    ['-2 * 3', -6],
    [`'a' + "b"`, 'ab'],
    ['name + "!"', 'Ada!'],
    ['tags + ["x"]', ['vip', 'eu', 'x']],
  ])('%s → %j', (source, expected) => {
    expect(run(source)).toEqual(expected);
  });

  it.each([
    [`'a' + 1`, 'cannot add string and number'],
    ['1 + null', 'cannot add number and null'],
    ['missing + 1', 'cannot add null and number'],
    ['tags + "x"', 'cannot add list and string'],
    ['true + 1', 'cannot add boolean and number'],
    [`'ab' * 2`, "cannot apply '*' to string and number"],
    ['amount - name', "cannot apply '-' to number and string"],
    [`-'x'`, 'cannot negate a string'],
    ['-missing', 'cannot negate a null'],
  ])('%s throws a type mismatch: %s', (source, message) => {
    const error = evaluationError(source);
    expect(error.message).toContain(message);
    expect(error).toBeInstanceOf(ExpressionTypeError);
    expect(error.code).toBe('EXPRESSION_TYPE_MISMATCH');
    expect(error.name).toBe('ExpressionTypeError');
    expect(error.retryable).toBe(false);
  });

  it.each(['amount / 0', 'amount % zero'])('%s throws division by zero', (source) => {
    const error = evaluationError(source);
    expect(error.message).toContain('division by zero');
    expect(error.code).toBe('EXPRESSION_EVALUATION');
    expect(error.name).toBe('ExpressionEvaluationError');
  });

  it('names the failing sub-expression in the message', () => {
    expect(evaluationError('amount > 1 and name + 1 == 2').message).toBe(
      'cannot add string and number in state.name + 1',
    );
  });
});

describe('comparisons', () => {
  it.each([
    ['amount == 150', true],
    ['amount != 150', false],
    ['amount > 100', true],
    ['amount >= 150', true],
    ['amount < 150', false],
    ['amount <= 149.5', false],
    [`'abc' < 'abd'`, true],
    [`'b' > 'abc'`, true],
    [`'B' < 'a'`, true],
    [`1 == '1'`, false],
    [`1 != '1'`, true],
    ['0 == false', false],
    ['1 == true', false],
    ['null == null', true],
    ['missing == null', true],
    ['missing == None', true],
    ['nothing == null', true],
    ['missing != null', false],
    ['empty == null', false],
  ])('%s → %s', (source, expected) => {
    expect(run(source)).toBe(expected);
  });

  it.each(['<', '<=', '>', '>='])('ordering %s with null is false on either side', (op) => {
    expect(run(`missing ${op} 1`)).toBe(false);
    expect(run(`1 ${op} missing`)).toBe(false);
    expect(run(`null ${op} null`)).toBe(false);
    expect(run(`nothing ${op} 'a'`)).toBe(false);
  });

  it.each([
    [`amount > '10000'`, "cannot compare number with string using '>'", 'number', 'string'],
    [`'2' < 1`, "cannot compare string with number using '<'", 'string', 'number'],
    ['amount >= true', "cannot compare number with boolean using '>='", 'number', 'boolean'],
    ['tags <= 3', "cannot compare list with number using '<='", 'list', 'number'],
    ['true > false', "cannot order two boolean values with '>'", 'boolean', 'boolean'],
    ['tags < tags', "cannot order two list values with '<'", 'list', 'list'],
    ['customer > 1', "cannot compare object with number using '>'", 'object', 'number'],
  ])('%s is a type mismatch naming both types', (source, message, left, right) => {
    const error = evaluationError(source);
    expect(error).toBeInstanceOf(ExpressionTypeError);
    expect(error.code).toBe('EXPRESSION_TYPE_MISMATCH');
    expect(error.message).toBe(`${message} in ${formatExpression(parseExpression(source))}`);
    expect(error.details).toMatchObject({ left, right });
  });

  it('a mismatch on the side not evaluated does not fail', () => {
    expect(run(`false and amount > '1'`)).toBe(false);
  });

  it('compares lists and objects structurally', () => {
    expect(run(`tags == ['vip', 'eu']`)).toBe(true);
    expect(run(`tags == ['eu', 'vip']`)).toBe(false);
    expect(run(`tags == ['vip']`)).toBe(false);
    expect(run('customer == customer')).toBe(true);
    expect(run('items[0] == items[1]')).toBe(false);
    expect(run('list == []')).toBe(true);
    expect(run('dict == list')).toBe(false);
    expect(run('customer.address == customer')).toBe(false);
    const other = {
      state: { a: { x: [1, { y: 2 }] }, b: { x: [1, { y: 2 }] }, c: { x: [1, { y: 3 }] } },
    };
    expect(run('a == b', other)).toBe(true);
    expect(run('a == c', other)).toBe(false);
    expect(run('a != c', other)).toBe(true);
  });
});

describe('membership', () => {
  it.each([
    [`'vip' in tags`, true],
    [`'us' in tags`, false],
    [`'us' not in tags`, true],
    [`status in ['APPROVED', 'SETTLED']`, true],
    [`status not in ['APPROVED', 'SETTLED']`, false],
    [`'da' in name`, true],
    [`'Da' in name`, false],
    [`'' in name`, true],
    [`'tier' in customer`, true],
    [`'gold' in customer`, false],
    [`'constructor' in customer`, false],
    [`1 in name`, false],
    [`'x' in missing`, false],
    [`'x' not in missing`, true],
    [`1 in [1.0, 2]`, true],
    [`'1' in [1, 2]`, false],
    [`['eu'] in [['eu'], ['us']]`, true],
    [`items[1] in items`, true],
    [`null in [null]`, true],
    [`missing in [null]`, true],
  ])('%s → %s', (source, expected) => {
    expect(run(source)).toBe(expected);
  });
});

describe('boolean logic', () => {
  it.each([
    ['true and false', false],
    ['true && true', true],
    ['false or true', true],
    ['false || false', false],
    ['not true', false],
    ['!false', true],
    ['not missing', true],
    ['not empty', true],
    ['not list', true],
    ['not dict', true],
    ['not zero', true],
    ['not tags', false],
    ['amount and name', true],
    ['amount and empty', false],
    ['zero or name', true],
  ])('%s → %s (always a boolean)', (source, expected) => {
    expect(run(source)).toBe(expected);
  });

  it('short-circuits: the right side is not evaluated when the left decides', () => {
    expect(run('false and 1 / 0 == 1')).toBe(false);
    expect(run(`true or name + 1 == 2`)).toBe(true);
    expect(() => run('true and 1 / 0 == 1')).toThrow(ExpressionEvaluationError);
    expect(() => run('false or 1 / 0 == 1')).toThrow(ExpressionEvaluationError);
  });
});

describe('isTruthy', () => {
  it.each([null, undefined, false, 0, -0, Number.NaN, '', [], {}])('%j is falsy', (value) => {
    expect(isTruthy(value)).toBe(false);
  });
  it.each([true, 1, -1, 'a', ' ', [0], { a: null }, 'false', '0'])('%j is truthy', (value) => {
    expect(isTruthy(value)).toBe(true);
  });
});

describe('functions', () => {
  it.each([
    ['len(name)', 3],
    ['len(tags)', 2],
    ['len(customer)', 2],
    ['len(list)', 0],
    [`len('é😀')`, 2],
    ['lower(status)', 'approved'],
    ['upper(name)', 'ADA'],
    ['abs(-4.5)', 4.5],
    ['abs(amount)', 150],
    ['min(3, 1, 2)', 1],
    ['max(3, 1, 2)', 3],
    ['min([4, 9, 7])', 4],
    ['max([4, 9, 7])', 9],
    [`min('b', 'a')`, 'a'],
    [`max(tags)`, 'vip'],
    ['max(5)', 5],
    ['round(2.5)', 3],
    ['round(-2.5)', -3],
    ['round(2.4)', 2],
    ['round(1.005, 2)', 1.01],
    ['round(2.675, 2)', 2.68],
    ['round(1234.5678, 1)', 1234.6],
    ['round(1250, -2)', 1300],
    ['round(-0.4)', 0],
    ['exists(amount)', true],
    ['exists(nothing)', true],
    ['exists(missing)', false],
    ['exists(customer.address.city)', true],
    ['exists(customer.address.zip)', false],
    ['exists(context.loop_item)', true],
    ['exists(items[3])', false],
    ['len(tags) > 1 and upper(tags[0]) == "VIP"', true],
  ])('%s → %j', (source, expected) => {
    expect(run(source)).toEqual(expected);
  });

  it('round never returns -0', () => {
    expect(Object.is(run('round(-0.4)'), 0)).toBe(true);
  });

  it.each([
    ['len(amount)', 'len() expects a string, list or object, got number'],
    ['len(missing)', 'len() expects a string, list or object, got null'],
    ['lower(1)', 'lower() expects a string, got number'],
    ['upper(tags)', 'upper() expects a string, got list'],
    [`abs('1')`, 'abs() expects a number, got string'],
    [`min(1, 'a')`, 'min() expects numbers or strings of one type, got string'],
    ['max(list)', 'max() of an empty list'],
    ['min(missing)', 'min() expects numbers or strings of one type, got null'],
    ['round(1.5, 0.5)', 'round() expects an integer number of digits'],
    [`round('1')`, 'round() expects a number, got string'],
  ])('%s throws %s', (source, message) => {
    const error = evaluationError(source);
    expect(error.message).toContain(message);
    expect(error.code).toBe('EXPRESSION_EVALUATION');
  });
});

describe('missing paths', () => {
  it('are recorded in a trace, once each, in reading order; exists() does not count', () => {
    const trace = { missingPaths: [] as string[] };
    const source =
      'amount.minor > 10000 or missing == 1 or amount.minor < 0 or exists(gone) or context.x';
    expect(evaluateExpression(parseExpression(source), scope, trace)).toBe(false);
    expect(trace.missingPaths).toEqual(['state.amount.minor', 'state.missing', 'context.x']);
  });

  it('are not recorded for the side a short circuit skips', () => {
    const trace = { missingPaths: [] as string[] };
    expect(compileExpression('amount > 1 or missing > 1')(scope, trace)).toBe(true);
    expect(trace.missingPaths).toEqual([]);
  });
});

describe('compileExpression', () => {
  it('parses once and evaluates against many scopes', () => {
    const check = compileExpression('context.loop_index < 3 and total >= 10');
    expect(check({ state: { total: 10 }, context: { loop_index: 0 } })).toBe(true);
    expect(check({ state: { total: 9 }, context: { loop_index: 0 } })).toBe(false);
    expect(check({ state: { total: 10 }, context: { loop_index: 3 } })).toBe(false);
  });

  it('reports syntax errors at compile time', () => {
    expect(() => compileExpression('a ==')).toThrow(/expected an expression at column 5/);
    // a source that failed is not remembered as anything
    expect(() => compileExpression('a ==')).toThrow(/expected an expression at column 5/);
  });

  it('compiles the same source again to the same meaning (parsed trees are shared)', () => {
    const first = compileExpression(`amount > limit and tier in ['gold', 'silver']`);
    const again = compileExpression(`amount > limit and tier in ['gold', 'silver']`);
    const scope = (amount: number, tier: string) => ({ state: { amount, limit: 50, tier } });
    expect(first(scope(60, 'gold'))).toBe(true);
    expect(again(scope(60, 'bronze'))).toBe(false);
    expect(again(scope(40, 'gold'))).toBe(false);
    expect(first(scope(51, 'silver'))).toBe(true);
    // another text is another expression, even when it differs only in a literal
    expect(compileExpression(`amount > 70`)(scope(60, 'gold'))).toBe(false);
    expect(compileExpression(`amount > 50`)(scope(60, 'gold'))).toBe(true);
  });

  it('does not mutate the scope', () => {
    const s = { state: { tags: ['a'] } };
    expect(run(`tags + ['b']`, s)).toEqual(['a', 'b']);
    expect(s.state.tags).toEqual(['a']);
  });
});
