/**
 * `npm run chaos [-- --size ci|large|smoke] [--seed N] [--agents N] [--hosts N]
 * [--seconds N]`: the chaos run (chaosRun.ts). It is a script, not a vitest file, because it
 * restarts PostgreSQL — which would break test files running beside it. Progress goes to
 * stderr, the summary table to stdout, the report to `test-results/chaos/<size>.json`; the
 * exit code is 0 only if every invariant holds. On a failure the processes' logs are kept in
 * `test-results/chaos/<size>-logs/`. `--agents`, `--hosts` and `--seconds` (the chaos
 * phase) override the size's figures, for trying a machine's limits.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { runChaos } from './chaosRun.js';
import { formatReport } from './report.js';
import { CHAOS_SIZES, isChaosSizeName, type ChaosSize } from './sizes.js';

const RESULTS_DIR = join(process.cwd(), 'test-results', 'chaos');

/** A positive integer option, or undefined when absent; throws on anything else. */
function count(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive integer`);
  return n;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      size: { type: 'string', default: 'ci' },
      seed: { type: 'string' },
      agents: { type: 'string' },
      hosts: { type: 'string' },
      seconds: { type: 'string' },
    },
  });
  const sizeName = values.size;
  if (!isChaosSizeName(sizeName)) {
    process.stderr.write(`--size must be one of ${Object.keys(CHAOS_SIZES).join(', ')}\n`);
    return 2;
  }
  const seed =
    values.seed !== undefined ? Number(values.seed) : Math.floor(Math.random() * 2 ** 31);
  if (!Number.isInteger(seed)) {
    process.stderr.write('--seed must be an integer\n');
    return 2;
  }
  const agents = count(values.agents, 'agents');
  const hosts = count(values.hosts, 'hosts');
  const seconds = count(values.seconds, 'seconds');
  const size: ChaosSize = {
    ...CHAOS_SIZES[sizeName],
    ...(agents !== undefined ? { agents } : {}),
    ...(hosts !== undefined ? { hosts } : {}),
    ...(seconds !== undefined ? { chaosSeconds: seconds } : {}),
  };
  mkdirSync(RESULTS_DIR, { recursive: true });
  const report = await runChaos(size, {
    seed,
    say: (line) => process.stderr.write(`${line}\n`),
    keepLogsIn: join(RESULTS_DIR, `${sizeName}-logs`),
  });
  process.stdout.write(`${formatReport(report)}\n`);
  const file = join(RESULTS_DIR, `${sizeName}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  process.stderr.write(
    `chaos: report written to ${file}${report.logsDir ? `; process logs kept in ${report.logsDir}` : ''}\n`,
  );
  return report.ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `chaos: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
