/**
 * Core modules and components are told apart by the 8-byte header alone: both start with the
 * `\0asm` magic; a core module continues with version 1 (`01 00 00 00`), a component (the
 * Component Model's binary format) with version `0d 00` and layer `01 00`. Nothing else is
 * read, so a caller can pick the path (node:wasi or jco) before parsing anything.
 */
import { hasWasmHeader } from './memoryLimit.js';

/** What a WebAssembly binary is: a core module (WASI preview1) or a component (WASI 0.2). */
export type WasmBinaryKind = 'module' | 'component';

const MAGIC = [0x00, 0x61, 0x73, 0x6d];
/** Version 0x0d of the component binary format, layer 1 (a component, not a core module). */
const COMPONENT_VERSION_LAYER = [0x0d, 0x00, 0x01, 0x00];

/** Whether `bytes` start with the component header (`\0asm`, version 0x0d, layer 1). */
export function hasComponentHeader(bytes: Uint8Array): boolean {
  return (
    bytes.length >= 8 &&
    MAGIC.every((b, i) => bytes[i] === b) &&
    COMPONENT_VERSION_LAYER.every((b, i) => bytes[4 + i] === b)
  );
}

/** The kind of `bytes` by its header, or undefined when it is neither. */
export function wasmBinaryKind(bytes: Uint8Array): WasmBinaryKind | undefined {
  if (hasWasmHeader(bytes)) return 'module';
  if (hasComponentHeader(bytes)) return 'component';
  return undefined;
}
