/**
 * The WebAssembly registry: library functions behind `saffron wasm add|list` today and the
 * cloud's upload and download endpoints later.
 *
 * Binaries are content-addressed: the SHA-256 of the bytes is the id. Registering bytes that
 * are already registered returns the existing row (`created: false`), whatever name or version
 * the second call gave — the same bytes are the same component — so uploads can be retried
 * blindly. On the cloud the bytes go to `WASM_STORAGE_DIR/<hash>.wasm`, written to a temporary
 * file, flushed and renamed into place (a reader never sees half a file, and a crash leaves at
 * worst a stray temporary file), before the row that names them is inserted. On the edge the
 * bytes go into `device_wasm_cache`, which has no name or version columns (spec).
 */
import { randomUUID } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import * as path from 'node:path';
import { WasmError } from './errors.js';
import { hashMatches, sha256Hex } from './hash.js';
import { wasmBinaryKind, type WasmBinaryKind } from './kind.js';
import { hasWasmHeader } from './memoryLimit.js';
import { compareSemver, isSemver } from './semver.js';
import { registryWasmSource } from './source.js';
import { resolveStoredBlob, wasmBlobPath } from './storageDir.js';
import { componentArtifacts } from './transpile.js';
import { ConflictError } from '../store/errors.js';
import { asCloud, asEdge, type Store } from '../store/store.js';
import { getWasmComponent } from '../store/wasm/getWasmComponent.js';
import { insertWasmComponent } from '../store/wasm/insertWasmComponent.js';
import { listWasmComponents } from '../store/wasm/listWasmComponents.js';
import { putCachedWasm } from '../store/wasm/putCachedWasm.js';
import type { WasmComponent } from '../store/wasm/record.js';

const webAssembly = (
  globalThis as unknown as { WebAssembly: { validate(bytes: Uint8Array): boolean } }
).WebAssembly;

/**
 * Check that `bytes` are a WebAssembly module: the `\0asm` magic and version 1, then
 * `WebAssembly.validate` (types, instructions, imports). Throws WASM_INVALID_MODULE saying
 * which check failed.
 */
export function checkWasmModule(bytes: Uint8Array): void {
  if (!hasWasmHeader(bytes))
    throw new WasmError(
      'WASM_INVALID_MODULE',
      'not a WebAssembly module: the file does not start with the \\0asm magic number and version 1',
    );
  if (!webAssembly.validate(bytes))
    throw new WasmError(
      'WASM_INVALID_MODULE',
      'not a valid WebAssembly module: it has the WebAssembly header but does not validate',
    );
}

/**
 * Check that `bytes` are something a WASM step can run: a core module (see
 * {@link checkWasmModule}) or a component, which is transpiled now — so it is done once, before
 * the first call needs it — and refused when it is not valid (WASM_INVALID_MODULE), imports
 * what the sandbox does not provide (WASM_LINK_FAILED) or exports nothing callable
 * (WASM_ENTRYPOINT_MISSING). Returns which of the two it is.
 */
export async function checkWasmBinary(bytes: Uint8Array): Promise<WasmBinaryKind> {
  if (wasmBinaryKind(bytes) !== 'component') {
    checkWasmModule(bytes);
    return 'module';
  }
  await componentArtifacts(sha256Hex(bytes), bytes);
  return 'component';
}

/** What a caller says about a binary it registers. */
export interface WasmRegistration {
  /** At most 200 characters. */
  name: string;
  /** A semantic version (`1.2.0`, `2.0.0-rc.1`). */
  versionTag: string;
  description?: string;
  /** JSON Schema of the module's input: an object, or its JSON text. */
  inputSchema?: unknown;
  /** JSON Schema of the module's output: an object, or its JSON text. */
  outputSchema?: unknown;
}

/** The outcome of a registration. */
export interface RegisteredWasm {
  component: WasmComponent;
  /** False when the same bytes were registered before (the existing row is returned). */
  created: boolean;
}

function schemaText(value: unknown, field: string): string | null {
  if (value === undefined || value === null) return null;
  let parsed: unknown = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value) as unknown;
    } catch (error) {
      throw new WasmError(
        'WASM_METADATA_INVALID',
        `${field} is not valid JSON: ${error instanceof Error ? error.message : String(error)}`,
        { details: { field } },
      );
    }
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new WasmError('WASM_METADATA_INVALID', `${field} must be a JSON object (a JSON Schema)`, {
      details: { field },
    });
  return JSON.stringify(parsed);
}

function checkRegistration(registration: WasmRegistration): void {
  const { name, versionTag } = registration;
  if (name.trim() === '' || name.length > 200)
    throw new WasmError('WASM_METADATA_INVALID', 'name must be 1 to 200 characters', {
      details: { field: 'name' },
    });
  if (!isSemver(versionTag))
    throw new WasmError(
      'WASM_VERSION_INVALID',
      `version tag ${JSON.stringify(versionTag)} is not a semantic version (MAJOR.MINOR.PATCH, e.g. 1.4.0 or 2.0.0-rc.1)`,
      { details: { field: 'version_tag' } },
    );
}

