/**
 * Did-you-mean suggestions for misspelt keys, step kinds, enum values and step names.
 *
 * A bare "unknown key" sends the author hunting through the spec; naming the intended key
 * turns most definition errors into a one-keystroke fix. Distance is optimal string alignment
 * (Levenshtein plus adjacent transposition), compared case-insensitively, because typing
 * `fucntion` or `STANDRAD` is the common slip.
 */

/** Optimal-string-alignment edit distance between two strings. */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number): number => d[i]?.[j] ?? Number.POSITIVE_INFINITY;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, at(i - 2, j - 2) + 1);
      }
      const row = d[i];
      if (row) row[j] = best;
    }
  }
  return at(a.length, b.length);
}

/**
 * The candidate closest to `input`, or undefined when none is close enough (at most a third
 * of the candidate's length, and at least one edit allowed).
 */
export function suggest(input: string, candidates: Iterable<string>): string | undefined {
  const needle = input.toLowerCase();
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    if (candidate === input) continue;
    const distance = editDistance(needle, candidate.toLowerCase());
    const limit = Math.max(1, Math.floor(candidate.length / 3));
    if (distance <= limit && distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** `" (did you mean 'x'?)"` or `''`. */
export function didYouMean(input: string, candidates: Iterable<string>): string {
  const match = suggest(input, candidates);
  return match === undefined ? '' : ` (did you mean '${match}'?)`;
}
