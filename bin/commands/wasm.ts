/**
 * `saffron wasm add | list`: put WebAssembly binaries where WASM steps of the engine database
 * find them, and show what is there. They open the database as the engine commands do
 * (`--db`, DATABASE_URL, else ./.saffron/saffron.db), so a binary added with the same `--db`
 * is the one `saffron run` resolves: on SQLite the `device_wasm_cache` table (which keeps
 * only hash, bytes and last use — the name and version are checked, not stored), on
 * PostgreSQL and PGlite a file under WASM_STORAGE_DIR (default ./wasm_storage) plus its
 * `wasm_components` row. The hash is printed alone on stdout, so scripts can capture it.
 * A binary is a WASI preview1 core module or a WebAssembly component (WASI 0.2, transpiled
 * and checked when it is added; docs/guides/wasm-components.md).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import {
  cacheWasmBinary,
  checkWasmBinary,
  asCloud,
  asEdge,
  isSemver,
  listCachedWasm,
  listWasmComponents,
  registerWasmComponent,
  WasmError,
  wasmStorageDir,
  type CachedWasm,
  type Store,
  type WasmComponent,
} from '../../runtime/index.js';
import { engineAction } from '../engineAction.js';
import { openEngineStore } from '../engineStore.js';
import { CliExit, type CliIo, printJson, printRows } from '../io.js';
import { databaseOptions, type DatabaseOptions } from '../storeOption.js';

interface WasmOptions extends DatabaseOptions {
  json?: boolean;
}

interface AddOptions extends WasmOptions {
  name: string;
  versionTag: string;
  description?: string;
  inputSchema?: string;
  outputSchema?: string;
}

async function withEngineStore<T>(
  options: WasmOptions,
  io: CliIo,
  fn: (store: Store) => Promise<T>,
): Promise<T> {
  const store = await openEngineStore(options, io, 2);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

function readBinary(file: string, io: CliIo): Uint8Array {
  try {
    return new Uint8Array(readFileSync(resolve(io.cwd, file)));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CliExit(
      2,
      `cannot read ${file}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : String(error)}`,
    );
  }
}

/** A JSON Schema option: inline JSON, or `@FILE` to read it from a file. */
function schemaOption(value: string | undefined, io: CliIo): string | undefined {
  if (value === undefined || !value.startsWith('@')) return value;
  try {
    return readFileSync(resolve(io.cwd, value.slice(1)), 'utf8');
  } catch {
    throw new CliExit(2, `cannot read schema file ${value.slice(1)}`);
  }
}

async function add(file: string, options: AddOptions, io: CliIo): Promise<void> {
  const bytes = readBinary(file, io);
  // before opening (and perhaps creating) the database; a component is transpiled here
  const kind = await checkWasmBinary(bytes);
  if (!isSemver(options.versionTag))
    throw new WasmError(
      'WASM_VERSION_INVALID',
      `--version-tag ${JSON.stringify(options.versionTag)} is not a semantic version (MAJOR.MINOR.PATCH, e.g. 1.4.0)`,
    );
  const storageDir = wasmStorageDir(io.env, io.cwd);
  const result = await withEngineStore(options, io, async (store) => {
    if (store.dialect === 'sqlite') {
      const cached = await cacheWasmBinary(store, bytes);
      return { ...cached, storedIn: 'device_wasm_cache', path: undefined };
    }
    const { component, created } = await registerWasmComponent(
      store,
      bytes,
      {
        name: options.name,
        versionTag: options.versionTag,
        ...(options.description === undefined ? {} : { description: options.description }),
        inputSchema: schemaOption(options.inputSchema, io),
        outputSchema: schemaOption(options.outputSchema, io),
      },
      { storageDir },
    );
    return {
      hash: component.binaryHash,
      created,
      storedIn: 'wasm_components',
      path: component.blobStoragePath,
      name: component.name,
      versionTag: component.versionTag,
    };
  });
  if (options.json) {
    printJson(io, {
      ok: true,
      hash: result.hash,
      created: result.created,
      stored_in: result.storedIn,
      kind,
      size_bytes: bytes.length,
      ...(result.path === undefined ? {} : { blob_storage_path: result.path }),
      ...('name' in result ? { name: result.name, version_tag: result.versionTag } : {}),
    });
    return;
  }
  io.stdout.write(`${result.hash}\n`);
  const what = `${options.name} ${options.versionTag}, ${kind}, ${bytes.length} bytes`;
  if (!result.created)
    io.stderr.write(`saffron: already present in ${result.storedIn} (${result.hash})\n`);
  else if (result.path !== undefined)
    io.stderr.write(`saffron: registered ${what} in wasm_components; file ${result.path}\n`);
  else
    io.stderr.write(
      `saffron: cached ${what} in device_wasm_cache (name and version are not kept on the edge)\n`,
    );
}

