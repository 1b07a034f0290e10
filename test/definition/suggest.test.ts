import { describe, expect, it } from 'vitest';
import { editDistance, suggest } from '../../runtime/definition/suggest.js';
import { STEP_KINDS } from '../../runtime/definition/index.js';

describe('suggest', () => {
  it('counts a transposition as one edit', () => {
    expect(editDistance('fucntion', 'function')).toBe(1);
    expect(editDistance('abc', 'abc')).toBe(0);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });

  it('suggests close matches, case-insensitively', () => {
    expect(suggest('STANDRAD', STEP_KINDS)).toBe('STANDARD');
    expect(suggest('standard', STEP_KINDS)).toBe('STANDARD');
    expect(suggest('human_in_the_loop', STEP_KINDS)).toBe('HUMAN_IN_LOOP');
    expect(suggest('aprove', ['approve', 'reject'])).toBe('approve');
  });

  it('does not suggest distant names', () => {
    expect(suggest('banana', STEP_KINDS)).toBeUndefined();
    expect(suggest('xyz', ['abc'])).toBeUndefined();
  });
});
