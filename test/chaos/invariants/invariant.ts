/**
 * One checked invariant of the chaos run: whether it holds, the figures it was computed from
 * (printed in the summary table and kept in the JSON), and a few examples of each violation
 * so a failing run says what to look at.
 */

/** The outcome of one invariant. */
export interface InvariantResult {
  name: string;
  ok: boolean;
  figures: Record<string, number | string>;
  /** Up to a few examples per kind of violation. */
  violations: string[];
}

/** Collects violations, keeping at most `perKind` examples of each kind (and the count). */
export class Violations {
  private readonly kinds = new Map<string, { count: number; examples: string[] }>();

  constructor(private readonly perKind = 5) {}

  /** Record one violation of `kind`. */
  add(kind: string, example: string): void {
    const entry = this.kinds.get(kind) ?? { count: 0, examples: [] };
    entry.count++;
    if (entry.examples.length < this.perKind) entry.examples.push(example);
    this.kinds.set(kind, entry);
  }

  /** Violations of `kind` so far. */
  count(kind: string): number {
    return this.kinds.get(kind)?.count ?? 0;
  }

  get empty(): boolean {
    return this.kinds.size === 0;
  }

  /** One line per kind: `kind ×count: examples`. */
  lines(): string[] {
    return [...this.kinds].map(
      ([kind, e]) =>
        `${kind} ×${e.count}: ${e.examples.join(', ')}${e.count > e.examples.length ? ', …' : ''}`,
    );
  }
}

/** An invariant result from its figures and violations. */
export function invariant(
  name: string,
  figures: Record<string, number | string>,
  violations: Violations,
): InvariantResult {
  return { name, ok: violations.empty, figures, violations: violations.lines() };
}
