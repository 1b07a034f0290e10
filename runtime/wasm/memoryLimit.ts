/**
 * The guest memory cap, enforced by the engine that runs the guest rather than by watching it.
 *
 * A WebAssembly memory lives outside the JavaScript heap, so a worker's `resourceLimits`
 * (old/young generation sizes) do not bound it: a guest could grow to the 4 GiB of wasm32
 * inside a thread capped at 64 MiB. What does bound it is the memory's own declared maximum,
 * which V8 enforces on every `memory.grow` (the instruction returns -1 past it; C's `malloc`
 * then returns NULL). So before compiling, this module rewrites the limits of every memory the
 * module defines in its memory section: a missing or larger maximum becomes the cap, and an
 * initial size above the cap is refused. The hash is checked on the original bytes; only the
 * compiled copy carries the rewritten limits.
 *
 * Binary layout (WebAssembly core spec §5.5.8, §5.3.7): the module is `\0asm`, version 1,
 * then sections `id:u8 size:u32leb payload`; the memory section (id 5) is a vector of limits
 * `flags:u8 min:u32leb [max:u32leb]` with flag bit 0 = has max, bit 1 = shared, bit 2 =
 * 64-bit, bit 3 = custom page size. Imported memories cannot occur: the sandbox provides
 * none, so such a module fails to link. (The worker may then move the capped memory into an
 * import of its own: hostMemory.ts.)
 */
import { WasmError } from './errors.js';
import { malformed, readSections, readU32, writeU32 } from './binary.js';

/** Bytes in one WebAssembly page. */
export const WASM_PAGE_BYTES = 65_536;

const MAGIC = [0x00, 0x61, 0x73, 0x6d];
const MEMORY_SECTION = 5;
const HAS_MAX = 0x01;
const SHARED = 0x02;

/** Whether `bytes` start with the WebAssembly magic number and version 1. */
export function hasWasmHeader(bytes: Uint8Array): boolean {
  return (
    bytes.length >= 8 &&
    MAGIC.every((b, i) => bytes[i] === b) &&
    bytes[4] === 1 &&
    bytes[5] === 0 &&
    bytes[6] === 0 &&
    bytes[7] === 0
  );
}

/** A memory the module defines, as declared. */
export interface DeclaredMemory {
  minPages: number;
  maxPages?: number;
  shared: boolean;
}

/** Rewrite one memory section payload; returns the new payload and what it declared. */
function capSection(
  payload: Uint8Array,
  maxPages: number,
): { payload: Uint8Array; memories: DeclaredMemory[] } {
  const out: number[] = [];
  const memories: DeclaredMemory[] = [];
  let [count, at] = readU32(payload, 0);
  writeU32(count, out);
  while (count-- > 0) {
    const flags = payload[at++];
    if (flags === undefined) throw malformed('truncated memory section');
    if (flags & ~(HAS_MAX | SHARED))
      throw new WasmError(
        'WASM_INVALID_MODULE',
        `unsupported memory type (flags 0x${flags.toString(16)}): only 32-bit memories with 64 KiB pages can run here`,
      );
    let min: number;
    [min, at] = readU32(payload, at);
    let max: number | undefined;
    if (flags & HAS_MAX) [max, at] = readU32(payload, at);
    memories.push({
      minPages: min,
      ...(max === undefined ? {} : { maxPages: max }),
      shared: (flags & SHARED) !== 0,
    });
    if (min > maxPages)
      throw new WasmError(
        'WASM_MEMORY_LIMIT',
        `the module declares ${min} pages (${(min * WASM_PAGE_BYTES) / 2 ** 20} MiB) of initial memory; the limit is ${maxPages} pages (${(maxPages * WASM_PAGE_BYTES) / 2 ** 20} MiB)`,
        { details: { declared_pages: min, limit_pages: maxPages } },
      );
    out.push(flags | HAS_MAX);
    writeU32(min, out);
    writeU32(max === undefined ? maxPages : Math.min(max, maxPages), out);
  }
  if (at !== payload.length) throw malformed('memory section has trailing bytes');
  return { payload: Uint8Array.from(out), memories };
}

/**
 * `bytes` with every defined memory's maximum set to at most `maxPages`; the same array when
 * nothing needed changing. Throws `WASM_MEMORY_LIMIT` when a memory's initial size is already
 * above the cap, and `WASM_INVALID_MODULE` when the section structure cannot be read.
 */
export function capMemory(bytes: Uint8Array, maxPages: number): Uint8Array {
  if (!hasWasmHeader(bytes)) throw malformed('missing the \\0asm header (version 1)');
  for (const { id, start, end, payload: original } of readSections(bytes)) {
    if (id !== MEMORY_SECTION) continue;
    const { payload, memories } = capSection(original, maxPages);
    const unchanged = memories.every((m) => m.maxPages !== undefined && m.maxPages <= maxPages);
    if (unchanged) return bytes;
    const header: number[] = [MEMORY_SECTION];
    writeU32(payload.length, header);
    const result = new Uint8Array(start + header.length + payload.length + (bytes.length - end));
    result.set(bytes.subarray(0, start), 0);
    result.set(header, start);
    result.set(payload, start + header.length);
    result.set(bytes.subarray(end), start + header.length + payload.length);
    return result;
  }
  return bytes;
}
