/**
 * Command-line settings of `npm run bench -- system`. Defaults are sized for a shared
 * two-core machine; `--scale` multiplies the counts, and each count has its own flag.
 */
import type { BenchOptions } from '../harness.js';
import { FLOW_SYSTEMS, type FlowSystem } from './workflows.js';

/** The parts of the benchmark, in the order they run. */
export const PARTS = ['workflows', 'saf', 'storm'] as const;
/** One of {@link PARTS}. */
export type Part = (typeof PARTS)[number];

/** Everything a run is configured by. */
export interface SystemSettings {
  parts: Part[];
  systems: FlowSystem[];
  /** Workflows per burst. */
  workflows: number;
  /** Worker process counts to measure. */
  workers: number[];
  concurrency: number;
  parallel: number;
  warmup: number;
  pacedCount: number;
  pacedRate: number;
  maxSeconds: number;
  dbosQueuePollMs: number;
  dbosResultPollMs: number;
  dbosPool: number;
  safDevices: number;
  /** Records each SAF device uploads. */
  safRecords: number;
  safBatch: number;
  stormDevices: number;
  /** Reconnects spread uniformly over this window (0: all at the same moment). */
  stormJitterMs: number;
  /** How long after the drop devices keep trying before they count as missing. */
  stormMaxSeconds: number;
  /** Path prefix of the result files (`.json`, `.md`), or null to write none. */
  out: string | null;
}

const FLAGS = [
  'scale',
  'parts',
  'systems',
  'workflows',
  'workers',
  'concurrency',
  'parallel',
  'warmup',
  'paced-count',
  'paced-rate',
  'max-seconds',
  'dbos-queue-poll-ms',
  'dbos-result-poll-ms',
  'dbos-pool',
  'saf-devices',
  'saf-records',
  'saf-batch',
  'storm-devices',
  'storm-jitter-ms',
  'storm-max-seconds',
  'out',
];

function list<T extends string>(flag: string, value: string | undefined, all: readonly T[]): T[] {
  if (value === undefined) return [...all];
  const items = value.split(',').map((v) => v.trim());
  const unknown = items.filter((v) => !all.includes(v as T));
  if (unknown.length || items.length === 0)
    throw new Error(`bench system: --${flag} takes a list of ${all.join(', ')}`);
  return items as T[];
}

/** Settings from the command line (throws on an unknown flag or a bad value). */
export function settingsOf(options: BenchOptions): SystemSettings {
  const { flags, scale } = options;
  const unknown = Object.keys(flags).filter((f) => !FLAGS.includes(f));
  if (unknown.length) throw new Error(`bench system: unknown flag(s) --${unknown.join(', --')}`);
  const number = (flag: string, fallback: number, min = 1) => {
    const value = flags[flag] === undefined ? fallback : Number(flags[flag]);
    if (!Number.isFinite(value) || value < min)
      throw new Error(`bench system: --${flag} must be a number ≥ ${min}`);
    return value;
  };
  const scaled = (flag: string, fallback: number, min: number) =>
    Math.max(
      min,
      Math.round(flags[flag] === undefined ? fallback * scale : number(flag, fallback, min)),
    );
  const workers = (flags.workers ?? '1,2').split(',').map(Number);
  if (!workers.every((w) => Number.isInteger(w) && w > 0))
    throw new Error('bench system: --workers takes e.g. 1,2');
  return {
    parts: list('parts', flags.parts, PARTS),
    systems: list('systems', flags.systems, FLOW_SYSTEMS),
    workflows: scaled('workflows', 1000, 50),
    workers,
    concurrency: Math.round(number('concurrency', 8)),
    parallel: Math.round(number('parallel', 32)),
    warmup: scaled('warmup', 100, 0),
    pacedCount: scaled('paced-count', 200, 20),
    pacedRate: number('paced-rate', 20),
    maxSeconds: number('max-seconds', 300),
    dbosQueuePollMs: number('dbos-queue-poll-ms', 50),
    dbosResultPollMs: number('dbos-result-poll-ms', 50),
    dbosPool: Math.round(number('dbos-pool', 10)),
    safDevices: scaled('saf-devices', 1000, 1),
    safRecords: Math.round(number('saf-records', 100)),
    safBatch: Math.round(number('saf-batch', 50)),
    stormDevices: scaled('storm-devices', 10_000, 10),
    stormJitterMs: number('storm-jitter-ms', 0, 0),
    stormMaxSeconds: number('storm-max-seconds', 300),
    out: flags.out === 'none' ? null : (flags.out ?? 'bench/results/system'),
  };
}
