/**
 * The device's WASM cache (spec: edge distribution of binaries): `device_wasm_cache` filled
 * from the cloud registry by hash.
 *
 * - `ensure(hash)` does nothing when the hash is cached; otherwise it downloads the binary,
 *   verifies its SHA-256 and that it is a WebAssembly module or component, and only then
 *   stores it — a bad download leaves no row behind. A component is transpiled at that moment
 *   (runtime/wasm/transpile.ts), so its first call on the device does not wait for jco, and
 *   one the sandbox would refuse to run is refused here already. Two callers ensuring the same hash share one
 *   download.
 * - `prefetch(hashes)` ensures a list in the background, one download at a time (a terminal
 *   on a thin uplink should not open a dozen transfers), reporting each item's outcome as it
 *   goes and a per-item report at the end instead of stopping at the first failure.
 * - `source()` is the `WasmBinarySource` to give the engine (`createRuntime({wasmSource})`):
 *   it reads the cache, and with `fetchOnMiss` downloads a missing binary first, so a
 *   workflow started before the prefetch reached its binary does not fail while online.
 *
 * `stop()` aborts downloads in flight and waits for background prefetches to end.
 */
import {
  cacheWasmBinary,
  deviceCacheWasmSource,
  isSha256Hex,
  SaffronError,
  toError,
  WasmError,
  type EdgeStore,
  type WasmBinarySource,
} from '../../runtime/index.js';
import type { CloudClient } from '../cloud/cloudClient.js';
import { downloadWasm } from './downloadWasm.js';
import { WasmCacheError } from './errors.js';
import { hasCachedWasm } from './hasCachedWasm.js';

/** How an `ensure` ended. */
export interface WasmEnsureResult {
  hash: string;
  /** `cached`: it was already there; `downloaded`: fetched, verified and stored now. */
  outcome: 'cached' | 'downloaded';
  /** Size of a downloaded binary; null when it was already cached. */
  sizeBytes: number | null;
}

/** One item of a prefetch. */
export interface WasmPrefetchItem {
  hash: string;
  outcome: 'cached' | 'downloaded' | 'failed';
  error?: { code: string; message: string; retryable: boolean };
}

/** The outcome of a whole prefetch, item by item. */
export interface WasmPrefetchReport {
  total: number;
  cached: number;
  downloaded: number;
  failed: number;
  items: WasmPrefetchItem[];
}

/** A background prefetch. */
export interface WasmPrefetch {
  /** Resolves (never rejects) when every item has been tried or the prefetch was cancelled. */
  done: Promise<WasmPrefetchReport>;
  /** Stop after the current item (which is aborted). */
  cancel(): void;
}

/** Events of the WASM cache. */
export type WasmCacheEvent =
  | { type: 'edge.wasm.downloaded'; hash: string; sizeBytes: number }
  | { type: 'edge.wasm.failed'; hash: string; code: string; message: string }
  | {
      type: 'edge.wasm.prefetch.progress';
      index: number;
      total: number;
      item: WasmPrefetchItem;
    }
  | { type: 'edge.wasm.prefetch.done'; report: WasmPrefetchReport };

/** What the WASM cache needs. */
export interface WasmCacheDeps {
  store: EdgeStore;
  cloud: CloudClient;
  /** Largest binary accepted (16 MiB). */
  maxBytes?: number;
  onEvent?: (event: WasmCacheEvent) => void;
  now?: () => Date;
}

/** The device's WASM cache. */
export interface WasmCache {
  /** Make sure binary `hash` is cached (see the module comment). */
  ensure(hash: string, options?: { signal?: AbortSignal }): Promise<WasmEnsureResult>;
  /** Whether binary `hash` is cached. */
  has(hash: string): Promise<boolean>;
  /** Those of `hashes` not cached yet. */
  missing(hashes: Iterable<string>): Promise<string[]>;
  /** Ensure `hashes` in the background, one at a time. */
  prefetch(hashes: Iterable<string>): WasmPrefetch;
  /** A binary source for the engine; `fetchOnMiss` downloads a missing binary first. */
  source(options?: { fetchOnMiss?: boolean }): WasmBinarySource;
  /** Abort downloads and wait for prefetches to end. */
  stop(): Promise<void>;
}

const itemError = (error: unknown) => {
  const e = toError(error);
  return e instanceof SaffronError
    ? { code: e.code, message: e.message, retryable: e.retryable }
    : { code: 'INTERNAL', message: e.message, retryable: false };
};