const time = (at: Date) => at.toISOString();

function componentJson(c: WasmComponent): Record<string, unknown> {
  return {
    binary_hash: c.binaryHash,
    name: c.name,
    version_tag: c.versionTag,
    description: c.description,
    size_bytes: c.sizeBytes,
    blob_storage_path: c.blobStoragePath,
    input_schema: c.inputSchema,
    output_schema: c.outputSchema,
    created_at: time(c.createdAt),
  };
}

function cachedJson(c: CachedWasm): Record<string, unknown> {
  return {
    binary_hash: c.binaryHash,
    size_bytes: c.sizeBytes,
    last_accessed: time(c.lastAccessed),
  };
}

async function list(options: WasmOptions, io: CliIo): Promise<void> {
  const listing = await withEngineStore(options, io, async (store) =>
    store.dialect === 'sqlite'
      ? { edge: await listCachedWasm(asEdge(store)) }
      : { cloud: await listWasmComponents(asCloud(store)) },
  );
  if (options.json) {
    printJson(io, {
      binaries: listing.edge ? listing.edge.map(cachedJson) : listing.cloud.map(componentJson),
    });
    return;
  }
  if ((listing.edge ?? listing.cloud).length === 0) {
    io.stdout.write('no WASM binaries\n');
    return;
  }
  if (listing.edge)
    printRows(io, [
      ['HASH', 'SIZE', 'LAST ACCESSED'],
      ...listing.edge.map((c) => [c.binaryHash, String(c.sizeBytes), time(c.lastAccessed)]),
    ]);
  else
    printRows(io, [
      ['HASH', 'NAME', 'VERSION', 'SIZE', 'CREATED'],
      ...listing.cloud.map((c) => [
        c.binaryHash,
        c.name,
        c.versionTag,
        String(c.sizeBytes ?? '-'),
        time(c.createdAt),
      ]),
    ]);
}

/** Register `wasm add` and `wasm list`. */
export function registerWasmCommands(program: Command, io: CliIo): void {
  const wasm = program
    .command('wasm')
    .description('WebAssembly binaries of WASM steps (device_wasm_cache or wasm_components)');
  databaseOptions(
    wasm
      .command('add')
      .description(
        'store a WebAssembly module where WASM steps of this database find it, and print its SHA-256 (the wasm_hash to use)',
      )
      .argument('<file>', 'the .wasm file')
      .requiredOption('--name <name>', 'component name (kept on cloud stores)')
      .requiredOption('--version-tag <semver>', 'semantic version, e.g. 1.0.0')
      .option('--description <text>', 'what the module does (cloud stores)')
      .option('--input-schema <json>', 'JSON Schema of its input, inline or @FILE (cloud stores)')
      .option(
        '--output-schema <json>',
        'JSON Schema of its output, inline or @FILE (cloud stores)',
      ),
  ).action(engineAction(io, (file: string, options: AddOptions) => add(file, options, io)));
  databaseOptions(
    wasm
      .command('list')
      .description('list stored binaries: hash, name, version, size (cloud) or last use (edge)'),
  ).action(engineAction(io, (options: WasmOptions) => list(options, io)));
}
