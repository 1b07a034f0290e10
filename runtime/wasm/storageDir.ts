/**
 * `WASM_STORAGE_DIR` (spec; default `./wasm_storage`): where the cloud keeps registered
 * binaries, one file per binary named by its hash. A registry row's `blob_storage_path` is
 * data in a database, so it is never trusted to name a file: it must resolve — lexically and
 * after following symlinks — to a file inside this directory, or the read is refused.
 */
import { realpath } from 'node:fs/promises';
import * as path from 'node:path';
import { WasmError } from './errors.js';

/** The spec's default storage directory, relative to the working directory. */
export const DEFAULT_WASM_STORAGE_DIR = './wasm_storage';

/** The storage directory named by `env.WASM_STORAGE_DIR` (else the default), made absolute. */
export function wasmStorageDir(
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): string {
  const configured = env.WASM_STORAGE_DIR;
  return path.resolve(cwd, configured ? configured : DEFAULT_WASM_STORAGE_DIR);
}

/** Where the binary with `hash` is stored under `dir`. */
export function wasmBlobPath(dir: string, hash: string): string {
  return path.join(path.resolve(dir), `${hash}.wasm`);
}

function inside(dir: string, file: string): boolean {
  const relative = path.relative(dir, file);
  return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative);
}

function refused(stored: string, dir: string): WasmError {
  return new WasmError(
    'WASM_PATH_REFUSED',
    `the registered path ${JSON.stringify(stored)} is outside WASM_STORAGE_DIR (${dir}); refusing to read it`,
    { details: { blob_storage_path: stored } },
  );
}

/**
 * The real path of `stored` (absolute, or relative to `dir`) after checking that it stays
 * inside `dir`. Throws WASM_PATH_REFUSED when it escapes (`..`, an absolute path elsewhere, a
 * symlink pointing out); rejects with the file system's error (ENOENT…) when it is missing.
 */
export async function resolveStoredBlob(dir: string, stored: string): Promise<string> {
  const root = path.resolve(dir);
  const lexical = path.resolve(root, stored);
  if (stored.includes('\0') || !inside(root, lexical)) throw refused(stored, root);
  const [realRoot, realFile] = await Promise.all([realpath(root), realpath(lexical)]);
  if (!inside(realRoot, realFile)) throw refused(stored, root);
  return realFile;
}
