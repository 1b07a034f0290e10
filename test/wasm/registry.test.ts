/**
 * The WebAssembly registry on every store dialect: content-addressed registration (the same
 * bytes twice return the first row), semantic versions, lookups by hash and by name, files
 * written under WASM_STORAGE_DIR named by hash, bytes read back verified; the edge's
 * device_wasm_cache; and paths that try to leave the storage directory.
 */
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  cacheWasmBinary,
  compareSemver,
  findWasmComponent,
  getCachedWasm,
  getWasmComponent,
  insertWasmComponent,
  isSemver,
  listCachedWasm,
  listWasmComponents,
  readWasmComponentBytes,
  registerWasmComponent,
  sha256Hex,
  storeWasmSource,
  type WasmError,
  type CloudStore,
  type EdgeStore,
} from '../../runtime/index.js';
import {
  compileWatGuests,
  tampered,
  type Guest,
  type WatGuestName,
} from '../support/wasmGuests.js';
import { CLOUD_DIALECTS, openWithSchema, type TestStore, EDGE_DIALECT } from '../support/stores.js';

let guests: Record<WatGuestName, Guest>;
beforeAll(async () => {
  guests = await compileWatGuests();
});

const rejection = async (promise: Promise<unknown>): Promise<WasmError> => {
  try {
    await promise;
  } catch (error) {
    return error as WasmError;
  }
  throw new Error('expected a rejection');
};

describe('semantic version tags', () => {
  it('accepts semver and orders by precedence', () => {
    for (const tag of ['1.0.0', '0.1.2', '2.0.0-rc.1', '1.2.3+build.7', '10.20.30-alpha.beta.1'])
      expect(isSemver(tag), tag).toBe(true);
    for (const tag of ['1', '1.2', 'v1.2.3', '01.2.3', '1.2.3-', 'latest', ''])
      expect(isSemver(tag), tag).toBe(false);
    const sorted = [
      '1.0.0',
      '1.0.0-alpha',
      '1.0.0-alpha.1',
      '1.0.0-beta',
      '0.9.9',
      '1.0.0-alpha.beta',
      '1.0.0-rc.1',
      '2.0.0',
    ].sort(compareSemver);
    expect(sorted).toEqual([
      '0.9.9',
      '1.0.0-alpha',
      '1.0.0-alpha.1',
      '1.0.0-alpha.beta',
      '1.0.0-beta',
      '1.0.0-rc.1',
      '1.0.0',
      '2.0.0',
    ]);
  });
});

