/**
 * `npm run bench -- NAME [--json] [--scale X] [--FLAG VALUE …]`: runs bench/NAME.ts and prints
 * its result. Every `--FLAG VALUE` pair other than `--json` is handed to the benchmark, which
 * reads the flags it knows (`--scale` is read here for all of them).
 */
import { readdirSync } from 'node:fs';
import type { BenchOptions, BenchResult } from './harness.js';

const args = process.argv.slice(2);
const json = args.includes('--json');
const takesValue = (arg: string | undefined) => arg?.startsWith('--') && arg !== '--json';
const flags: Record<string, string> = {};
args.forEach((a, i) => {
  const value = args[i + 1];
  if (takesValue(a) && value !== undefined) flags[a.slice(2)] = value;
});
const scale = flags.scale === undefined ? 1 : Number(flags.scale);
const name = args.find((a, i) => !a.startsWith('--') && !takesValue(args[i - 1]));
const available = readdirSync(new URL('.', import.meta.url))
  .filter((f) => f.endsWith('.ts') && !['run.ts', 'harness.ts'].includes(f))
  .map((f) => f.slice(0, -3));

if (!name || !available.includes(name) || !(scale > 0)) {
  process.stderr.write(
    `usage: npm run bench -- NAME [--json] [--scale X] [--FLAG VALUE …]\navailable: ${available.join(', ')}\n`,
  );
  process.exit(2);
}

const options: BenchOptions = {
  scale,
  flags,
  progress: (m) => void process.stderr.write(`${m}\n`),
};
const module = (await import(`./${name}.ts`)) as { run(o: BenchOptions): Promise<BenchResult> };
const result = await module.run(options);
if (json) {
  process.stdout.write(`${JSON.stringify(result)}\n`);
} else {
  for (const section of ['metrics', 'baselines', 'ratios'] as const) {
    process.stdout.write(`${section}:\n`);
    for (const [k, v] of Object.entries(result[section]))
      process.stdout.write(`  ${k.padEnd(32)} ${v}\n`);
  }
  for (const note of result.notes) process.stdout.write(`note: ${note}\n`);
}
