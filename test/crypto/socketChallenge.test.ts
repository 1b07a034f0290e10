/**
 * Socket challenges come from a pool drawn from the system's random generator many at a
 * time: each is 32 bytes, and no byte of the pool is handed out twice, across draws.
 */
import { describe, expect, it } from 'vitest';
import { newSocketChallenge, signSocketProof, verifySocketProof } from '../../runtime/index.js';

describe('socket challenges', () => {
  it('are 32 random bytes, base64url, each handed out once across many draws', () => {
    const challenges = Array.from({ length: 1000 }, () => newSocketChallenge());
    for (const challenge of challenges) {
      expect(challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(challenge, 'base64url')).toHaveLength(32);
    }
    expect(new Set(challenges).size).toBe(challenges.length);
    // no 8-byte run of one challenge appears in another (a slice handed out twice, or a pool
    // reused without a fresh draw, would)
    const runs = new Set<string>();
    for (const challenge of challenges) {
      const bytes = Buffer.from(challenge, 'base64url');
      for (let at = 0; at + 8 <= bytes.length; at += 8) {
        const run = bytes.toString('hex', at, at + 8);
        expect(runs.has(run)).toBe(false);
        runs.add(run);
      }
    }
  });

  it('a proof verifies for its own challenge only', () => {
    const [mine, other] = [newSocketChallenge(), newSocketChallenge()];
    const proof = signSocketProof('secret', 'dev-1', mine);
    expect(verifySocketProof('secret', 'dev-1', mine, proof)).toBe(true);
    expect(verifySocketProof('secret', 'dev-1', other, proof)).toBe(false);
    expect(verifySocketProof('secret', 'dev-2', mine, proof)).toBe(false);
  });
});
