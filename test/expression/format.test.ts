import { describe, expect, it } from 'vitest';
import { formatExpression, parseExpression } from '../../runtime/expression/index.js';

const canonical = (source: string): string => formatExpression(parseExpression(source));

describe('formatExpression', () => {
  it.each([
    ['a.b', 'state.a.b'],
    ['a && b || !c', 'state.a and state.b or not state.c'],
    ['(a + b) * c', '(state.a + state.b) * state.c'],
    ['a + (b * c)', 'state.a + state.b * state.c'],
    ['a - (b - c)', 'state.a - (state.b - state.c)'],
    ['(a - b) - c', 'state.a - state.b - state.c'],
    ['-(a + 1)', '-(state.a + 1)'],
    ['(not a) == b', '(not state.a) == state.b'],
    ['not (a == b)', 'not state.a == state.b'],
    ['(a < b) == c', '(state.a < state.b) == state.c'],
    ['a == (b < c)', 'state.a == (state.b < state.c)'],
    ['(a or b) and c', '(state.a or state.b) and state.c'],
    ['a or (b or c)', 'state.a or (state.b or state.c)'],
    [`"it's"`, `'it\\'s'`],
    [`'tab\\there'`, `'tab\\there'`],
    [`a['x y'][0].z`, `state.a['x y'][0].z`],
    ['True != None', 'true != null'],
    ['x not in [1, "a"]', "state.x not in [1, 'a']"],
    ['exists( context.item )', 'exists(context.item)'],
    ['max( 1,2 , 3)', 'max(1, 2, 3)'],
    ['1.5e3', '1500'],
  ])('%s → %s', (source, expected) => {
    expect(canonical(source)).toBe(expected);
  });

  it('round-trips to a structurally equal tree', () => {
    for (const source of [
      'a - (b - c) * -d % 2',
      'not not a or b and (c or d)',
      `len(items) > 0 and items[0]['k'] == "v\\u0001"`,
      'round(-x, 2) <= abs(y) + min([1, 2])',
    ]) {
      const tree = parseExpression(source);
      expect(parseExpression(formatExpression(tree))).toEqual(tree);
    }
  });
});
