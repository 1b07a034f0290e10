import { describe, expect, it } from 'vitest';
import type { MergeConflictBehavior, MergeStrategy } from '../../runtime/definition/index.js';
import { SaffronError } from '../../runtime/errors.js';
import {
  MergeConflictError,
  mergeAll,
  mergeState,
  UnsafeMergeKeyError,
} from '../../runtime/merge/index.js';

const current = {
  amount: 100,
  risk: { score: 10, level: 'low' },
  tags: ['card'],
  same: { k: [1, 2] },
};
const updates = {
  amount: 120,
  risk: { score: 20, source: 'model' },
  tags: ['contactless'],
  same: { k: [1, 2] },
  approved: true,
};

const cases: {
  strategy: MergeStrategy;
  onConflict: MergeConflictBehavior;
  expected: Record<string, unknown> | string[];
}[] = [
  {
    strategy: 'SHALLOW',
    onConflict: 'PREFER_NEW',
    expected: { ...current, ...updates },
  },
  {
    strategy: 'SHALLOW',
    onConflict: 'PREFER_EXISTING',
    expected: { ...current, approved: true },
  },
  { strategy: 'SHALLOW', onConflict: 'RAISE_ERROR', expected: ['amount', 'risk', 'tags'] },
  {
    strategy: 'DEEP',
    onConflict: 'PREFER_NEW',
    expected: {
      amount: 120,
      risk: { score: 20, level: 'low', source: 'model' },
      tags: ['contactless'],
      same: { k: [1, 2] },
      approved: true,
    },
  },
  {
    strategy: 'DEEP',
    onConflict: 'PREFER_EXISTING',
    expected: {
      amount: 100,
      risk: { score: 10, level: 'low', source: 'model' },
      tags: ['card'],
      same: { k: [1, 2] },
      approved: true,
    },
  },
  { strategy: 'DEEP', onConflict: 'RAISE_ERROR', expected: ['amount', 'risk.score', 'tags'] },
];

describe('mergeState: every strategy × conflict behavior', () => {
  for (const { strategy, onConflict, expected } of cases) {
    it(`${strategy} + ${onConflict}`, () => {
      const run = () => mergeState(current, updates, { strategy, onConflict });
      if (Array.isArray(expected)) {
        expect(run).toThrow(MergeConflictError);
        try {
          run();
        } catch (error) {
          expect((error as MergeConflictError).paths).toEqual(expected);
        }
      } else {
        expect(run()).toStrictEqual(expected);
      }
    });
  }

  it('defaults to SHALLOW + PREFER_NEW', () => {
    expect(mergeState(current, updates)).toStrictEqual({ ...current, ...updates });
  });
});

describe('mergeState: SHALLOW', () => {
  it('replaces a nested object whole', () => {
    expect(mergeState({ a: { x: 1, y: 2 } }, { a: { x: 3 } })).toEqual({ a: { x: 3 } });
  });

  it('adds keys only in updates even with PREFER_EXISTING', () => {
    expect(mergeState({ a: 1 }, { a: 2, b: 3 }, { onConflict: 'PREFER_EXISTING' })).toEqual({
      a: 1,
      b: 3,
    });
  });
});

describe('mergeState: DEEP', () => {
  it('merges nested objects at any depth', () => {
    const result = mergeState(
      { a: { b: { c: 1, d: 2 }, e: 3 } },
      { a: { b: { c: 9, f: 4 } } },
      { strategy: 'DEEP' },
    );
    expect(result).toEqual({ a: { b: { c: 9, d: 2, f: 4 }, e: 3 } });
  });

  it('replaces arrays instead of concatenating them', () => {
    expect(mergeState({ a: [1, 2] }, { a: [3] }, { strategy: 'DEEP' })).toEqual({ a: [3] });
  });

  it('treats object against scalar as a conflict at that key', () => {
    const run = () =>
      mergeState({ a: { x: 1 } }, { a: 5 }, { strategy: 'DEEP', onConflict: 'RAISE_ERROR' });
    expect(run).toThrow(/'a'/);
    expect(mergeState({ a: { x: 1 } }, { a: 5 }, { strategy: 'DEEP' })).toEqual({ a: 5 });
    expect(
      mergeState({ a: 5 }, { a: { x: 1 } }, { strategy: 'DEEP', onConflict: 'PREFER_EXISTING' }),
    ).toEqual({ a: 5 });
  });

  it('does not treat two different objects as a conflict, only their leaves', () => {
    expect(
      mergeState(
        { risk: { score: 1 } },
        { risk: { level: 'high' } },
        { strategy: 'DEEP', onConflict: 'RAISE_ERROR' },
      ),
    ).toEqual({ risk: { score: 1, level: 'high' } });
  });
});

