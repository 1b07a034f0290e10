/**
 * examples/components: the checked-in binaries are what their sources build to (score.wat
 * through wabt, then jco's preview1 command adapter; typed.wat with step.wit embedded), their
 * hashes are the ones component_scoring.yaml names, and the workflow runs on an edge (SQLite)
 * store — the wasi:cli/run component scoring exactly as the same guest does as a module.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { componentEmbed, componentNew, parse } from '@bytecodealliance/jco';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '../../actors/index.js';
import {
  cacheWasmBinary,
  createWasmRunner,
  mapWasmSource,
  sha256Hex,
} from '../../runtime/index.js';
import { definition, engineFor } from '../support/engine.js';
import { openWithSchema, type TestStore, EDGE_DIALECT } from '../support/stores.js';
import { compileWat } from '../support/wasmGuests.js';
import { commandComponent } from './componentGuests.js';

const EXAMPLE = fileURLToPath(new URL('../../examples/components/', import.meta.url));
const read = (name: string) => new Uint8Array(readFileSync(join(EXAMPLE, name)));
const sqlite = EDGE_DIALECT;

describe('examples/components', () => {
  let handle: TestStore;
  let rt: Runtime;
  beforeAll(async () => {
    handle = await openWithSchema(sqlite);
    rt = engineFor(handle, { wasm: { maxThreads: 1 } });
  });
  afterAll(async () => {
    await rt?.close();
    await handle?.close();
  });

  it('checks in what the sources build to, under the hashes the workflow names', async () => {
    const module = await compileWat(readFileSync(join(EXAMPLE, 'score.wat'), 'utf8'));
    expect(Buffer.from(read('score.wasm')).equals(Buffer.from(module.bytes))).toBe(true);
    const component = await commandComponent(module);
    expect(Buffer.from(read('score.component.wasm')).equals(Buffer.from(component.bytes))).toBe(
      true,
    );
    const typed = await componentNew(
      await componentEmbed({
        binary: await parse(readFileSync(join(EXAMPLE, 'typed.wat'), 'utf8')),
        witSource: readFileSync(join(EXAMPLE, 'step.wit'), 'utf8'),
        world: 'step',
      }),
    );
    expect(Buffer.from(read('typed.component.wasm')).equals(Buffer.from(typed))).toBe(true);
    const yaml = readFileSync(join(EXAMPLE, 'component_scoring.yaml'), 'utf8');
    expect(yaml).toContain(`wasm_hash: ${component.hash}`);
    expect(yaml).toContain(`wasm_hash: ${sha256Hex(typed)}`);
  });

  it('runs component_scoring: the component scores as the module does', async () => {
    for (const name of ['score.component.wasm', 'typed.component.wasm'])
      await cacheWasmBinary(handle.store, read(name));
    const def = await definition(readFileSync(join(EXAMPLE, 'component_scoring.yaml'), 'utf8'));
    const data = { amount_minor: 125_000, attempts_last_hour: 3, card: { last4: '4242' } };
    const started = await rt.start(def, data);
    const done = await rt.runUntilSettled(started.id);
    expect(done.status).toBe('COMPLETED');

    const module = read('score.wasm');
    const runner = createWasmRunner({
      source: mapWasmSource(new Map([[sha256Hex(module), module]])),
      maxThreads: 1,
    });
    try {
      const asModule = await runner.run({
        hash: sha256Hex(module),
        input: { amount_minor: 125_000, attempts_last_hour: 3 },
        timeoutMs: 5000,
      });
      expect(asModule.ok).toBe(true);
      const score = asModule.ok ? asModule.output.fraud_score : undefined;
      expect(score).toBe(11); // 1+2+5+3
      expect(done.state).toMatchObject({
        ...data,
        fraud_score: score,
        typed: { fraud_score: score },
      });
    } finally {
      await runner.close();
    }
  });
});
