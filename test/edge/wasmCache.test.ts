/**
 * The edge WASM cache against a real gateway on loopback (binaries uploaded to its registry)
 * and a real SQLite edge store: `ensure` downloads, verifies and stores a binary, and is a
 * no-op once it is cached; bytes that do not hash to their address, unknown and malformed
 * hashes are refused with nothing stored; `sync_wasm` commands run it; definitions are
 * scanned for WASM steps (LOOP bodies too) and prefetched with per-item results; and the
 * engine runs a WASM step whose binary it resolves through the cache's source.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createCloudClient,
  createCommandChannel,
  createWasmCache,
  defaultCommandHandlers,
  wasmHashesOf,
  type CommandChannelEvent,
  type WasmCache,
  type WasmCacheEvent,
} from '../../edge/index.js';
import { listCachedWasm, sha256Hex } from '../../runtime/index.js';
import { definition, engineFor } from '../support/engine.js';
import {
  eventLog,
  openEdgeStore,
  type EdgeStoreHandle,
  type EventLog,
} from '../support/edgeComponents.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CLOUD_DIALECTS } from '../support/stores.js';
import { compileWatGuests, type Guest, type WatGuestName } from '../support/wasmGuests.js';

describe('edge WASM cache', () => {
  let gw: TestGateway;
  let guests: Record<WatGuestName, Guest>;
  let edge: EdgeStoreHandle;
  let deviceId: string;
  let secret: string;
  let counter = 0;
  let log: EventLog<WasmCacheEvent>;
  let downloads: string[];
  /** Rewrites download bodies on their way to the agent when set. */
  let alter: ((bytes: Uint8Array) => Uint8Array) | undefined;
  let cache: WasmCache;

  const interposed: typeof fetch = async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    const response = await fetch(input, init);
    if (!url.includes('/wasm-components/')) return response;
    downloads.push(url.split('/').at(-2)!);
    if (!alter || response.status !== 200) return response;
    const bytes = alter(new Uint8Array(await response.arrayBuffer()));
    return new Response(Buffer.from(bytes), { status: 200 });
  };
  const cloud = () => createCloudClient({ baseUrl: gw.url, deviceId, secret, fetch: interposed });
  const cachedHashes = async () => (await listCachedWasm(edge.store)).map((c) => c.binaryHash);
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
    gw = await startTestGateway(CLOUD_DIALECTS[0]!);
    guests = await compileWatGuests();
    await upload(guests.echo, 'echo');
    await upload(guests.exit7, 'exit7');
  });
  afterAll(async () => {
    await gw.close();
  });
  beforeEach(async (context) => {
    deviceId = `edge-wasm-${++counter}`;
    secret = await gw.insertDevice(deviceId);
    edge = await openEdgeStore();
    log = eventLog<WasmCacheEvent>();
    downloads = [];
    alter = undefined;
    cache = createWasmCache({ store: edge.store, cloud: cloud(), onEvent: log.push });
    context.onTestFinished(async () => {
      await cache.stop();
      await edge.close();
    });
  });

  it('downloads, verifies and stores a binary; once cached, ensure does nothing', async () => {
    const { hash, bytes } = guests.echo;
    expect(await cache.has(hash)).toBe(false);
    expect(await cache.ensure(hash)).toEqual({
      hash,
      outcome: 'downloaded',
      sizeBytes: bytes.length,
    });
    const row = await edge.store.edge
      .selectFrom('device_wasm_cache')
      .selectAll()
      .where('binary_hash', '=', hash)
      .executeTakeFirstOrThrow();
    expect(sha256Hex(row.binary_data)).toBe(hash);
    expect(Buffer.from(row.binary_data).equals(Buffer.from(bytes))).toBe(true);
    expect(downloads).toEqual([hash]);

    expect(await cache.ensure(hash)).toEqual({ hash, outcome: 'cached', sizeBytes: null });
    expect(downloads).toEqual([hash]); // no second request
    expect(log.all('edge.wasm.downloaded')).toEqual([
      { type: 'edge.wasm.downloaded', hash, sizeBytes: bytes.length },
    ]);
  });

  it('shares one download between callers ensuring the same hash at once', async () => {
    const results = await Promise.all([
      cache.ensure(guests.echo.hash),
      cache.ensure(guests.echo.hash),
      cache.ensure(guests.echo.hash),
    ]);
    expect(results.map((r) => r.outcome)).toContain('downloaded');
    expect(downloads).toEqual([guests.echo.hash]);
  });

  it('refuses bytes that do not hash to their address, and stores nothing', async () => {
    alter = (bytes) => {
      const copy = new Uint8Array(bytes);
      copy.set([copy.at(-1)! ^ 0xff], copy.length - 1);
      return copy;
    };
    await expect(cache.ensure(guests.echo.hash)).rejects.toMatchObject({
      name: 'WasmCacheError',
      code: 'WASM_HASH_MISMATCH',
      retryable: false,
    });
    expect(await cachedHashes()).toEqual([]);
    expect(log.all('edge.wasm.failed')).toMatchObject([{ code: 'WASM_HASH_MISMATCH' }]);
  });

  it('refuses hashes the registry does not know and malformed ones', async () => {
    const unknown = sha256Hex(new TextEncoder().encode('never uploaded'));
    await expect(cache.ensure(unknown)).rejects.toMatchObject({ code: 'WASM_NOT_IN_REGISTRY' });
    await expect(cache.ensure('ABC')).rejects.toMatchObject({ code: 'WASM_HASH_INVALID' });
    await expect(cache.ensure(guests.echo.hash.toUpperCase())).rejects.toMatchObject({
      code: 'WASM_HASH_INVALID',
    });
    expect(downloads).toEqual([unknown]); // the malformed ones never left the device
    expect(await cachedHashes()).toEqual([]);
  });

  it('reports an unreachable cloud as a retryable download failure', async () => {
    const offline = createWasmCache({
      store: edge.store,
      cloud: createCloudClient({
        baseUrl: gw.url,
        deviceId,
        secret,
        fetch: () => Promise.reject(new TypeError('fetch failed')),
      }),
    });
    await expect(offline.ensure(guests.echo.hash)).rejects.toMatchObject({
      code: 'WASM_DOWNLOAD_FAILED',
      retryable: true,
    });
    await offline.stop();
  });

  it('runs sync_wasm commands: fetched once, then a no-op; a wrong hash fails the command', async () => {
    const sender = gw.adminToken; // an operator's sync_wasm would wait for approval
    const commands = eventLog<CommandChannelEvent>();
    const channel = createCommandChannel({
      store: edge.store,
      cloud: cloud(),
      handlers: defaultCommandHandlers({ wasm: cache }),
      cloudPublicKey: () => gw.keys.publicKeyPem,
      reconnect: { baseMs: 20, maxMs: 200 },
      onEvent: commands.push,
    });
    await channel.start();
    try {
      await commands.next('edge.commands.connected');
      const send = async (type: string, payload: Record<string, unknown>) => {
        const res = await gw.asUser(sender, `/api/v1/devices/${deviceId}/commands`, {
          method: 'POST',
          body: JSON.stringify({ command_type: type, payload }),
        });
        expect(res.status).toBe(201);
        const { command_id } = (await res.json()) as { command_id: string };
        await commands.next('edge.commands.acked', (e) => e.commandId === command_id);
        return gw.handle.store.cloud
          .selectFrom('device_commands')
          .select(['status', 'result', 'error'])
          .where('command_id', '=', command_id)
          .executeTakeFirstOrThrow();
      };
      const { hash, bytes } = guests.exit7;
      expect(await send('sync_wasm', { binary_hash: hash })).toMatchObject({
        status: 'EXECUTED',
        result: { binary_hash: hash, outcome: 'downloaded', size_bytes: bytes.length },
      });
      expect(await send('SYNC_WASM', { binary_hash: hash, name: 'exit7' })).toMatchObject({
        status: 'EXECUTED',
        result: { binary_hash: hash, outcome: 'cached', size_bytes: null },
      });
      expect(downloads).toEqual([hash]);
      const unknown = sha256Hex(new TextEncoder().encode('not in the registry'));
      const failed = await send('sync_wasm', { binary_hash: unknown });
      expect(failed).toMatchObject({ status: 'FAILED', result: { code: 'WASM_NOT_IN_REGISTRY' } });
      expect(await cachedHashes()).toEqual([hash]);
    } finally {
      await channel.stop();
    }
  });

  it('scans definitions for WASM steps (LOOP bodies too) and prefetches what is missing', async () => {
    const unknown = sha256Hex(new TextEncoder().encode('missing from the registry'));
    const defs = [
      await definition(`
workflow_type: scoring
steps:
  - name: score
    type: WASM
    wasm_config:
      wasm_hash: ${guests.echo.hash}
  - name: per_item
    type: LOOP
    mode: ITERATE
    iterate_over: state.items
    item_var_name: item
    max_iterations: 10
    loop_body:
      - name: check_item
        type: WASM
        wasm_config:
          wasm_hash: ${guests.exit7.hash}
`),
      await definition(`
workflow_type: other
steps:
  - name: again
    type: WASM
    wasm_config:
      wasm_hash: ${guests.echo.hash}
  - name: lost
    type: WASM
    wasm_config:
      wasm_hash: ${unknown}
`),
    ];
    const hashes = wasmHashesOf(defs);
    expect(hashes).toEqual([guests.echo.hash, guests.exit7.hash, unknown]);
    await cache.ensure(guests.exit7.hash);
    expect(await cache.missing(hashes)).toEqual([guests.echo.hash, unknown]);

    const prefetch = cache.prefetch(hashes);
    const report = await prefetch.done;
    expect(report).toMatchObject({ total: 3, cached: 1, downloaded: 1, failed: 1 });
    expect(report.items).toEqual([
      { hash: guests.echo.hash, outcome: 'downloaded' },
      { hash: guests.exit7.hash, outcome: 'cached' },
      {
        hash: unknown,
        outcome: 'failed',
        error: expect.objectContaining({
          code: 'WASM_NOT_IN_REGISTRY',
          retryable: false,
        }) as unknown,
      },
    ]);
    expect(
      log.all('edge.wasm.prefetch.progress').map((e) => [e.index, e.total, e.item.outcome]),
    ).toEqual([
      [0, 3, 'downloaded'],
      [1, 3, 'cached'],
      [2, 3, 'failed'],
    ]);
    expect(await log.next('edge.wasm.prefetch.done')).toEqual({
      type: 'edge.wasm.prefetch.done',
      report,
    });
    expect((await cachedHashes()).sort()).toEqual([guests.echo.hash, guests.exit7.hash].sort());
  });

  it('gives the engine a source that resolves binaries from the cache, fetching a missing one', async () => {
    const handle = { store: edge.store, location: edge.file, close: () => Promise.resolve() };
    const rt = engineFor(handle, { wasmSource: cache.source({ fetchOnMiss: true }) });
    try {
      const def = await definition(`
workflow_type: edge_scoring
steps:
  - name: score
    type: WASM
    wasm_config:
      wasm_hash: ${guests.echo.hash}
`);
      expect(await cache.has(guests.echo.hash)).toBe(false);
      const started = await rt.start(def, { amount: 12 });
      const done = await rt.runUntilSettled(started.id);
      expect(done.status).toBe('COMPLETED');
      expect(done.state).toMatchObject({ echo: { amount: 12 }, guest: 'wat' });
      expect(downloads).toEqual([guests.echo.hash]);
      // without fetching, a binary that is not cached is simply not found
      const cachedOnly = cache.source();
      expect(await cachedOnly.read(guests.exit7.hash)).toBeUndefined();
      expect(downloads).toEqual([guests.echo.hash]);
    } finally {
      await rt.close();
    }
  });

  it('stop() ends a prefetch and refuses new downloads', async () => {
    const prefetch = cache.prefetch([guests.echo.hash, guests.exit7.hash]);
    await cache.stop();
    const report = await prefetch.done;
    expect(report).toMatchObject({ total: 2, downloaded: 0 });
    expect(report.items.length).toBeLessThan(2);
    await expect(cache.ensure(guests.echo.hash)).rejects.toMatchObject({
      code: 'WASM_CACHE_STOPPED',
    });
    expect(await cachedHashes()).toEqual([]);
  });
});
