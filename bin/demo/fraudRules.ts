/**
 * The POS example's fraud rules as WASM binaries for the demo, compiled from the example's
 * WebAssembly text at start (no binary is kept in the repository): version 1 as written, and
 * a stricter version 2 — decline from a score of 50 instead of 70 — that the demo rolls out
 * to the fleet mid-run.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import wabtInit from 'wabt';

/** A compiled rule set. */
export interface FraudRules {
  version: string;
  bytes: Uint8Array;
  hash: string;
}

const DECLINE_AT = '(if (i32.ge_u (local.get $score) (i32.const 70))';

async function compile(version: string, text: string): Promise<FraudRules> {
  const wabt = await wabtInit();
  const module = wabt.parseWat(`fraud_rules_${version}.wat`, text);
  try {
    const bytes = module.toBinary({}).buffer.slice();
    return { version, bytes, hash: createHash('sha256').update(bytes).digest('hex') };
  } finally {
    module.destroy();
  }
}

/** Both versions, from `<exampleDir>/fraud_rules.wat`. */
export async function buildFraudRules(
  exampleDir: string,
): Promise<{ v1: FraudRules; v2: FraudRules }> {
  const text = readFileSync(join(exampleDir, 'fraud_rules.wat'), 'utf8');
  if (!text.includes(DECLINE_AT))
    throw new Error(`demo: fraud_rules.wat no longer declines at 70 ('${DECLINE_AT}')`);
  return {
    v1: await compile('1', text),
    v2: await compile('2', text.replace(DECLINE_AT, DECLINE_AT.replace('70', '50'))),
  };
}
