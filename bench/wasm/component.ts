/**
 * The bench guest as a `wasi:cli/run` component: jco's `componentNew` with its preview1
 * command adapter, what `jco new guest.wasm --wasi-command` does. Undefined when jco is not
 * installed (it is needed to build components, not to run them).
 */
import { readFileSync } from 'node:fs';
import { sha256Hex } from '../../runtime/index.js';

interface JcoBuild {
  componentNew(bytes: Uint8Array, adapters: [string, Uint8Array][]): Promise<Uint8Array>;
  preview1AdapterCommandPath(): URL;
}

/** `module` (a preview1 command) as a component, with its hash; undefined without jco. */
export async function wasiCommandComponent(
  module: Uint8Array,
): Promise<{ bytes: Uint8Array; hash: string } | undefined> {
  let jco: JcoBuild;
  try {
    jco = await import('@bytecodealliance/jco');
  } catch {
    return undefined;
  }
  const adapter = readFileSync(jco.preview1AdapterCommandPath());
  const bytes = await jco.componentNew(module, [['wasi_snapshot_preview1', adapter]]);
  return { bytes, hash: sha256Hex(bytes) };
}
