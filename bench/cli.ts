/**
 * `npm run bench -- cli [--runs N] [--out PREFIX|none]`: start-up time of the `saffron`
 * command, wall clock per process, median of N runs (default 15), against `node -e 0` in the
 * same run.
 *
 * Measured from the BUILT package (run `npm run build` first): the launcher bin/saffron.js
 * copied beside a link to dist/, the layout of an installed package, where it imports
 * dist/bin/cli.js. Then the same launcher in the checkout, where it runs the TypeScript source
 * through tsx. Commands: `--version`, `--help`, `validate` of a one-step workflow, and `run`
 * of it on SQLite — on a new database file each time (schema created: what a first run pays)
 * and on one that exists.
 *
 * Goals: `--version` ≤ 0.3 s and a one-step `run` ≤ 0.8 s from the built package. Results go
 * to stdout and to bench/results/cli.json and .md (`--out PREFIX`, `--out none`).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BenchOptions, type BenchResult, median, round } from './harness.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

const WORKFLOW = [
  'workflow_type: hello',
  'steps:',
  '  - { name: greet, type: STANDARD, function: steps.greet }',
  '',
].join('\n');
const STEPS = "export const greet = (state) => ({ greeting: `hello ${state.name ?? 'world'}` });\n";

/** Wall-clock milliseconds of one `node ARGS` process, which must exit 0. */
function timeProcess(args: readonly string[], cwd: string): number {
  const started = performance.now();
  const child = spawnSync(process.execPath, args, { cwd, encoding: 'utf8' });
  const ms = performance.now() - started;
  if (child.status !== 0) {
    throw new Error(
      `node ${args.join(' ')} exited ${child.status}:\n${child.stdout}\n${child.stderr}`,
    );
  }
  return ms;
}

function medianOf(runs: number, one: (i: number) => number): number {
  one(-1); // warm the file cache; not counted
  return round(median(Array.from({ length: runs }, (_, i) => one(i))));
}

/** Run the benchmark. */
export async function run(options: BenchOptions): Promise<BenchResult> {
  const runs = Math.max(3, Math.round(Number(options.flags.runs ?? 15) * options.scale));
  const out = options.flags.out ?? 'bench/results/cli';
  if (!existsSync(join(ROOT, 'dist/bin/cli.js'))) {
    throw new Error('dist/ is missing: run `npm run build` first');
  }
  const work = mkdtempSync(join(tmpdir(), 'saffron-bench-cli-'));
  try {
    // the installed layout: bin/saffron.js with no cli.ts beside it, ../dist
    const installed = join(work, 'package');
    mkdirSync(join(installed, 'bin'), { recursive: true });
    copyFileSync(join(ROOT, 'bin/saffron.js'), join(installed, 'bin/saffron.js'));
    symlinkSync(join(ROOT, 'dist'), join(installed, 'dist'));
    const builtLauncher = join(installed, 'bin/saffron.js');
    const sourceLauncher = join(ROOT, 'bin/saffron.js');
    await writeFile(join(work, 'hello.yaml'), WORKFLOW);
    await writeFile(join(work, 'steps.mjs'), STEPS);

    const metrics: Record<string, number> = {};
    const baselines: Record<string, number> = {};
    options.progress(`node -e 0 (${runs} runs)`);
    baselines.node_e0_ms = medianOf(runs, () => timeProcess(['-e', '0'], work));
    for (const [label, launcher] of [
      ['', builtLauncher],
      ['tsx_', sourceLauncher],
    ] as const) {
      const cli = (...args: string[]) => timeProcess([launcher, ...args], work);
      options.progress(`${label || 'dist_'}: --version, --help, validate, run`);
      metrics[`${label}version_ms`] = medianOf(runs, () => cli('--version'));
      metrics[`${label}help_ms`] = medianOf(runs, () => cli('--help'));
      metrics[`${label}validate_ms`] = medianOf(runs, () => cli('validate', 'hello.yaml'));
      metrics[`${label}run_new_db_ms`] = medianOf(runs, (i) =>
        cli('run', 'hello.yaml', '--db', join(work, `${label}new-${i}.db`)),
      );
      metrics[`${label}run_ms`] = medianOf(runs, () =>
        cli('run', 'hello.yaml', '--db', join(work, `${label}same.db`)),
      );
    }
    const ratios: Record<string, number> = {};
    for (const [k, v] of Object.entries(metrics))
      ratios[`${k.replace(/_ms$/, '')}_over_node`] = round(v / baselines.node_e0_ms);
    ratios.version_over_goal_300ms = round(metrics.version_ms! / 300);
    ratios.run_over_goal_800ms = round(metrics.run_ms! / 800);
    ratios.run_new_db_over_goal_800ms = round(metrics.run_new_db_ms! / 800);
    const result: BenchResult = {
      bench: 'cli',
      metrics,
      baselines,
      ratios,
      notes: [
        `median of ${runs} processes each, wall clock; node ${process.version}, ${process.platform}/${process.arch}`,
        'unprefixed: the built package (launcher + dist/); tsx_: the checkout launcher running the TypeScript source',
        'run_new_db: a new SQLite file each time (schema created); run: an existing file',
      ],
    };
    if (out !== 'none') await writeReport(out, result);
    return result;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

async function writeReport(prefix: string, result: BenchResult): Promise<void> {
  const m = result.metrics;
  const s = (ms: number | null | undefined) => (ms == null ? '–' : `${(ms / 1000).toFixed(3)} s`);
  const rows = [
    ['`--version`', 'version', '≤ 0.3 s'],
    ['`--help`', 'help', ''],
    ['`validate` (one step)', 'validate', ''],
    ['`run` one step, existing SQLite file', 'run', '≤ 0.8 s'],
    ['`run` one step, new SQLite file', 'run_new_db', ''],
  ].map(
    ([what, key, goal]) =>
      `| ${what} | ${s(m[`${key}_ms`])} | ${s(m[`tsx_${key}_ms`])} | ${goal} |`,
  );
  const md = [
    '# CLI start-up: results',
    '',
    `A run on ${new Date().toISOString().slice(0, 10)} (its output is [cli.json](cli.json)); how it`,
    'measures is in the header of bench/cli.ts. Baseline in the same run: `node -e 0` took',
    `${s(result.baselines.node_e0_ms)}.`,
    '',
    '| command | built package (dist/) | checkout (tsx) | goal |',
    '|---|---|---|---|',
    ...rows,
    '',
    ...result.notes.map((n) => `- ${n}`),
    '',
  ].join('\n');
  await writeFile(`${prefix}.json`, `${JSON.stringify(result, null, 2)}\n`);
  await writeFile(`${prefix}.md`, md);
}