for (const dialect of CLOUD_DIALECTS) {
  describe(`WASM registry on ${dialect.name}`, () => {
    let handle: TestStore<CloudStore>;
    let storageDir: string;
    beforeEach(async () => {
      handle = await openWithSchema(dialect);
      storageDir = mkdtempSync(join(tmpdir(), 'saffron-wasm-store-'));
    });
    afterEach(async () => {
      await handle.close();
      rmSync(storageDir, { recursive: true, force: true });
    });

    it('registers a binary once, by content, and finds it by hash and by name', async () => {
      const first = await registerWasmComponent(
        handle.store,
        guests.echo.bytes,
        {
          name: 'echo',
          versionTag: '1.0.0',
          description: 'echoes its input',
          inputSchema: { type: 'object' },
          outputSchema: '{"type":"object","required":["echo"]}',
        },
        { storageDir },
      );
      expect(first.created).toBe(true);
      expect(first.component).toMatchObject({
        name: 'echo',
        versionTag: '1.0.0',
        binaryHash: guests.echo.hash,
        blobStoragePath: join(storageDir, `${guests.echo.hash}.wasm`),
        description: 'echoes its input',
        inputSchema: '{"type":"object"}',
        outputSchema: '{"type":"object","required":["echo"]}',
        sizeBytes: guests.echo.bytes.length,
      });
      expect(readdirSync(storageDir)).toEqual([`${guests.echo.hash}.wasm`]); // no temp file left
      expect(sha256Hex(readFileSync(first.component.blobStoragePath))).toBe(guests.echo.hash);

      const again = await registerWasmComponent(
        handle.store,
        guests.echo.bytes,
        { name: 'other-name', versionTag: '9.9.9' },
        { storageDir },
      );
      expect(again).toEqual({ component: first.component, created: false });
      expect(await listWasmComponents(handle.store)).toHaveLength(1);

      await registerWasmComponent(
        handle.store,
        guests.reactor.bytes,
        { name: 'echo', versionTag: '1.10.0' },
        { storageDir },
      );
      await registerWasmComponent(
        handle.store,
        guests.both.bytes,
        { name: 'echo', versionTag: '1.2.0' },
        { storageDir },
      );
      expect((await findWasmComponent(handle.store, 'echo'))?.binaryHash).toBe(guests.reactor.hash);
      expect((await findWasmComponent(handle.store, 'echo', '1.2.0'))?.binaryHash).toBe(
        guests.both.hash,
      );
      expect(await findWasmComponent(handle.store, 'echo', '3.0.0')).toBeUndefined();
      expect(await findWasmComponent(handle.store, 'nope')).toBeUndefined();
      expect((await getWasmComponent(handle.store, guests.both.hash))?.versionTag).toBe('1.2.0');
      expect((await listWasmComponents(handle.store)).map((c) => c.versionTag)).toEqual([
        '1.0.0',
        '1.10.0',
        '1.2.0',
      ]);

      const bytes = await readWasmComponentBytes(handle.store, guests.echo.hash, { storageDir });
      expect(bytes && sha256Hex(bytes)).toBe(guests.echo.hash);
      expect(
        await readWasmComponentBytes(handle.store, 'cd'.repeat(32), { storageDir }),
      ).toBeUndefined();
    });

    it('restores a registered binary’s lost file when the same bytes are registered again', async () => {
      const { component } = await registerWasmComponent(
        handle.store,
        guests.echo.bytes,
        { name: 'echo', versionTag: '1.0.0' },
        { storageDir },
      );
      rmSync(component.blobStoragePath);
      const source = storeWasmSource(handle.store, { storageDir });
      await expect(rejection(source.read(guests.echo.hash))).resolves.toMatchObject({
        code: 'WASM_MODULE_NOT_FOUND',
      });
      await registerWasmComponent(
        handle.store,
        guests.echo.bytes,
        { name: 'echo', versionTag: '1.0.0' },
        { storageDir },
      );
      expect(existsSync(component.blobStoragePath)).toBe(true);
    });

    it('refuses what is not a WebAssembly module, bad versions and bad schemas', async () => {
      const register = (bytes: Uint8Array, versionTag = '1.0.0', extra = {}) =>
        rejection(
          registerWasmComponent(
            handle.store,
            bytes,
            { name: 'x', versionTag, ...extra },
            { storageDir },
          ),
        );
      await expect(register(Buffer.from('#!/bin/sh\necho hi\n'))).resolves.toMatchObject({
        code: 'WASM_INVALID_MODULE',
        message: expect.stringContaining('magic number') as string,
      });
      const header = Uint8Array.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 0xff, 0xff]);
      await expect(register(header)).resolves.toMatchObject({
        code: 'WASM_INVALID_MODULE',
        message: expect.stringContaining('does not validate') as string,
      });
      await expect(register(guests.echo.bytes, 'v1')).resolves.toMatchObject({
        code: 'WASM_VERSION_INVALID',
      });
      await expect(
        register(guests.echo.bytes, '1.0.0', { inputSchema: '{nope' }),
      ).resolves.toMatchObject({
        code: 'WASM_METADATA_INVALID',
        details: { field: 'input_schema' },
      });
      await expect(
        register(guests.echo.bytes, '1.0.0', { outputSchema: [1] }),
      ).resolves.toMatchObject({
        code: 'WASM_METADATA_INVALID',
      });
      expect(await listWasmComponents(handle.store)).toEqual([]);
      expect(readdirSync(storageDir)).toEqual([]);
    });

    it('refuses registry paths that leave WASM_STORAGE_DIR, and a tampered file', async () => {
      const outside = mkdtempSync(join(tmpdir(), 'saffron-wasm-outside-'));
      try {
        writeFileSync(join(outside, 'echo.wasm'), guests.echo.bytes);
        symlinkSync(join(outside, 'echo.wasm'), join(storageDir, 'link.wasm'));
        const row = (hash: string, blobStoragePath: string) =>
          insertWasmComponent(handle.store, {
            id: crypto.randomUUID(),
            name: 'evil',
            versionTag: '1.0.0',
            binaryHash: hash,
            blobStoragePath,
            sizeBytes: 1,
          });
        const hashes = ['01', '02', '03'].map((p) => p.repeat(32));
        await row(hashes[0]!, join(storageDir, '..', 'x', '..', 'echo.wasm'));
        await row(hashes[1]!, join(outside, 'echo.wasm'));
        await row(hashes[2]!, join(storageDir, 'link.wasm'));
        const source = storeWasmSource(handle.store, { storageDir });
        for (const hash of hashes)
          await expect(rejection(source.read(hash))).resolves.toMatchObject({
            code: 'WASM_PATH_REFUSED',
          });

        const { component } = await registerWasmComponent(
          handle.store,
          guests.echo.bytes,
          { name: 'echo', versionTag: '1.0.0' },
          { storageDir },
        );
        writeFileSync(component.blobStoragePath, tampered(guests.echo));
        await expect(
          rejection(readWasmComponentBytes(handle.store, guests.echo.hash, { storageDir })),
        ).resolves.toMatchObject({
          code: 'WASM_HASH_MISMATCH',
        });
      } finally {
        rmSync(outside, { recursive: true, force: true });
      }
    });
  });
}

