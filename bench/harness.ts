/**
 * Benchmark plumbing: every benchmark measures its baseline in the same run and reports the
 * ratio. Results go to stdout as one JSON object with `--json` (progress to stderr), else as
 * a readable table.
 */

/** What a benchmark returns. */
export interface BenchResult {
  bench: string;
  metrics: Record<string, number | null>;
  baselines: Record<string, number | null>;
  ratios: Record<string, number | null>;
  /** Conditions worth knowing when reading the numbers (dialect versions, skipped parts). */
  notes: string[];
}

/** Options every benchmark receives. */
export interface BenchOptions {
  /** Scale factor for iteration counts (`--scale 0.1` for a smoke run). */
  scale: number;
  /** Benchmark-specific `--FLAG VALUE` pairs from the command line, by flag name without dashes. */
  flags: Readonly<Record<string, string>>;
  progress: (message: string) => void;
}

/** Median of numbers (0 for none). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The figures of a result, or of one round of it. */
export type BenchFigures = Pick<BenchResult, 'metrics' | 'baselines' | 'ratios'>;

/**
 * Each figure's median over the `rounds` that have it, into `into` (null where none has it):
 * a ratio is then the median of the rounds' own ratios, not a ratio of medians.
 */
export function medians(rounds: readonly BenchFigures[], into: BenchFigures): void {
  for (const part of ['metrics', 'baselines', 'ratios'] as const) {
    const keys = new Set(rounds.flatMap((r) => Object.keys(r[part])));
    for (const key of keys) {
      const values = rounds
        .map((r) => r[part][key])
        .filter((v): v is number => typeof v === 'number');
      into[part][key] = values.length > 0 ? round(median(values)) : null;
    }
  }
}

/** The `p`th percentile (0–100) of ascending `sorted` values, nearest rank (0 for none). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Operations per second of running `op` `count` times one after another. */
export async function rate(count: number, op: (i: number) => unknown): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < count; i++) await op(i);
  const seconds = (performance.now() - started) / 1000;
  return count / seconds;
}

/** Round to 3 significant decimals for printing. */
export function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

/** Where forked benchmark processes write V8 CPU profiles (`BENCH_CPU_PROF_DIR`), if set. */
export const cpuProfileDir = (): string | undefined => process.env.BENCH_CPU_PROF_DIR;
/** `node` options for a forked process: a CPU profile into {@link cpuProfileDir}, if set. */
export const cpuProfileArgs = (): string[] => {
  const dir = cpuProfileDir();
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [];
};
/** How long a profiled process gets to write its profile before it is killed. */
export const PROFILE_EXIT_MS = 15_000;
