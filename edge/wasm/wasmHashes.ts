/**
 * The WASM binaries workflow definitions need (spec: "On startup the agent scans cached
 * workflow definitions for WASM steps and prefetches missing binaries"). It walks LOOP
 * bodies too (listSteps), since a WASM step inside a loop needs its binary as much as one
 * at the top level.
 */
import { listSteps, type WorkflowDefinition } from '../../runtime/index.js';

/** The distinct `wasm_config.wasm_hash` values of `definitions`' WASM steps, in order. */
export function wasmHashesOf(definitions: Iterable<WorkflowDefinition>): string[] {
  const hashes = new Set<string>();
  for (const definition of definitions)
    for (const step of listSteps(definition))
      if (step.type === 'WASM') hashes.add(step.wasm_config.wasm_hash);
  return [...hashes];
}