describe('mergeState: RAISE_ERROR', () => {
  it('names every conflicting path, quoting keys that are not identifiers', () => {
    let caught: unknown;
    try {
      mergeState(
        { limits: { 'per-day': 1, count: 2 }, risk: { score: 1 } },
        { limits: { 'per-day': 5, count: 3 }, risk: { score: 2 } },
        { strategy: 'DEEP', onConflict: 'RAISE_ERROR' },
      );
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(MergeConflictError);
    expect(caught).toBeInstanceOf(SaffronError);
    const error = caught as MergeConflictError;
    expect(error.name).toBe('MergeConflictError');
    expect(error.code).toBe('MERGE_CONFLICT');
    expect(error.retryable).toBe(false);
    expect(error.paths).toEqual(["limits['per-day']", 'limits.count', 'risk.score']);
    expect(error.details).toEqual({ paths: error.paths });
    for (const path of error.paths) expect(error.message).toContain(path);
  });

  it('does not count keys equal on both sides (deep equality) as conflicts', () => {
    const result = mergeState(
      { a: { x: [1, { y: 2 }] }, b: 'same' },
      { a: { x: [1, { y: 2 }] }, b: 'same', c: 1 },
      { onConflict: 'RAISE_ERROR' },
    );
    expect(result).toEqual({ a: { x: [1, { y: 2 }] }, b: 'same', c: 1 });
  });
});

describe('mergeState: purity', () => {
  it('never mutates its inputs and shares no objects with them', () => {
    const left = { a: { b: [1] }, c: { d: 1 } };
    const right = { a: { e: { f: 2 } }, g: [{ h: 1 }] };
    const leftCopy = structuredClone(left);
    const rightCopy = structuredClone(right);
    const result = mergeState(left, right, { strategy: 'DEEP' }) as {
      a: { b: number[]; e: { f: number } };
      c: { d: number };
      g: { h: number }[];
    };
    result.a.b.push(2);
    result.a.e.f = 3;
    result.c.d = 9;
    result.g[0]!.h = 9;
    expect(left).toEqual(leftCopy);
    expect(right).toEqual(rightCopy);
  });

  it('returns no partial result when it throws', () => {
    const state = { a: 1 };
    expect(() => mergeState(state, { a: 2, b: 3 }, { onConflict: 'RAISE_ERROR' })).toThrow();
    expect(state).toEqual({ a: 1 });
  });
});

describe('mergeState: prototype pollution', () => {
  const strategies: MergeStrategy[] = ['SHALLOW', 'DEEP'];

  for (const strategy of strategies) {
    it(`${strategy} refuses __proto__, constructor and prototype keys`, () => {
      for (const key of ['__proto__', 'constructor', 'prototype']) {
        const hostile = JSON.parse(`{"${key}": {"polluted": true}, "ok": 1}`) as Record<
          string,
          unknown
        >;
        let caught: unknown;
        try {
          mergeState({}, hostile, { strategy });
        } catch (error) {
          caught = error;
        }
        expect(caught).toBeInstanceOf(UnsafeMergeKeyError);
        expect((caught as UnsafeMergeKeyError).code).toBe('MERGE_UNSAFE_KEY');
        expect((caught as UnsafeMergeKeyError).paths).toEqual([key]);
      }
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });
  }

  it('DEEP refuses them in nested objects too, also when merging into an existing object', () => {
    const hostile = JSON.parse('{"a": {"b": {"__proto__": {"polluted": true}}}}') as Record<
      string,
      unknown
    >;
    expect(() => mergeState({ a: { b: { c: 1 } } }, hostile, { strategy: 'DEEP' })).toThrow(
      UnsafeMergeKeyError,
    );
    expect(() => mergeState({}, hostile, { strategy: 'DEEP' })).toThrow(/'a\.b\.__proto__'/);
    expect(() => mergeState({ a: 1 }, hostile, { strategy: 'DEEP' })).toThrow(UnsafeMergeKeyError);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('SHALLOW copies a nested __proto__ key as plain data without changing any prototype', () => {
    const value = JSON.parse('{"a": {"__proto__": {"polluted": true}}}') as Record<string, unknown>;
    const result = mergeState({}, value);
    const a = result.a as Record<string, unknown>;
    expect(Object.getPrototypeOf(a)).toBe(Object.prototype);
    expect(Object.hasOwn(a, '__proto__')).toBe(true);
    expect(a.polluted).toBeUndefined();
  });
});

describe('mergeAll', () => {
  it('folds updates in order, later ones winning under PREFER_NEW', () => {
    expect(mergeAll({ a: 0 }, [{ a: 1, b: 1 }, { a: 2 }, { c: 3 }])).toEqual({ a: 2, b: 1, c: 3 });
  });

  it('keeps the first value under PREFER_EXISTING', () => {
    expect(mergeAll({}, [{ a: 1 }, { a: 2, b: 2 }], { onConflict: 'PREFER_EXISTING' })).toEqual({
      a: 1,
      b: 2,
    });
  });

  it('returns a copy for an empty list', () => {
    const state = { a: { b: 1 } };
    const result = mergeAll(state, []);
    expect(result).toEqual(state);
    expect(result.a).not.toBe(state.a);
  });

  it('names the index of the first conflicting update', () => {
    let caught: unknown;
    try {
      mergeAll({}, [{ a: 1 }, { b: 1 }, { a: 2 }], { onConflict: 'RAISE_ERROR' });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(MergeConflictError);
    expect((caught as MergeConflictError).details).toEqual({ paths: ['a'], updateIndex: 2 });
  });
});
