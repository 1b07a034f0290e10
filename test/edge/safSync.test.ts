/**
 * The SAF uploader against a real gateway on loopback (PostgreSQL when configured) and a
 * real SQLite edge store whose records were written by the real recorder: records go up in
 * sequence order and batches; the cloud verifies every signature and its answer is what
 * marks records — SYNCED for accepted ones and duplicates, REJECTED with the cloud's code
 * for refused ones; a lost response is followed by a re-upload that the cloud answers as
 * duplicates, so each workflow id is held exactly once; failed rounds back off with jitter
 * (manual timers, no sleeping), connectivity coming back schedules a jittered sync, and
 * stop() leaves nothing scheduled. Faults (a cut network, a lost answer, a 503) are
 * injected in the fetch between the device and the gateway.
 *
 * SYNC_TRANSACTIONS (through its real handler): `max_records` caps an upload of the PENDING
 * queue; `since_sequence` sends again the PENDING and SYNCED records held from there, in
 * order, which the cloud answers as duplicates while SYNCED rows keep their `synced_at` —
 * even when the resend fails or the cloud refuses a resent record; REJECTED ones are
 * skipped and counted; and a resend never runs alongside another round.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createRuntime, createWorkflowRegistry, type Runtime } from '../../actors/index.js';
import { agentCommandHandlers } from '../../edge/agent/agentHandlers.js';
import { createWorkflowCatalog } from '../../edge/agent/workflowCatalog.js';
import {
  backoffDelay,
  checkConfigDocument,
  createCloudClient,
  createSafRecorder,
  createSafSync,
  readLastSync,
  safLimitsFromConfig,
  TRANSACTIONS_BATCH_PATH,
  type SafSync,
  type SafSyncEvent,
  type SafSyncOptions,
} from '../../edge/index.js';
import type { JsonObject, Store, StoreHandle, WorkflowDefinition } from '../../runtime/index.js';
import {
  eventLog,
  manualTimers,
  openEdgeStore,
  type EdgeStoreHandle,
} from '../support/edgeComponents.js';
import { definition, ENGINE_STEPS } from '../support/engine.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

interface QueuedRow {
  workflow_id: string;
  sequence_number: number;
  record: string;
  status: string;
  upload_attempts: number;
  last_error: string | null;
  synced_at: string | null;
}

describe('SAF sync', () => {
  let gw: TestGateway;
  let edge: EdgeStoreHandle;
  let deviceId: string;
  let secret: string;
  let counter = 0;
  let payment: WorkflowDefinition;
  let runtime: Runtime;
  let now: Date;

  /** Complete `n` payments offline; returns their workflow ids in order. */
  const completeOffline = async (n: number, store: Store = edge.store) => {
    const recorder = createSafRecorder({
      deviceId,
      deviceSecret: secret,
      isOnline: () => false,
      cardKey: randomBytes(32),
    });
    runtime = createRuntime({
      store,
      stepsRoot: ENGINE_STEPS,
      onSettled: recorder.onSettled,
      onBackgroundError: (error) => {
        throw error;
      },
    });
    const ids: string[] = [];
    try {
      for (let i = 1; i <= n; i++) {
        const wf = await runtime.start(payment, {
          amount_minor: 100 * i,
          currency: 'EUR',
          card: { token: `tok_${i}`, last4: '4242' },
        });
        expect(wf.status).toBe('COMPLETED');
        ids.push(wf.id);
      }
    } finally {
      await runtime.close();
    }
    return ids;
  };

  const rows = async (store: StoreHandle = edge.store) =>
    (
      await sql<QueuedRow>`SELECT workflow_id, sequence_number, record, status, upload_attempts, last_error, synced_at
        FROM saf_pending_transactions ORDER BY sequence_number`.execute(store.db)
    ).rows;

  /** What the cloud holds for this device: workflow id → how many rows. */
  const cloudHeld = async () => {
    const result = await sql<{
      idempotency_key: string;
      device_sequence: number | string;
      signature: string;
      n: number | string;
    }>`SELECT idempotency_key, MIN(device_sequence) AS device_sequence, MIN(signature) AS signature, COUNT(*) AS n
        FROM saf_transactions WHERE device_id = ${deviceId}
        GROUP BY idempotency_key ORDER BY MIN(device_sequence)`.execute(gw.handle.store.db);
    return result.rows.map((r) => ({
      id: r.idempotency_key,
      sequence: Number(r.device_sequence),
      signature: r.signature,
      n: Number(r.n),
    }));
  };

  const client = (fetchImpl?: typeof fetch) =>
    createCloudClient({
      baseUrl: gw.url,
      deviceId,
      secret,
      ...(fetchImpl ? { fetch: fetchImpl } : {}),
    });

  const syncWith = (options: Partial<SafSyncOptions> = {}) => {
    const log = eventLog<SafSyncEvent>();
    const sync = createSafSync({
      store: edge.store,
      client: client(),
      timers: manualTimers(),
      onEvent: log.push,
      now: () => now,
      summaries: false, // the queue's mechanics; summaries have their own tests below
      ...options,
    });
    return { sync, log };
  };

  beforeAll(async () => {
    gw = await startTestGateway(CLOUD_DIALECTS[0]!);
    payment = await definition(`
workflow_type: card_payment
workflow_version: '7'
automate_next: true
steps:
  - { name: approve, type: STANDARD, function: steps.noop }
`);
  });
  afterAll(async () => {
    await gw.close();
  });
  beforeEach(async (context) => {
    deviceId = `edge-saf-${++counter}`;
    secret = await gw.insertDevice(deviceId);
    edge = await openEdgeStore();
    now = new Date('2026-05-01T12:00:00.000Z');
    context.onTestFinished(() => edge.close());
  });

  it('uploads in sequence order and batches; the cloud verifies and keeps each record', async () => {
    const ids = await completeOffline(5);
    const { sync, log } = syncWith({ batchSize: 2 });
    const result = await sync.syncNow();
    expect(result).toEqual({ uploaded: 5, synced: 5, rejected: 0, duplicates: 0, remaining: 0 });

    const acks = log.all('edge.sync.ack');
    expect(acks.map((a) => a.synced)).toEqual([ids.slice(0, 2), ids.slice(2, 4), ids.slice(4)]);
    expect(acks.every((a) => a.sequenceGaps.length === 0)).toBe(true);
    const local = await rows();
    expect(local.map((r) => [r.status, r.upload_attempts, r.synced_at, r.last_error])).toEqual(
      ids.map(() => ['SYNCED', 1, now.toISOString(), null]),
    );
    // exactly what was signed on the device is what the cloud holds, once each
    expect(await cloudHeld()).toEqual(
      local.map((r) => ({
        id: r.workflow_id,
        sequence: r.sequence_number,
        signature: (JSON.parse(r.record) as { signature: string }).signature,
        n: 1,
      })),
    );
    expect((await readLastSync(edge.store))?.toISOString()).toBe(now.toISOString());

    // nothing left: a second round sends nothing
    const again = await sync.syncNow();
    expect(again).toEqual({ uploaded: 0, synced: 0, rejected: 0, duplicates: 0, remaining: 0 });
  });

  it('partial acceptance: records the cloud refuses are REJECTED with its code, the rest SYNCED', async () => {
    const ids = await completeOffline(4);
    // record 2 altered on the device after signing: the cloud's signature check refuses it
    await sql`UPDATE saf_pending_transactions SET record = json_set(record, '$.amount_minor', 1)
      WHERE workflow_id = ${ids[1]!}`.execute(edge.store.db);
    // record 4 signed with a key that is not the device's
    const forged = JSON.parse((await rows())[3]!.record) as JsonObject;
    forged.signature = randomBytes(32).toString('base64url');
    await sql`UPDATE saf_pending_transactions SET record = ${JSON.stringify(forged)}
      WHERE workflow_id = ${ids[3]!}`.execute(edge.store.db);

    const { sync, log } = syncWith();
    const result = await sync.syncNow();
    expect(result).toEqual({ uploaded: 4, synced: 2, rejected: 2, duplicates: 0, remaining: 0 });
    expect(log.all('edge.sync.ack')[0]?.rejected).toEqual([
      { workflowId: ids[1], code: 'INVALID_SIGNATURE' },
      { workflowId: ids[3], code: 'INVALID_SIGNATURE' },
    ]);
    expect((await rows()).map((r) => [r.workflow_id, r.status, r.last_error])).toEqual([
      [ids[0], 'SYNCED', null],
      [ids[1], 'REJECTED', 'INVALID_SIGNATURE'],
      [ids[2], 'SYNCED', null],
      [ids[3], 'REJECTED', 'INVALID_SIGNATURE'],
    ]);
    expect((await cloudHeld()).map((h) => h.id)).toEqual([ids[0], ids[2]]);
    // a refused record is not sent again
    expect((await sync.syncNow()).uploaded).toBe(0);
  });

  it('records the cloud already holds count as synced duplicates', async () => {
    const ids = await completeOffline(3);
    // an earlier upload of the first two reached the cloud, but its answer never came back
    const earlier = (await rows()).slice(0, 2).map((r) => JSON.parse(r.record) as unknown);
    const direct = await gw.asDevice(deviceId, secret, TRANSACTIONS_BATCH_PATH, {
      method: 'POST',
      body: JSON.stringify({ records: earlier }),
    });
    expect(direct.status).toBe(200);

    const { sync, log } = syncWith();
    const result = await sync.syncNow();
    expect(result).toEqual({ uploaded: 3, synced: 3, rejected: 0, duplicates: 2, remaining: 0 });
    expect(log.all('edge.sync.ack')[0]?.duplicates).toEqual(ids.slice(0, 2));
    expect((await rows()).every((r) => r.status === 'SYNCED')).toBe(true);
    expect((await cloudHeld()).map((h) => [h.id, h.n])).toEqual(ids.map((id) => [id, 1]));
  });

  it('resumes after a lost response without loss or duplication', async () => {
    const ids = await completeOffline(3);
    let loseAnswer = true;
    const lossy: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (!loseAnswer) return response;
      loseAnswer = false;
      // the cloud committed the batch; the connection drops before the device reads it
      await response.arrayBuffer();
      throw new TypeError('fetch failed: other side closed');
    };
    const { sync, log } = syncWith({ client: client(lossy) });

    const first = await sync.syncNow();
    expect(first).toMatchObject({
      uploaded: 3,
      synced: 0,
      remaining: 3,
      error: { code: 'SAF_UPLOAD_FAILED', retryable: true },
    });
    expect(log.all('edge.sync.failed')).toHaveLength(1);
    expect((await rows()).map((r) => [r.status, r.upload_attempts, r.last_error])).toEqual(
      ids.map(() => ['PENDING', 1, 'SAF_UPLOAD_FAILED']),
    );
    expect((await cloudHeld()).map((h) => h.id)).toEqual(ids);
    expect(await readLastSync(edge.store)).toBeUndefined();

    const second = await sync.syncNow();
    expect(second).toEqual({ uploaded: 3, synced: 3, rejected: 0, duplicates: 3, remaining: 0 });
    expect((await rows()).map((r) => [r.status, r.upload_attempts, r.last_error])).toEqual(
      ids.map(() => ['SYNCED', 2, null]),
    );
    expect((await cloudHeld()).map((h) => [h.id, h.n])).toEqual(ids.map((id) => [id, 1]));
  });

  it('a device that lost its database gets its reused sequence numbers refused', async () => {
    await completeOffline(2);
    const { sync } = syncWith();
    expect((await sync.syncNow()).synced).toBe(2);
    // the terminal is re-imaged: a fresh edge store starts numbering at 1 again
    const fresh = await openEdgeStore();
    try {
      const reused = await completeOffline(1, fresh.store);
      const result = await createSafSync({ store: fresh.store, client: client() }).syncNow();
      expect(result).toMatchObject({ uploaded: 1, synced: 0, rejected: 1, remaining: 0 });
      expect((await rows(fresh.store)).map((r) => [r.workflow_id, r.status, r.last_error])).toEqual(
        [[reused[0], 'REJECTED', 'SEQUENCE_CONFLICT']],
      );
    } finally {
      await fresh.close();
    }
  });

  it('concurrent syncs share the work: each record is sent once', async () => {
    const ids = await completeOffline(3);
    let posts = 0;
    const counting: typeof fetch = (input, init) => {
      if (init?.method === 'POST') posts++;
      return fetch(input, init);
    };
    const { sync } = syncWith({ client: client(counting) });
    const [a, b] = await Promise.all([sync.syncNow(), sync.syncNow()]);
    expect(a.synced + b.synced).toBe(3);
    expect(a.uploaded + b.uploaded).toBe(3);
    expect(posts).toBe(1);
    expect((await cloudHeld()).map((h) => h.id)).toEqual(ids);
  });

  it('stop() waits for the round in progress and for a resend queued behind it', async () => {
    await completeOffline(2);
    let arrived!: () => void;
    const uploading = new Promise<void>((resolve) => (arrived = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let held = false;
    const holding: typeof fetch = async (input, init) => {
      if (init?.method === 'POST' && !held) {
        held = true;
        arrived();
        await released;
      }
      return fetch(input, init);
    };
    const { sync } = syncWith({ client: client(holding) });
    const order: string[] = [];
    const round = sync.syncNow().then((result) => {
      order.push('round');
      return result;
    });
    await uploading;
    const resend = sync.upload({ fromSequence: 1 }).then((result) => {
      order.push('resend');
      return result;
    });
    const stopped = sync.stop().then(() => order.push('stopped'));
    release();
    await stopped;
    expect(order).toEqual(['round', 'resend', 'stopped']);
    // the round was cut short by stop(); the resend queued behind it ran whole
    expect((await round).error?.code).toBe('SAF_SYNC_STOPPED');
    expect(await resend).toMatchObject({ uploaded: 2, synced: 2, remaining: 0 });
    expect((await rows()).map((r) => r.status)).toEqual(['SYNCED', 'SYNCED']);
  });

  it('backs off with jitter while the cloud is unreachable; connectivity back syncs after a jittered delay', async () => {
    const ids = await completeOffline(2);
    let networkUp = false;
    const network: typeof fetch = (input, init) =>
      networkUp ? fetch(input, init) : Promise.reject(new TypeError('fetch failed: ENETUNREACH'));
    const timers = manualTimers();
    const backoff = { baseMs: 1_000, maxMs: 60_000 };
    const random = () => 0.25;
    const { sync, log } = syncWith({
      client: client(network),
      timers,
      backoff,
      random,
      outageJitterMs: 20_000,
      intervalMs: 300_000,
    });
    const scheduled = (reason: string) =>
      log.upcoming('edge.sync.scheduled', (e) => e.reason === reason);
    const fireDue = (ms: number) => expect(timers.fire((t) => t.ms === ms)).toBe(1);

    const firstBackoff = scheduled('backoff');
    sync.start();
    expect(log.all('edge.sync.scheduled')).toEqual([
      { type: 'edge.sync.scheduled', reason: 'start', delayMs: 0, failures: 0 },
    ]);
    fireDue(0);
    expect(await firstBackoff).toMatchObject({
      delayMs: backoffDelay(backoff, 1, random),
      failures: 1,
    });
    expect(backoffDelay(backoff, 1, random)).toBe(625);

    const secondBackoff = scheduled('backoff');
    fireDue(625);
    expect(await secondBackoff).toMatchObject({ delayMs: 1_250, failures: 2 });
    expect((await rows()).map((r) => [r.status, r.upload_attempts, r.last_error])).toEqual(
      ids.map(() => ['PENDING', 2, 'SAF_UPLOAD_FAILED']),
    );

    // a new record does not cut the backoff short
    sync.notifyPending();
    expect(timers.pending().map((t) => t.ms)).toEqual([1_250]);

    // the network is back: the backoff is forgotten, the sync waits a per-device random delay
    networkUp = true;
    sync.notifyOnline();
    expect(timers.pending().map((t) => t.ms)).toEqual([5_000]);
    expect(log.all('edge.sync.scheduled').at(-1)).toEqual({
      type: 'edge.sync.scheduled',
      reason: 'online',
      delayMs: 5_000,
      failures: 0,
    });
    const sweep = scheduled('interval');
    fireDue(5_000);
    expect(await sweep).toMatchObject({ delayMs: 300_000, failures: 0 });
    expect(log.all('edge.sync.done').at(-1)?.result).toEqual({
      uploaded: 2,
      synced: 2,
      rejected: 0,
      duplicates: 0,
      remaining: 0,
    });
    expect((await rows()).map((r) => [r.status, r.upload_attempts])).toEqual(
      ids.map(() => ['SYNCED', 3]),
    );

    // a new record is uploaded soon after it is queued
    sync.notifyPending();
    expect(
      timers
        .pending()
        .map((t) => t.ms)
        .sort(),
    ).toEqual([0]);
    await sync.stop();
    expect(timers.pending()).toEqual([]);
  });

  it('honours Retry-After from an overloaded cloud', async () => {
    await completeOffline(1);
    let overloaded = true;
    const busy: typeof fetch = (input, init) =>
      overloaded
        ? Promise.resolve(
            new Response(JSON.stringify({ code: 'OVERLOADED', status: 503 }), {
              status: 503,
              headers: { 'content-type': 'application/problem+json', 'retry-after': '120' },
            }),
          )
        : fetch(input, init);
    const timers = manualTimers();
    const { sync, log } = syncWith({
      client: client(busy),
      timers,
      backoff: { baseMs: 1_000, maxMs: 60_000 },
      random: () => 0,
    });
    const backoff = log.upcoming('edge.sync.scheduled', (e) => e.reason === 'backoff');
    sync.start();
    timers.fire((t) => t.ms === 0);
    expect(await backoff).toMatchObject({ delayMs: 120_000, failures: 1 });
    expect(log.all('edge.sync.failed')).toEqual([
      {
        type: 'edge.sync.failed',
        code: 'SAF_UPLOAD_REFUSED',
        message: 'the cloud answered the batch with 503 OVERLOADED',
        retryable: true,
        status: 503,
      },
    ]);
    overloaded = false;
    const done = log.upcoming('edge.sync.done');
    timers.fire((t) => t.ms === 120_000);
    expect((await done).result).toMatchObject({ synced: 1, remaining: 0 });
    await sync.stop();
    expect(timers.pending()).toEqual([]);
  });

  it('the cloud publishes the offline limits in the signed device configuration', async () => {
    const limits = { max_unsent_amount_minor: 25_000, max_records: 50, max_age_seconds: 43_200 };
    const put = await gw.asUser(gw.adminToken, `/api/v1/config/device/${deviceId}`, {
      method: 'PUT',
      body: JSON.stringify({ store_and_forward: limits }),
    });
    expect(put.status, await put.clone().text()).toBe(200);
    const res = await client().request({ path: `/api/v1/devices/${deviceId}/config` });
    expect(res.status).toBe(200);
    const doc = checkConfigDocument('device', await res.json(), gw.keys.publicKeyPem, deviceId);
    expect(safLimitsFromConfig(doc.config as JsonObject)).toEqual({
      maxUnsentAmountMinor: 25_000,
      maxRecords: 50,
      maxAgeSeconds: 43_200,
    });
  });

  describe('SYNC_TRANSACTIONS', () => {
    /**
     * A fetch to the gateway that keeps the sequence numbers of every upload request it
     * carries, in order, and the most uploads it had in flight at once; `failUploads` cuts
     * them before they leave the device.
     */
    const recordingFetch = (options: { failUploads?: boolean } = {}) => {
      const uploads: number[][] = [];
      let inFlight = 0;
      let maxInFlight = 0;
      const impl: typeof fetch = async (input, init) => {
        if (init?.method !== 'POST') return fetch(input, init);
        if (typeof init.body !== 'string') throw new TypeError('the uploader sends JSON text');
        const body = JSON.parse(init.body) as { records: { device_sequence: number }[] };
        uploads.push(body.records.map((r) => r.device_sequence));
        if (options.failUploads) throw new TypeError('fetch failed: ECONNRESET');
        maxInFlight = Math.max(maxInFlight, ++inFlight);
        try {
          return await fetch(input, init);
        } finally {
          inFlight--;
        }
      };
      return { impl, uploads, maxInFlight: () => maxInFlight };
    };

    /** The real SYNC_TRANSACTIONS handler over `sync`, called as the command channel does. */
    const commandOn = (sync: SafSync) => {
      const handler = agentCommandHandlers({
        catalog: createWorkflowCatalog({
          store: edge.store,
          registry: createWorkflowRegistry(),
          stepsRoot: ENGINE_STEPS,
        }),
        syncTransactions: (request) => sync.upload(request),
        prefetchWasm: () => undefined,
        restart: () => undefined,
      }).SYNC_TRANSACTIONS!;
      return async (payload: JsonObject) =>
        (await handler(
          payload,
          { command_id: 'cmd-sync-1', command_type: 'SYNC_TRANSACTIONS', payload },
          { signal: new AbortController().signal, afterAck: () => undefined },
        )) as JsonObject;
    };

    /** Complete `n` payments offline and upload them: all SYNCED at the current `now`. */
    const syncedRecords = async (n: number) => {
      const ids = await completeOffline(n);
      expect((await syncWith().sync.syncNow()).synced).toBe(n);
      return ids;
    };

    const later = () => {
      now = new Date('2026-05-02T08:00:00.000Z');
    };

    it('since_sequence 4, max_records 3 over ten SYNCED records sends 4, 5, 6 again; they stay SYNCED', async () => {
      const ids = await syncedRecords(10);
      const before = await rows();
      later();
      const net = recordingFetch();
      const { sync, log } = syncWith({ client: client(net.impl), batchSize: 2 });
      const ack = await commandOn(sync)({ since_sequence: 4, max_records: 3 });

      expect(net.uploads).toEqual([[4, 5], [6]]);
      expect(ack).toEqual({
        uploaded: 3,
        synced: 3,
        duplicates: 3,
        rejected: 0,
        remaining: 0,
        from_sequence: 4,
        highest_sequence_sent: 6,
        skipped_rejected: 0,
        lowest_held_sequence: 1,
        highest_held_sequence: 10,
      });
      expect(log.all('edge.sync.ack').flatMap((a) => a.duplicates)).toEqual(ids.slice(3, 6));
      // nothing moved: same status, same synced_at (the first upload's), no attempt counted
      expect(await rows()).toEqual(before);
      expect(
        before.every((r) => r.status === 'SYNCED' && r.synced_at === '2026-05-01T12:00:00.000Z'),
      ).toBe(true);
      expect((await cloudHeld()).map((h) => [h.id, h.n])).toEqual(ids.map((id) => [id, 1]));
    });

    it('a payload that does not fit fails the command with COMMAND_PAYLOAD_INVALID and sends nothing', async () => {
      await completeOffline(1);
      const net = recordingFetch();
      const command = commandOn(syncWith({ client: client(net.impl) }).sync);
      for (const [payload, path] of [
        [{ since_sequence: 0 }, '$.since_sequence'],
        [{ since_sequence: 2.5 }, '$.since_sequence'],
        [{ max_records: '10' }, '$.max_records'],
        [{ max_records: 0 }, '$.max_records'],
      ] as const)
        await expect(command(payload)).rejects.toMatchObject({
          name: 'CommandError',
          code: 'COMMAND_PAYLOAD_INVALID',
          message: expect.stringContaining(path) as unknown,
        });
      expect(net.uploads).toEqual([]);
      // a member a newer cloud may add is not a reason to fail
      expect(await command({ max_records: 5, priority: 'high' })).toMatchObject({ synced: 1 });
    });

    it('from beyond the last record sends nothing and says so; records no longer held show as the lowest still held', async () => {
      const ids = await syncedRecords(5);
      const net = recordingFetch();
      const command = commandOn(syncWith({ client: client(net.impl) }).sync);
      expect(await command({ since_sequence: 9 })).toEqual({
        uploaded: 0,
        synced: 0,
        duplicates: 0,
        rejected: 0,
        remaining: 0,
        from_sequence: 9,
        highest_sequence_sent: null,
        skipped_rejected: 0,
        lowest_held_sequence: 1,
        highest_held_sequence: 5,
      });
      expect(net.uploads).toEqual([]);

      // records 1 and 2 are gone from the device: the gap cannot be filled from here
      await sql`DELETE FROM saf_pending_transactions WHERE sequence_number < 3`.execute(
        edge.store.db,
      );
      expect(await command({ since_sequence: 1 })).toMatchObject({
        uploaded: 3,
        duplicates: 3,
        from_sequence: 1,
        highest_sequence_sent: 5,
        lowest_held_sequence: 3,
      });
      expect(net.uploads).toEqual([[3, 4, 5]]);
      expect((await rows()).map((r) => r.workflow_id)).toEqual(ids.slice(2));
    });

    it('without since_sequence, max_records caps the PENDING upload and the rest stays PENDING', async () => {
      const ids = await completeOffline(5);
      const net = recordingFetch();
      const command = commandOn(syncWith({ client: client(net.impl), batchSize: 2 }).sync);
      expect(await command({ max_records: 3 })).toEqual({
        uploaded: 3,
        synced: 3,
        duplicates: 0,
        rejected: 0,
        remaining: 2,
      });
      expect(net.uploads).toEqual([[1, 2], [3]]);
      expect((await rows()).map((r) => r.status)).toEqual([
        'SYNCED',
        'SYNCED',
        'SYNCED',
        'PENDING',
        'PENDING',
      ]);
      expect((await cloudHeld()).map((h) => h.id)).toEqual(ids.slice(0, 3));
      // with no payload, the whole queue goes as before
      expect(await command({})).toEqual({
        uploaded: 2,
        synced: 2,
        duplicates: 0,
        rejected: 0,
        remaining: 0,
      });
      expect(net.uploads).toEqual([[1, 2], [3], [4, 5]]);
    });

    it('skips and counts a REJECTED record in the range; a PENDING one in it is sent and marked', async () => {
      const ids = await completeOffline(6);
      await sql`UPDATE saf_pending_transactions SET record = json_set(record, '$.amount_minor', 1)
        WHERE workflow_id = ${ids[2]!}`.execute(edge.store.db);
      expect(await syncWith().sync.syncNow()).toMatchObject({ synced: 5, rejected: 1 });
      const newer = await completeOffline(2); // sequence 7 and 8, PENDING
      later();
      const net = recordingFetch();
      const command = commandOn(syncWith({ client: client(net.impl) }).sync);
      expect(await command({ since_sequence: 2, max_records: 5 })).toEqual({
        uploaded: 5,
        synced: 5,
        duplicates: 4,
        rejected: 0,
        remaining: 1,
        from_sequence: 2,
        highest_sequence_sent: 7,
        skipped_rejected: 1,
        lowest_held_sequence: 1,
        highest_held_sequence: 8,
      });
      expect(net.uploads).toEqual([[2, 4, 5, 6, 7]]);
      expect(
        (await rows()).map((r) => [r.sequence_number, r.status, r.last_error, r.synced_at]),
      ).toEqual([
        [1, 'SYNCED', null, '2026-05-01T12:00:00.000Z'],
        [2, 'SYNCED', null, '2026-05-01T12:00:00.000Z'],
        [3, 'REJECTED', 'INVALID_SIGNATURE', null],
        [4, 'SYNCED', null, '2026-05-01T12:00:00.000Z'],
        [5, 'SYNCED', null, '2026-05-01T12:00:00.000Z'],
        [6, 'SYNCED', null, '2026-05-01T12:00:00.000Z'],
        [7, 'SYNCED', null, now.toISOString()],
        [8, 'PENDING', null, null],
      ]);
      expect((await cloudHeld()).map((h) => h.id)).toEqual([
        ...ids.filter((_, i) => i !== 2),
        newer[0],
      ]);
      // the whole range: every REJECTED record in it is counted
      expect(await command({ since_sequence: 1 })).toMatchObject({
        uploaded: 7,
        skipped_rejected: 1,
        highest_sequence_sent: 8,
        remaining: 0,
      });
      expect(net.uploads[1]).toEqual([1, 2, 4, 5, 6, 7, 8]);
    });

    it('a resent SYNCED record the cloud refuses is counted as rejected and stays SYNCED', async () => {
      const ids = await syncedRecords(3);
      await sql`UPDATE saf_pending_transactions SET record = json_set(record, '$.amount_minor', 1)
        WHERE workflow_id = ${ids[1]!}`.execute(edge.store.db);
      const { sync, log } = syncWith();
      expect(await commandOn(sync)({ since_sequence: 1 })).toMatchObject({
        uploaded: 3,
        synced: 2,
        duplicates: 2,
        rejected: 1,
        highest_sequence_sent: 3,
      });
      expect(log.all('edge.sync.ack')[0]?.rejected).toEqual([
        { workflowId: ids[1], code: 'INVALID_SIGNATURE' },
      ]);
      expect((await rows()).map((r) => [r.status, r.last_error])).toEqual(
        ids.map(() => ['SYNCED', null]),
      );
    });

    it('an upload failure during a resend leaves SYNCED records SYNCED and counts no attempt against them', async () => {
      await syncedRecords(4);
      await completeOffline(1); // sequence 5, PENDING
      const before = await rows();
      later();
      const net = recordingFetch({ failUploads: true });
      const ack = await commandOn(syncWith({ client: client(net.impl) }).sync)({
        since_sequence: 2,
      });
      expect(ack).toEqual({
        uploaded: 4,
        synced: 0,
        duplicates: 0,
        rejected: 0,
        remaining: 1,
        from_sequence: 2,
        highest_sequence_sent: 5,
        skipped_rejected: 0,
        lowest_held_sequence: 1,
        highest_held_sequence: 5,
        error: {
          code: 'SAF_UPLOAD_FAILED',
          message: 'the cloud could not be reached',
          retryable: true,
        },
      });
      expect(net.uploads).toEqual([[2, 3, 4, 5]]);
      const after = await rows();
      expect(after.slice(0, 4)).toEqual(before.slice(0, 4));
      expect(after.map((r) => [r.status, r.upload_attempts, r.last_error])).toEqual([
        ['SYNCED', 1, null],
        ['SYNCED', 1, null],
        ['SYNCED', 1, null],
        ['SYNCED', 1, null],
        ['PENDING', 1, 'SAF_UPLOAD_FAILED'],
      ]);
    });

    it('a resend waits for the round in progress, and a round asked for meanwhile waits for the resend', async () => {
      await completeOffline(3);
      const net = recordingFetch();
      const { sync } = syncWith({ client: client(net.impl) });
      const [round, resend] = await Promise.all([sync.syncNow(), sync.upload({ fromSequence: 1 })]);
      expect(net.maxInFlight()).toBe(1);
      expect(net.uploads).toEqual([
        [1, 2, 3],
        [1, 2, 3],
      ]);
      expect(round).toMatchObject({ synced: 3, duplicates: 0 });
      expect(resend).toMatchObject({ synced: 3, duplicates: 3 });

      // the other way round: the background round after the resend finds nothing left
      await completeOffline(2);
      const [resent, after] = await Promise.all([sync.upload({ fromSequence: 4 }), sync.syncNow()]);
      expect(net.maxInFlight()).toBe(1);
      expect(net.uploads.slice(2)).toEqual([[4, 5]]);
      expect(resent).toMatchObject({ uploaded: 2, synced: 2, duplicates: 0, remaining: 0 });
      expect(after).toMatchObject({ uploaded: 0, remaining: 0 });
    });
  });

  describe('workflow summaries', () => {
    /** The cloud's rows for this device: id → status and state. */
    const cloudWorkflows = async () => {
      const rows = await gw.handle.store.db
        .selectFrom('workflow_executions')
        .select(['id', 'status', 'state', 'owner_id', 'metadata'])
        .where('owner_id', '=', deviceId)
        .execute();
      const codec = gw.handle.store.codec;
      return new Map(
        rows.map((r) => [
          r.id,
          {
            status: r.status,
            state: codec.parseJson(r.state) as JsonObject,
            source: (codec.parseJson(r.metadata) as JsonObject).source,
          },
        ]),
      );
    };

    it('uploads one summary per ended workflow, failed ones too, without card data or the secret', async () => {
      const paid = await completeOffline(3);
      const local = createRuntime({ store: edge.store, stepsRoot: ENGINE_STEPS });
      const failing = await definition(`
workflow_type: flaky
automate_next: true
steps:
  - { name: boom, type: STANDARD, function: steps.always_fail }
`);
      const waiting = await definition(`
workflow_type: ask
steps:
  - { name: ask, type: STANDARD, function: steps.ask_human }
`);
      const failed = await local.start(failing, { note: `key ${secret} here` });
      const open = await local.start(waiting, {});
      await local.close();
      expect(failed.status).toBe('FAILED');
      expect(open.status).not.toBe('COMPLETED');

      const { sync, log } = syncWith({ summaries: true, batchSize: 2, secrets: [secret] });
      const result = await sync.syncNow();
      expect(result).toMatchObject({ synced: 3, summaries: { synced: 4, rejected: 0 } });
      expect(result.error).toBeUndefined();
      expect(log.all('edge.sync.summaries').map((e) => e.synced)).toEqual([2, 2]);

      const held = await cloudWorkflows();
      expect([...held.keys()].sort()).toEqual([...paid, failed.id].sort());
      for (const id of paid) {
        expect(held.get(id)).toMatchObject({ status: 'COMPLETED', source: 'edge' });
        expect(held.get(id)?.state).not.toHaveProperty('card');
      }
      expect(held.get(failed.id)?.status).toBe('FAILED');
      expect(JSON.stringify(held.get(failed.id)?.state)).not.toContain(secret);
      expect(held.get(failed.id)?.state.note).toBe('key [REDACTED] here');

      // each once: the next round has nothing to send
      const again = await sync.syncNow();
      expect(again.summaries).toBeUndefined();
      expect(log.all('edge.sync.summaries')).toHaveLength(2);
    });

    it('keeps its place when an upload fails, and skips a cloud without the endpoint', async () => {
      const ids = await completeOffline(2);
      let mode: 'cut' | '404' | 'ok' = 'cut';
      const faulty: typeof fetch = (input, init) => {
        const url = input instanceof Request ? input.url : input.toString();
        if (url.includes('/workflow-summaries') && mode !== 'ok')
          return mode === 'cut'
            ? Promise.reject(new TypeError('fetch failed'))
            : Promise.resolve(new Response('{}', { status: 404 }));
        return fetch(input, init);
      };
      const { sync, log } = syncWith({ summaries: true, client: client(faulty) });
      const cut = await sync.syncNow();
      expect(cut).toMatchObject({ synced: 2, error: { code: 'SAF_UPLOAD_FAILED' } });
      expect((await cloudWorkflows()).size).toBe(0);

      mode = '404';
      const skipped = await sync.syncNow();
      expect(skipped.error).toBeUndefined();
      expect(skipped.summaries).toBeUndefined();
      expect(log.all('edge.sync.summaries_unsupported')).toEqual([
        { type: 'edge.sync.summaries_unsupported', status: 404 },
      ]);

      mode = 'ok';
      const sent = await sync.syncNow();
      expect(sent.summaries).toEqual({ synced: 2, rejected: 0 });
      expect([...(await cloudWorkflows()).keys()].sort()).toEqual([...ids].sort());
    });
  });
});
