/**
 * The local API's bearer check on its own: the token's digest is kept between requests, so
 * these cases check that what is kept answers only for the token it was made from — two
 * agents in one process, each with its own token, are told apart in any order.
 */
import { describe, expect, it } from 'vitest';
import { bearerMatches } from '../../edge/index.js';

const first = 'first-token-0123456789abcdef';
const second = 'second-token-0123456789abcdef';

describe('bearerMatches', () => {
  it('accepts its token and refuses another, a missing one and a malformed header', () => {
    expect(bearerMatches(first, `Bearer ${first}`)).toBe(true);
    expect(bearerMatches(first, `bearer  ${first} `)).toBe(true);
    expect(bearerMatches(first, `Bearer ${second}`)).toBe(false);
    expect(bearerMatches(first, `Bearer ${first}x`)).toBe(false);
    expect(bearerMatches(first, 'Bearer ')).toBe(false);
    expect(bearerMatches(first, first)).toBe(false);
    expect(bearerMatches(first, undefined)).toBe(false);
  });

  it('answers for the token it is given when tokens alternate', () => {
    for (let i = 0; i < 3; i++) {
      expect(bearerMatches(first, `Bearer ${first}`)).toBe(true);
      expect(bearerMatches(second, `Bearer ${first}`)).toBe(false);
      expect(bearerMatches(second, `Bearer ${second}`)).toBe(true);
      expect(bearerMatches(first, `Bearer ${second}`)).toBe(false);
    }
  });

  it('refuses everything for an empty token', () => {
    expect(bearerMatches('', 'Bearer ')).toBe(false);
    expect(bearerMatches('', undefined)).toBe(false);
  });
});
