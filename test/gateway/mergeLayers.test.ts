/**
 * Configuration layers merge as RFC 7386 JSON Merge Patch: the RFC's own examples, and
 * properties over generated JSON (idempotence, the empty patch, inputs never modified).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mergeLayers, mergePatch } from '../../gateway/config/mergeLayers.js';

const object = fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 3 }), {
  maxKeys: 6,
});

describe('mergePatch', () => {
  it('matches the examples of RFC 7386 appendix A', () => {
    const cases: [unknown, unknown, unknown][] = [
      [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
      [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
      [{ a: 'b' }, { a: null }, {}],
      [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
      [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
      [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
      [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
      [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
      [
        ['a', 'b'],
        ['c', 'd'],
        ['c', 'd'],
      ],
      [{ a: 'b' }, ['c'], ['c']],
      [{ a: 'foo' }, null, null],
      [{ a: 'foo' }, 'bar', 'bar'],
      [{ e: null }, { a: 1 }, { e: null, a: 1 }],
      [[1, 2], { a: 'b', c: null }, { a: 'b' }],
      [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
    ];
    for (const [target, patch, result] of cases) expect(mergePatch(target, patch)).toEqual(result);
  });

  it('is idempotent, keeps a target under the empty patch, and modifies no input (property)', () => {
    fc.assert(
      fc.property(object, object, (target, patch) => {
        const before = structuredClone([target, patch]);
        const once = mergePatch(target, patch);
        expect(mergePatch(once, patch)).toEqual(once);
        expect(mergePatch(target, {})).toEqual(target);
        expect([target, patch]).toEqual(before);
      }),
    );
  });

  it('keeps a `__proto__` key as data', () => {
    const patch = JSON.parse('{"__proto__": {"polluted": true}}') as Record<string, unknown>;
    const merged = mergeLayers([{ a: 1 }, patch]) as Record<string, unknown>;
    expect(Object.hasOwn(merged, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
  });

  it('applies layers least specific first', () => {
    expect(mergeLayers([{ a: 1, b: { c: 1 } }, { b: { d: 2 } }, { a: 3, b: { c: null } }])).toEqual(
      {
        a: 3,
        b: { d: 2 },
      },
    );
  });
});