const sqlite = EDGE_DIALECT;
describe('WASM cache on the edge (sqlite)', () => {
  let handle: TestStore<EdgeStore>;
  beforeEach(async () => {
    handle = await openWithSchema(sqlite);
  });
  afterEach(() => handle.close());

  it('caches binaries by hash, idempotently, and refreshes last_accessed on use', async () => {
    const t0 = new Date('2026-01-01T00:00:00Z');
    expect(await cacheWasmBinary(handle.store, guests.echo.bytes, t0)).toEqual({
      hash: guests.echo.hash,
      created: true,
    });
    expect(await cacheWasmBinary(handle.store, guests.echo.bytes, t0)).toEqual({
      hash: guests.echo.hash,
      created: false,
    });
    await expect(
      rejection(cacheWasmBinary(handle.store, Buffer.from('not wasm'))),
    ).resolves.toMatchObject({
      code: 'WASM_INVALID_MODULE',
    });
    expect(await listCachedWasm(handle.store)).toEqual([
      { binaryHash: guests.echo.hash, sizeBytes: guests.echo.bytes.length, lastAccessed: t0 },
    ]);
    let now = new Date('2026-01-01T01:00:00Z');
    const source = storeWasmSource(handle.store, { now: () => now });
    const bytes = await source.read(guests.echo.hash);
    expect(bytes && sha256Hex(bytes)).toBe(guests.echo.hash);
    expect((await listCachedWasm(handle.store))[0]?.lastAccessed).toEqual(now);
    const touched = now;
    now = new Date(now.getTime() + 10_000); // within a minute: no write
    await source.read(guests.echo.hash);
    expect((await listCachedWasm(handle.store))[0]?.lastAccessed).toEqual(touched);
    expect(await source.read('ef'.repeat(32))).toBeUndefined();
    expect(await getCachedWasm(handle.store, 'ef'.repeat(32))).toBeUndefined();
  });

  it('has no registry: registering on an edge store is refused', async () => {
    await expect(
      rejection(
        registerWasmComponent(
          handle.store,
          guests.echo.bytes,
          { name: 'echo', versionTag: '1.0.0' },
          { storageDir: tmpdir() },
        ),
      ),
    ).resolves.toMatchObject({ code: 'WASM_REGISTRY_UNSUPPORTED' });
  });
});
