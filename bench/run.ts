/**
 * `npm run bench -- NAME [--json] [--scale X]`: runs bench/NAME.ts and prints its result.
 */
import { readdirSync } from 'node:fs';
import type { BenchOptions, BenchResult } from './harness.js';

const args = process.argv.slice(2);
const json = args.includes('--json');
const scaleIndex = args.indexOf('--scale');
const scale = scaleIndex >= 0 ? Number(args[scaleIndex + 1]) : 1;
const name = args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--scale');
const available = readdirSync(new URL('.', import.meta.url))
  .filter((f) => f.endsWith('.ts') && !['run.ts', 'harness.ts'].includes(f))
  .map((f) => f.slice(0, -3));

if (!name || !available.includes(name) || !(scale > 0)) {
  process.stderr.write(
    `usage: npm run bench -- NAME [--json] [--scale X]\navailable: ${available.join(', ')}\n`,
  );
  process.exit(2);
}

const options: BenchOptions = { scale, progress: (m) => void process.stderr.write(`${m}\n`) };
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