/** Write `bytes` to `file` atomically: temporary file in the same folder, fsync, rename. */
async function writeAtomically(file: string, bytes: Uint8Array): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const temporary = path.join(
    path.dirname(file),
    `.${path.basename(file)}.${process.pid}.${randomUUID()}.tmp`,
  );
  const handle = await open(temporary, 'wx', 0o644);
  try {
    await handle.writeFile(bytes);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/** Make sure `file` holds bytes hashing to `hash`: keep a good copy, replace a bad or missing one. */
async function ensureBlob(file: string, bytes: Uint8Array, hash: string): Promise<void> {
  try {
    if (hashMatches(await readFile(file), hash)) return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await writeAtomically(file, bytes);
}

function cloudOnly(store: Store, what: string): void {
  if (store.dialect === 'sqlite')
    throw new WasmError(
      'WASM_REGISTRY_UNSUPPORTED',
      `${what} needs a cloud store (PostgreSQL or PGlite); an edge store keeps binaries in device_wasm_cache only`,
    );
}

/**
 * Register `bytes` in the cloud registry (PostgreSQL or PGlite): check they are a module or
 * a component (a component is transpiled now, see {@link checkWasmBinary}),
 * store them under `storageDir` named by their hash, and insert the `wasm_components` row.
 * The same bytes registered again return the existing row (and restore its file if it was
 * lost).
 */
export async function registerWasmComponent(
  store: Store,
  bytes: Uint8Array,
  registration: WasmRegistration,
  options: { storageDir: string },
): Promise<RegisteredWasm> {
  cloudOnly(store, 'registering a WASM binary');
  await checkWasmBinary(bytes);
  checkRegistration(registration);
  const inputSchema = schemaText(registration.inputSchema, 'input_schema');
  const outputSchema = schemaText(registration.outputSchema, 'output_schema');
  const hash = sha256Hex(bytes);
  const existing = await getWasmComponent(asCloud(store), hash);
  if (existing) {
    await ensureBlob(
      await resolveStoredBlob(options.storageDir, existing.blobStoragePath).catch((error) => {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT')
          return path.resolve(options.storageDir, existing.blobStoragePath);
        throw error;
      }),
      bytes,
      hash,
    );
    return { component: existing, created: false };
  }
  const file = wasmBlobPath(options.storageDir, hash);
  await ensureBlob(file, bytes, hash);
  try {
    await insertWasmComponent(asCloud(store), {
      id: randomUUID(),
      name: registration.name,
      versionTag: registration.versionTag,
      binaryHash: hash,
      blobStoragePath: file,
      description: registration.description ?? null,
      inputSchema,
      outputSchema,
      sizeBytes: bytes.length,
    });
  } catch (error) {
    // Registered concurrently by someone else: theirs is the row.
    const raced =
      error instanceof ConflictError ? await getWasmComponent(asCloud(store), hash) : undefined;
    if (raced) return { component: raced, created: false };
    throw error;
  }
  return { component: (await getWasmComponent(asCloud(store), hash))!, created: true };
}

/**
 * The registered binary named `name`: of version `versionTag`, or the highest semantic
 * version when none is given.
 */
export async function findWasmComponent(
  store: Store,
  name: string,
  versionTag?: string,
): Promise<WasmComponent | undefined> {
  cloudOnly(store, 'looking up a WASM binary by name');
  const named = await listWasmComponents(asCloud(store), { name });
  if (versionTag !== undefined) return named.find((c) => c.versionTag === versionTag);
  return named
    .filter((c) => isSemver(c.versionTag))
    .sort((a, b) => compareSemver(b.versionTag, a.versionTag))[0];
}

/**
 * The bytes of registered binary `hash`, verified against it, or undefined when it is not
 * registered. A file that does not hash to its row's hash is WASM_HASH_MISMATCH.
 */
export async function readWasmComponentBytes(
  store: Store,
  hash: string,
  options: { storageDir: string },
): Promise<Uint8Array | undefined> {
  cloudOnly(store, 'reading a registered WASM binary');
  const bytes = await registryWasmSource(store, options.storageDir).read(hash);
  if (bytes !== undefined && !hashMatches(bytes, hash))
    throw new WasmError('WASM_HASH_MISMATCH', `the stored file of ${hash} does not hash to it`, {
      details: { actual_hash: sha256Hex(bytes) },
    });
  return bytes;
}

/**
 * Put `bytes` into an edge store's `device_wasm_cache` after checking they are a module or a
 * component (transpiled now, so the first call does not wait for it); returns their hash and
 * whether they were new.
 */
export async function cacheWasmBinary(
  store: Store,
  bytes: Uint8Array,
  now = new Date(),
): Promise<{ hash: string; created: boolean }> {
  if (store.dialect !== 'sqlite')
    throw new WasmError(
      'WASM_REGISTRY_UNSUPPORTED',
      'device_wasm_cache exists on edge (SQLite) stores only; register binaries on a cloud store',
    );
  await checkWasmBinary(bytes);
  const hash = sha256Hex(bytes);
  return { hash, created: await putCachedWasm(asEdge(store), hash, bytes, now) };
}
