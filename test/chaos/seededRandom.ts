/**
 * A small deterministic generator (mulberry32) for the chaos run's fault plan and network
 * faults, so a run's schedule can be repeated with `--seed`. Process timing is not
 * deterministic, so a repeated seed repeats what is done and when, not every outcome.
 */

/** Numbers in [0, 1) from `seed`. */
export function seededRandom(seed: number): () => number {
  let a = seed | 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
