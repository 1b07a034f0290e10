/**
 * Guest memory provided by the host, so a worker thread can reuse it between calls.
 *
 * Every call runs a fresh instance (worker.ts), and a module that defines its memory gets a
 * fresh one from V8 each time: an allocation outside the JavaScript heap that V8 answers,
 * every few hundred calls, with a full collection of the thread's heap ("external memory
 * pressure") — a pause of a few milliseconds in the middle of a payment. Rewritten by
 * {@link hostMemory}, the module imports that memory instead (`saffron.memory`, same limits),
 * and the thread hands each instance a memory of the declared initial size, zero-filled:
 * exactly what a fresh instance would get — then data segments are written at
 * instantiation as usual. A memory the guest grew is not reused.
 *
 * Inside the module nothing changes: an imported memory takes index 0 like a defined one
 * (the sandbox imports no other), and the export of `memory` names the same index. Modules
 * that define no memory, several, or a shared one are left as they are.
 *
 * Binary layout (WebAssembly core spec §5.5): the import section (id 2) is a vector of
 * `module:name field:name kind:u8 desc`, a memory import being kind 2 with the memory's
 * limits as desc; it precedes every section with id 3 or more (custom sections, id 0, may sit
 * anywhere).
 */
import { readSections, readU32, writeU32 } from './binary.js';

/** The import that carries the host's memory. */
export const HOST_MEMORY_IMPORT = { module: 'saffron', field: 'memory' } as const;

const IMPORT_SECTION = 2;
const MEMORY_SECTION = 5;
const MEMORY_KIND = 0x02;
const HAS_MAX = 0x01;

/** The limits of the memory the host provides, in pages. */
export interface HostedMemory {
  initialPages: number;
  maximumPages: number;
}

/** `bytes` rewritten to import its memory, with the memory's limits; or the bytes unchanged. */
export function hostMemory(bytes: Uint8Array): {
  bytes: Uint8Array;
  memory?: HostedMemory;
} {
  const sections = readSections(bytes);
  const memorySection = sections.find((s) => s.id === MEMORY_SECTION);
  if (!memorySection) return { bytes };
  const [count, limitsAt] = readU32(memorySection.payload, 0);
  const flags = memorySection.payload[limitsAt];
  // one 32-bit, unshared memory with a maximum (capMemory gave it one)
  if (count !== 1 || flags !== HAS_MAX) return { bytes };
  const limits = memorySection.payload.subarray(limitsAt);
  const [initialPages, maxAt] = readU32(limits, 1);
  const [maximumPages] = readU32(limits, maxAt);

  const entry: number[] = [];
  for (const name of [HOST_MEMORY_IMPORT.module, HOST_MEMORY_IMPORT.field]) {
    const utf8 = Buffer.from(name, 'utf8');
    writeU32(utf8.length, entry);
    entry.push(...utf8);
  }
  entry.push(MEMORY_KIND, ...limits);

  const imports = sections.find((s) => s.id === IMPORT_SECTION);
  let importPayload: number[];
  if (imports) {
    const [n, rest] = readU32(imports.payload, 0);
    importPayload = [];
    writeU32(n + 1, importPayload);
    importPayload.push(...imports.payload.subarray(rest), ...entry);
  } else {
    importPayload = [1, ...entry];
  }
  const importSection = [IMPORT_SECTION];
  writeU32(importPayload.length, importSection);
  importSection.push(...importPayload);

  const parts: Uint8Array[] = [bytes.subarray(0, 8)];
  let placed = false;
  sections.forEach((section) => {
    const raw = bytes.subarray(section.start, section.end);
    if (!placed && !imports && section.id >= 3) {
      parts.push(Uint8Array.from(importSection));
      placed = true;
    }
    if (section.id === IMPORT_SECTION) parts.push(Uint8Array.from(importSection));
    else if (section.id !== MEMORY_SECTION) parts.push(raw);
  });
  return {
    bytes: Buffer.concat(parts),
    memory: { initialPages, maximumPages },
  };
}
