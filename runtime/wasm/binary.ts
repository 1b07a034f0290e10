/** The WebAssembly binary format: unsigned LEB128 integers (core spec §5.2.2) and sections (§5.5.2). */
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

/** A section of a module: its id, where it starts (at its id byte) and ends, and its payload. */
export interface Section {
  id: number;
  start: number;
  end: number;
  payload: Uint8Array;
}

/** The sections of `bytes` after the 8-byte header, in order. */
export function readSections(bytes: Uint8Array): Section[] {
  const sections: Section[] = [];
  let at = 8;
  while (at < bytes.length) {
    const id = bytes[at]!;
    const [size, payloadStart] = readU32(bytes, at + 1);
    const end = payloadStart + size;
    if (end > bytes.length) throw malformed('a section runs past the end of the file');
    sections.push({ id, start: at, end, payload: bytes.subarray(payloadStart, end) });
    at = end;
  }
  return sections;
}
