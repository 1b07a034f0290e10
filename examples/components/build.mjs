// Build the component guests of this example:
//   node examples/components/build.mjs
// - score.wasm: score.wat compiled to a WASI preview1 command module (wabt);
// - score.component.wasm: the same module as a component exporting wasi:cli/run, made with
//   jco's preview1 command adapter — what `npx jco new score.wasm --wasi-command -o
//   score.component.wasm` does;
// - typed.component.wasm: typed.wat with the world of step.wit embedded, made a component.
// Prints each binary's SHA-256 (the `wasm_config.wasm_hash` of component_scoring.yaml). Needs
// `wabt` and `@bytecodealliance/jco` (development dependencies of this repository).
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';
import {
  componentEmbed,
  componentNew,
  parse,
  preview1AdapterCommandPath,
} from '@bytecodealliance/jco';
import wabtInit from 'wabt';

const here = (name) => fileURLToPath(new URL(`./${name}`, import.meta.url));
const write = (name, bytes) => {
  writeFileSync(here(name), bytes);
  const hash = createHash('sha256').update(bytes).digest('hex');
  process.stdout.write(`${hash}  ${name}\n`);
  process.stderr.write(`wrote ${here(name)} (${bytes.length} bytes)\n`);
};

const wabt = await wabtInit();
const module = wabt.parseWat('score.wat', readFileSync(here('score.wat'), 'utf8'));
let score;
try {
  score = Uint8Array.from(module.toBinary({}).buffer);
} finally {
  module.destroy();
}
write('score.wasm', score);

const adapter = readFileSync(preview1AdapterCommandPath());
write('score.component.wasm', await componentNew(score, [['wasi_snapshot_preview1', adapter]]));

const typedCore = await parse(readFileSync(here('typed.wat'), 'utf8'));
const embedded = await componentEmbed({
  binary: typedCore,
  witSource: readFileSync(here('step.wit'), 'utf8'),
  world: 'step',
});
write('typed.component.wasm', await componentNew(embedded));
