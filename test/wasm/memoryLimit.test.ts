/**
 * The memory cap rewrites the limits of the memories a module defines before it is compiled:
 * a missing or larger maximum becomes the cap, an initial size above it is refused, and
 * everything else in the binary is left byte for byte. The worker then moves a module's one
 * memory into an import of its own (hostMemory), limits unchanged, so it can hand it out again.
 */
import { describe, expect, it } from 'vitest';
import { HOST_MEMORY_IMPORT, hostMemory } from '../../runtime/wasm/hostMemory.js';
import { capMemory, WasmError } from '../../runtime/wasm/index.js';
import { compileWat } from '../support/wasmGuests.js';

interface WebAssemblyApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (
    module: object,
    imports: object,
  ) => { exports: { memory: { buffer: ArrayBuffer; grow(pages: number): void } } };
}
const api = (globalThis as unknown as { WebAssembly: WebAssemblyApi }).WebAssembly;

/**
 * The exported memory's size and how far it can grow (stopping at 1024 pages). From
 * JavaScript, `Memory.grow` past the maximum throws a RangeError (the instruction inside a
 * guest returns -1 instead).
 */
function limitsOf(bytes: Uint8Array): { initial: number; maximum: number } {
  const { memory } = new api.Instance(new api.Module(bytes), {}).exports;
  const initial = memory.buffer.byteLength / 65_536;
  let maximum = initial;
  try {
    while (maximum < 1024) {
      memory.grow(1);
      maximum++;
    }
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
  }
  return { initial, maximum };
}

const module = (memory: string) =>
  compileWat(`(module (memory (export "memory") ${memory}) (func (export "f") (nop)))`);

describe('capMemory', () => {
  it('adds the cap as the maximum of a memory declared without one', async () => {
    const { bytes } = await module('1');
    const capped = capMemory(bytes, 4);
    expect(capped).not.toBe(bytes);
    expect(limitsOf(capped)).toEqual({ initial: 1, maximum: 4 });
  });

  it('lowers a larger maximum to the cap and keeps a smaller one', async () => {
    expect(limitsOf(capMemory((await module('2 100')).bytes, 8))).toEqual({
      initial: 2,
      maximum: 8,
    });
    const small = (await module('1 3')).bytes;
    expect(capMemory(small, 8)).toBe(small);
    expect(limitsOf(small)).toEqual({ initial: 1, maximum: 3 });
  });

  it('refuses a module whose initial memory is above the cap', async () => {
    const { bytes } = await module('100');
    expect(() => capMemory(bytes, 64)).toThrow(WasmError);
    try {
      capMemory(bytes, 64);
    } catch (error) {
      expect(error).toMatchObject({
        code: 'WASM_MEMORY_LIMIT',
        details: { declared_pages: 100, limit_pages: 64 },
      });
    }
  });

  it('leaves a module without a memory section as it is, and rejects garbage', async () => {
    const { bytes } = await compileWat('(module (func (export "f") (nop)))');
    expect(capMemory(bytes, 4)).toBe(bytes);
    expect(() => capMemory(new Uint8Array([1, 2, 3]), 4)).toThrow(/\\0asm header/);
    const truncated = (await module('1')).bytes.slice(0, 12);
    expect(() => capMemory(truncated, 4)).toThrow(WasmError);
  });

  it('keeps every other section byte for byte', async () => {
    const { bytes } = await compileWat(`
(module
  (memory (export "memory") 1)
  (data (i32.const 0) "payload")
  (func (export "f") (result i32) (i32.const 42)))`);
    const capped = capMemory(bytes, 16);
    // The rewrite only appends a 1-byte flag change and a LEB128 maximum.
    expect(capped.length - bytes.length).toBeGreaterThan(0);
    expect(capped.length - bytes.length).toBeLessThanOrEqual(6);
    expect(Buffer.from(capped).includes(Buffer.from('payload'))).toBe(true);
  });
});

describe('hostMemory', () => {
  interface Descriptor {
    module: string;
    name: string;
    kind: string;
  }
  const described = (bytes: Uint8Array) => {
    const compiled = new api.Module(bytes);
    const reflect = (
      globalThis as unknown as {
        WebAssembly: {
          Module: { imports(m: object): Descriptor[]; exports(m: object): Descriptor[] };
        };
      }
    ).WebAssembly.Module;
    return { imports: reflect.imports(compiled), exports: reflect.exports(compiled) };
  };

  it('moves the one defined memory into an import with the same limits', async () => {
    const { bytes } = await compileWat(`(module
      (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
      (memory (export "memory") 3 9)
      (data (i32.const 16) "hi")
      (func (export "f") (result i32) (i32.load8_u (i32.const 16))))`);
    const hosted = hostMemory(bytes);
    expect(hosted.memory).toEqual({ initialPages: 3, maximumPages: 9 });
    const { imports, exports } = described(hosted.bytes);
    expect(imports).toEqual([
      { module: 'wasi_snapshot_preview1', name: 'proc_exit', kind: 'function' },
      { module: HOST_MEMORY_IMPORT.module, name: HOST_MEMORY_IMPORT.field, kind: 'memory' },
    ]);
    expect(exports.map((e) => [e.name, e.kind])).toEqual([
      ['memory', 'memory'],
      ['f', 'function'],
    ]);
  });

  it('adds an import section where there was none, and the guest runs on the given memory', async () => {
    const { bytes } = await compileWat(`(module
      (memory (export "memory") 1 4)
      (data (i32.const 16) "\\2a")
      (func (export "f") (result i32) (i32.load8_u (i32.const 16))))`);
    const hosted = hostMemory(bytes);
    expect(described(hosted.bytes).imports).toEqual([
      { module: 'saffron', name: 'memory', kind: 'memory' },
    ]);
    const memory = new (
      globalThis as unknown as {
        WebAssembly: { Memory: new (d: { initial: number; maximum: number }) => object };
      }
    ).WebAssembly.Memory({ initial: 1, maximum: 4 });
    const instance = new api.Instance(new api.Module(hosted.bytes), {
      saffron: { memory },
    }) as unknown as { exports: { f(): number; memory: object } };
    expect(instance.exports.f()).toBe(42);
    expect(instance.exports.memory).toBe(memory);
  });

  it('leaves modules without a memory, or without a maximum, as they are', async () => {
    const none = (await compileWat(`(module (func (export "f") (nop)))`)).bytes;
    expect(hostMemory(none)).toEqual({ bytes: none });
    const unbounded = (await module('1')).bytes; // capMemory gives every memory a maximum first
    expect(hostMemory(unbounded).bytes).toBe(unbounded);
  });
});