/** Create the WASM cache of a device. */
export function createWasmCache(deps: WasmCacheDeps): WasmCache {
  const now = deps.now ?? (() => new Date());
  const emit = (event: WasmCacheEvent) => {
    try {
      deps.onEvent?.(event);
    } catch {
      // a listener's failure is not the cache's
    }
  };
  const inFlight = new Map<string, Promise<WasmEnsureResult>>();
  const controllers = new Set<AbortController>();
  const prefetches = new Set<{ cancel(): void; done: Promise<unknown> }>();
  let stopped = false;

  const download = async (hash: string, signal?: AbortSignal): Promise<WasmEnsureResult> => {
    const controller = new AbortController();
    const forward = () => controller.abort();
    signal?.addEventListener('abort', forward);
    if (signal?.aborted) controller.abort();
    controllers.add(controller);
    try {
      const bytes = await downloadWasm(deps.cloud, hash, {
        signal: controller.signal,
        ...(deps.maxBytes !== undefined ? { maxBytes: deps.maxBytes } : {}),
      }).catch((error: unknown) => {
        if (stopped)
          throw new WasmCacheError('WASM_CACHE_STOPPED', `stopped while downloading ${hash}`, {
            cause: error,
          });
        throw error;
      });
      try {
        await cacheWasmBinary(deps.store, bytes, now());
      } catch (error) {
        if (error instanceof WasmError && error.code === 'WASM_INVALID_MODULE')
          throw new WasmCacheError('WASM_INVALID_MODULE', `${hash}: ${error.message}`, {
            cause: error,
          });
        if (
          error instanceof WasmError &&
          (error.code === 'WASM_LINK_FAILED' || error.code === 'WASM_ENTRYPOINT_MISSING')
        )
          throw new WasmCacheError('WASM_COMPONENT_REFUSED', `${hash}: ${error.message}`, {
            cause: error,
            ...(error.details ? { details: error.details } : {}),
          });
        throw error;
      }
      emit({ type: 'edge.wasm.downloaded', hash, sizeBytes: bytes.length });
      return { hash, outcome: 'downloaded', sizeBytes: bytes.length };
    } catch (error) {
      emit({ type: 'edge.wasm.failed', hash, ...itemError(error) });
      throw error;
    } finally {
      signal?.removeEventListener('abort', forward);
      controllers.delete(controller);
    }
  };

  const cache: WasmCache = {
    async ensure(hash, options = {}) {
      if (!isSha256Hex(hash))
        throw new WasmCacheError(
          'WASM_HASH_INVALID',
          `${JSON.stringify(hash)} is not a SHA-256 digest (64 lowercase hex characters)`,
        );
      const running = inFlight.get(hash);
      if (running) return running;
      if (await hasCachedWasm(deps.store, hash))
        return { hash, outcome: 'cached', sizeBytes: null };
      if (stopped) throw new WasmCacheError('WASM_CACHE_STOPPED', 'the WASM cache is stopped');
      const again = inFlight.get(hash); // started while we looked
      if (again) return again;
      const started = download(hash, options.signal).finally(() => inFlight.delete(hash));
      inFlight.set(hash, started);
      return started;
    },
    has: (hash) => hasCachedWasm(deps.store, hash),
    async missing(hashes) {
      const out: string[] = [];
      for (const hash of new Set(hashes))
        if (!(await hasCachedWasm(deps.store, hash))) out.push(hash);
      return out;
    },
    prefetch(hashes) {
      const list = [...new Set(hashes)];
      const controller = new AbortController();
      const run = async (): Promise<WasmPrefetchReport> => {
        const items: WasmPrefetchItem[] = [];
        for (const [index, hash] of list.entries()) {
          if (controller.signal.aborted || stopped) break;
          let item: WasmPrefetchItem;
          try {
            const result = await cache.ensure(hash, { signal: controller.signal });
            item = { hash, outcome: result.outcome };
          } catch (error) {
            item = { hash, outcome: 'failed', error: itemError(error) };
          }
          items.push(item);
          emit({ type: 'edge.wasm.prefetch.progress', index, total: list.length, item });
        }
        const count = (outcome: WasmPrefetchItem['outcome']) =>
          items.filter((i) => i.outcome === outcome).length;
        const report: WasmPrefetchReport = {
          total: list.length,
          cached: count('cached'),
          downloaded: count('downloaded'),
          failed: count('failed'),
          items,
        };
        emit({ type: 'edge.wasm.prefetch.done', report });
        return report;
      };
      const done = run();
      const handle = { cancel: () => controller.abort(), done };
      prefetches.add(handle);
      void done.finally(() => prefetches.delete(handle));
      return handle;
    },
    source(options = {}) {
      const cached = deviceCacheWasmSource(deps.store, now);
      return {
        async read(hash) {
          const bytes = await cached.read(hash);
          if (bytes !== undefined || !options.fetchOnMiss || stopped) return bytes;
          try {
            await cache.ensure(hash);
          } catch {
            return undefined; // reported as edge.wasm.failed; the step sees a missing module
          }
          return cached.read(hash);
        },
      };
    },
    async stop() {
      stopped = true;
      for (const p of prefetches) p.cancel();
      for (const controller of controllers) controller.abort();
      await Promise.allSettled([...prefetches].map((p) => p.done));
      await Promise.allSettled([...inFlight.values()]);
    },
  };
  return cache;
}
