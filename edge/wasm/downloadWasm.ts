/**
 * Download one binary from the cloud registry (`GET /api/v1/wasm-components/{hash}/download`,
 * a signed device request) and verify its SHA-256 before anyone sees the bytes (spec: "The
 * caller verifies its SHA-256"). The body is read with a size cap, so a broken or hostile
 * answer cannot make a payment terminal buffer gigabytes.
 */
import { hashMatches, sha256Hex } from '../../runtime/index.js';
import type { CloudClient } from '../cloud/cloudClient.js';
import { WasmCacheError } from './errors.js';

/** Largest binary a device accepts by default (the registry's upload limit). */
export const DEFAULT_MAX_WASM_BYTES = 16 * 1024 * 1024;

async function readCapped(response: Response, maxBytes: number, hash: string) {
  const declared = Number(response.headers.get('content-length') ?? NaN);
  const tooLarge = () =>
    new WasmCacheError('WASM_DOWNLOAD_TOO_LARGE', `${hash} is larger than ${maxBytes} bytes`, {
      details: { max_bytes: maxBytes },
    });
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel();
    throw tooLarge();
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  if (response.body) {
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel();
        throw tooLarge();
      }
      chunks.push(value);
    }
  }
  return Buffer.concat(chunks, total);
}

/**
 * The verified bytes of binary `hash`. Throws a {@link WasmCacheError}: WASM_NOT_IN_REGISTRY
 * (404), WASM_HASH_INVALID (400), WASM_DOWNLOAD_FAILED (network, other statuses; retryable),
 * WASM_DOWNLOAD_TOO_LARGE, WASM_HASH_MISMATCH.
 */
export async function downloadWasm(
  cloud: CloudClient,
  hash: string,
  options: { signal?: AbortSignal; maxBytes?: number } = {},
): Promise<Uint8Array> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_WASM_BYTES;
  let bytes: Uint8Array;
  try {
    const response = await cloud.request({
      path: `/api/v1/wasm-components/${hash}/download`,
      headers: { accept: 'application/wasm' },
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (response.status !== 200) {
      await response.body?.cancel();
      if (response.status === 404)
        throw new WasmCacheError('WASM_NOT_IN_REGISTRY', `the cloud has no WASM binary ${hash}`);
      if (response.status === 400)
        throw new WasmCacheError('WASM_HASH_INVALID', `the cloud refused hash ${hash}`);
      throw new WasmCacheError(
        'WASM_DOWNLOAD_FAILED',
        `the cloud answered ${response.status} to the download of ${hash}`,
        { retryable: response.status >= 500 || response.status === 429 },
      );
    }
    bytes = await readCapped(response, maxBytes, hash);
  } catch (error) {
    if (error instanceof WasmCacheError) throw error;
    throw new WasmCacheError('WASM_DOWNLOAD_FAILED', `could not download ${hash}`, {
      cause: error,
      retryable: true,
    });
  }
  if (!hashMatches(bytes, hash))
    throw new WasmCacheError('WASM_HASH_MISMATCH', `the bytes received do not hash to ${hash}`, {
      details: { actual_hash: sha256Hex(bytes), size_bytes: bytes.length },
    });
  return bytes;
}
