/**
 * Where WASM steps' binaries come from (spec: "Cloud resolves the binary from the path stored
 * in wasm_components. Edge resolves it from device_wasm_cache."). A source only finds bytes
 * by hash; it does not verify them — the thread that runs a guest checks the SHA-256 of
 * exactly the bytes it is about to compile or run, on every call.
 */
import { readFile } from 'node:fs/promises';
import { WasmError } from './errors.js';
import { resolveStoredBlob, wasmStorageDir } from './storageDir.js';
import { asCloud, asEdge, type Store } from '../store/store.js';
import { getWasmComponent } from '../store/wasm/getWasmComponent.js';
import { getCachedWasm, touchCachedWasm } from '../store/wasm/getCachedWasm.js';

/** Finds WebAssembly binaries by SHA-256. */
export interface WasmBinarySource {
  /** The bytes stored under `hash`, or undefined when there are none. */
  read(hash: string): Promise<Uint8Array | undefined>;
}

/** A source over binaries held in memory (tests, embedding, benchmarks). */
export function mapWasmSource(binaries: ReadonlyMap<string, Uint8Array>): WasmBinarySource {
  return { read: (hash) => Promise.resolve(binaries.get(hash)) };
}

/**
 * The cloud's source: the `wasm_components` row of the hash names a file, which must lie
 * inside `storageDir` (see storageDir.ts). A registered binary whose file is gone is
 * WASM_MODULE_NOT_FOUND, naming the file.
 */
export function registryWasmSource(store: Store, storageDir: string): WasmBinarySource {
  return {
    async read(hash) {
      const component = await getWasmComponent(asCloud(store), hash);
      if (!component) return undefined;
      try {
        return await readFile(await resolveStoredBlob(storageDir, component.blobStoragePath));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        throw new WasmError(
          'WASM_MODULE_NOT_FOUND',
          `the binary is registered but its file ${component.blobStoragePath} is missing`,
          { details: { blob_storage_path: component.blobStoragePath } },
        );
      }
    },
  };
}

/** How often a cached binary's `last_accessed` is refreshed at most (one write per minute). */
const TOUCH_INTERVAL_MS = 60_000;

/**
 * The edge's source: `device_wasm_cache`. Each hit refreshes the row's `last_accessed` (the
 * eviction order), at most once a minute per binary, so a hot step does not turn every read
 * into a synchronous SQLite write.
 */
export function deviceCacheWasmSource(
  store: Store,
  now: () => Date = () => new Date(),
): WasmBinarySource {
  const touched = new Map<string, number>();
  return {
    async read(hash) {
      const bytes = await getCachedWasm(asEdge(store), hash);
      if (bytes === undefined) return undefined;
      const at = now();
      const last = touched.get(hash);
      if (last === undefined || at.getTime() - last >= TOUCH_INTERVAL_MS) {
        touched.set(hash, at.getTime());
        await touchCachedWasm(asEdge(store), hash, at);
      }
      return bytes;
    },
  };
}

/**
 * The source a store implies: `device_wasm_cache` on SQLite (the edge, and `saffron run`'s
 * default database), the registry plus `storageDir` (default `WASM_STORAGE_DIR`, else
 * `./wasm_storage`) on PostgreSQL and PGlite.
 */
export function storeWasmSource(
  store: Store,
  options: { storageDir?: string; now?: () => Date } = {},
): WasmBinarySource {
  return store.dialect === 'sqlite'
    ? deviceCacheWasmSource(store, options.now)
    : registryWasmSource(store, options.storageDir ?? wasmStorageDir());
}
