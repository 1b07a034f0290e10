/** Unsigned LEB128 integers of the WebAssembly binary format (core spec §5.2.2). */
import { WasmError } from './errors.js';

/** A module that cannot be read. */
export function malformed(what: string): WasmError {
  return new WasmError('WASM_INVALID_MODULE', `not a valid WebAssembly module: ${what}`);
}

/** Read an unsigned LEB128 u32 at `offset`; returns the value and the offset after it. */
export function readU32(bytes: Uint8Array, offset: number): [number, number] {
  let value = 0;
  for (let i = 0; i < 5; i++) {
    const byte = bytes[offset + i];
    if (byte === undefined) throw malformed('truncated integer');
    value += (byte & 0x7f) * 2 ** (7 * i);
    if ((byte & 0x80) === 0) {
      if (value > 0xffff_ffff) throw malformed('integer too large');
      return [value, offset + i + 1];
    }
  }
  throw malformed('integer too long');
}

/** Append `value` as an unsigned LEB128 to `out`. */
export function writeU32(value: number, out: number[]): void {
  let rest = value;
  do {
    const byte = rest & 0x7f;
    rest = Math.floor(rest / 128);
    out.push(rest === 0 ? byte : byte | 0x80);
  } while (rest !== 0);
}
