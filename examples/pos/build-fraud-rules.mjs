// Build the fraud-rules WASM module of the POS example from its WebAssembly text:
//   node examples/pos/build-fraud-rules.mjs [OUT]      (default: examples/pos/fraud_rules.wasm)
// prints the binary's SHA-256 — the `wasm_config.wasm_hash` of pos_payment.yaml. Needs the
// `wabt` package (a dev dependency of this repository).
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';
import wabtInit from 'wabt';

const source = fileURLToPath(new URL('./fraud_rules.wat', import.meta.url));
const out = process.argv[2] ?? fileURLToPath(new URL('./fraud_rules.wasm', import.meta.url));
const wabt = await wabtInit();
const module = wabt.parseWat('fraud_rules.wat', readFileSync(source, 'utf8'));
try {
  const { buffer } = module.toBinary({});
  writeFileSync(out, buffer);
  process.stdout.write(`${createHash('sha256').update(buffer).digest('hex')}\n`);
  process.stderr.write(`wrote ${out} (${buffer.length} bytes)\n`);
} finally {
  module.destroy();
}
