/**
 * Components on the edge: the device's WASM cache downloads a component from a real gateway
 * on loopback into a real SQLite store exactly as it does a module — verified by hash, then
 * checked and transpiled before the row is written — and the engine runs it from the cache.
 * A component the sandbox would refuse (it imports sockets; placed in the registry behind
 * the API's back) is refused by the cache with WASM_COMPONENT_REFUSED and nothing stored.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCloudClient, createWasmCache, type WasmCache } from '../../edge/index.js';
import { insertWasmComponent, listCachedWasm } from '../../runtime/index.js';
import { definition, engineFor } from '../support/engine.js';
import { openEdgeStore, type EdgeStoreHandle } from '../support/edgeComponents.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CLOUD_DIALECTS } from '../support/stores.js';
import { compileWatGuests, type Guest } from '../support/wasmGuests.js';
import { commandComponent, socketComponent, typedComponent } from './componentGuests.js';

describe('components in the edge WASM cache', () => {
  let gw: TestGateway;
  let storageDir: string;
  let edge: EdgeStoreHandle;
  let cache: WasmCache;
  let echo: Guest;
  let typed: Guest;
  let socket: Guest;

  const upload = async (guest: Guest, name: string) => {
    const res = await gw.asUser(
      gw.adminToken,
      `/api/v1/wasm-components?name=${name}&version_tag=1.0.0`,
      {
        method: 'POST',
        body: Buffer.from(guest.bytes),
        headers: { 'content-type': 'application/wasm' },
      },
    );
    expect([200, 201], await res.clone().text()).toContain(res.status);
  };

  beforeAll(async () => {
    echo = await commandComponent((await compileWatGuests()).echo);
    typed = await typedComponent();
    socket = await socketComponent();
    storageDir = mkdtempSync(join(tmpdir(), 'saffron-edge-components-'));
    gw = await startTestGateway(CLOUD_DIALECTS[0]!, { wasmStorageDir: storageDir });
    await upload(echo, 'echo-component');
    await upload(typed, 'typed-component');
    // the registry's API refuses it; an operator's hand in the database does not
    const file = join(storageDir, `${socket.hash}.wasm`);
    writeFileSync(file, socket.bytes);
    await insertWasmComponent(gw.handle.store, {
      id: randomUUID(),
      name: 'sockets',
      versionTag: '1.0.0',
      binaryHash: socket.hash,
      blobStoragePath: file,
      sizeBytes: socket.bytes.length,
    });
    const deviceId = 'edge-components';
    const secret = await gw.insertDevice(deviceId);
    edge = await openEdgeStore();
    cache = createWasmCache({
      store: edge.store,
      cloud: createCloudClient({ baseUrl: gw.url, deviceId, secret }),
    });
  }, 60_000);
  afterAll(async () => {
    await cache?.stop();
    await edge?.close();
    await gw?.close();
    rmSync(storageDir, { recursive: true, force: true });
  });

  it('downloads and caches a component as it does a module; the engine runs it from the cache', async () => {
    expect(await cache.ensure(echo.hash)).toEqual({
      hash: echo.hash,
      outcome: 'downloaded',
      sizeBytes: echo.bytes.length,
    });
    expect(await cache.ensure(echo.hash)).toMatchObject({ outcome: 'cached' });
    const handle = { store: edge.store, location: edge.file, close: () => Promise.resolve() };
    const rt = engineFor(handle, { wasmSource: cache.source({ fetchOnMiss: true }) });
    try {
      for (const [hash, expected] of [
        [echo.hash, { echo: { amount: 12 }, guest: 'wat' }],
        [typed.hash, { typed: { amount: 12 } }],
      ] as const) {
        const def = await definition(`
workflow_type: edge_component_${hash.slice(0, 8)}
steps:
  - name: score
    type: WASM
    wasm_config:
      wasm_hash: ${hash}
`);
        const started = await rt.start(def, { amount: 12 });
        const done = await rt.runUntilSettled(started.id);
        expect(done.status).toBe('COMPLETED');
        expect(done.state).toMatchObject(expected);
      }
      // the typed component was fetched on its first use
      expect(await cache.has(typed.hash)).toBe(true);
    } finally {
      await rt.close();
    }
  });

  it('refuses a component importing sockets, storing nothing', async () => {
    await expect(cache.ensure(socket.hash)).rejects.toMatchObject({
      name: 'WasmCacheError',
      code: 'WASM_COMPONENT_REFUSED',
      details: { refused_imports: ['wasi:sockets/tcp-create-socket@0.2.0'] },
    });
    const cached = (await listCachedWasm(edge.store)).map((c) => c.binaryHash);
    expect(cached).not.toContain(socket.hash);
  });
});
