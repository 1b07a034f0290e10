/**
 * The edge metrics report against a real gateway on loopback and a real SQLite edge store:
 * what is collected (disk of the database's filesystem, memory, the PENDING SAF backlog,
 * the last sync the sync component recorded, the network flag the agent supplies), reports
 * posted and visible through the devices API, the interval driven by test timers, a failed
 * report that does not throw, and DIAGNOSTIC returning the metrics.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  collectMetrics,
  createCloudClient,
  createCommandChannel,
  createMetricsReporter,
  defaultCommandHandlers,
  diskUsagePercent,
  recordLastSync,
  type CommandChannelEvent,
  type MetricsEvent,
  type MetricsReporterDeps,
} from '../../edge/index.js';
import {
  eventLog,
  manualTimers,
  openEdgeStore,
  type EdgeStoreHandle,
} from '../support/edgeComponents.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

describe('edge metrics', () => {
  let gw: TestGateway;
  let operator: string;
  let edge: EdgeStoreHandle;
  let deviceId: string;
  let secret: string;
  let counter = 0;
  let sequence = 0;

  const cloud = (fetchImpl?: typeof fetch) =>
    createCloudClient({
      baseUrl: gw.url,
      deviceId,
      secret,
      ...(fetchImpl ? { fetch: fetchImpl } : {}),
    });
  const queueSaf = (status: string) =>
    edge.store.edge
      .insertInto('saf_pending_transactions')
      .values({
        workflow_id: randomUUID(),
        device_id: deviceId,
        sequence_number: ++sequence,
        idempotency_key: randomUUID(),
        workflow_type: 'payment',
        record: JSON.stringify({ ok: true }),
        signature: 'sig',
        status,
      })
      .execute();
  const deviceMetrics = async () => {
    const res = await gw.asUser(operator, `/api/v1/devices/${deviceId}`);
    expect(res.status).toBe(200);
    return ((await res.json()) as { metrics: Record<string, unknown> | null }).metrics;
  };
  const reporter = (options: Partial<MetricsReporterDeps> = {}) =>
    createMetricsReporter({
      store: edge.store,
      cloud: cloud(),
      dataDir: edge.dir,
      networkAvailable: () => true,
      timers: manualTimers(),
      ...options,
    });

  beforeAll(async () => {
    gw = await startTestGateway(CLOUD_DIALECTS[0]!);
    operator = await gw.token('operator');
  });
  afterAll(async () => {
    await gw.close();
  });
  beforeEach(async (context) => {
    deviceId = `edge-metrics-${++counter}`;
    secret = await gw.insertDevice(deviceId);
    edge = await openEdgeStore();
    context.onTestFinished(() => edge.close());
  });

  it('computes disk usage as df does', () => {
    expect(diskUsagePercent({ blocks: 1000, bfree: 250, bavail: 200 })).toBe(78.95);
    expect(diskUsagePercent({ blocks: 1000, bfree: 1000, bavail: 1000 })).toBe(0);
    expect(diskUsagePercent({ blocks: 1000, bfree: 0, bavail: 0 })).toBe(100);
    expect(diskUsagePercent({ blocks: 0, bfree: 0, bavail: 0 })).toBe(0);
  });

  it('collects the backlog, the last sync and the network flag', async () => {
    let online = false;
    const deps = {
      store: edge.store,
      dataDir: edge.dir,
      networkAvailable: () => online,
      memoryBytes: () => 150 * 1024 * 1024 + 52_429, // 150.05 MiB
      statfs: () => Promise.resolve({ blocks: 1000, bfree: 400, bavail: 300 }),
    };
    expect(await collectMetrics(deps)).toEqual({
      disk_usage_percent: 66.67,
      memory_usage_mb: 150.1,
      pending_transactions: 0,
      last_sync: null,
      network_available: false,
    });
    await queueSaf('PENDING');
    await queueSaf('PENDING');
    await queueSaf('SYNCED');
    await queueSaf('REJECTED');
    const syncedAt = new Date('2026-03-01T10:00:00.000Z');
    await recordLastSync(edge.store, syncedAt);
    online = true;
    expect(await collectMetrics(deps)).toMatchObject({
      pending_transactions: 2,
      last_sync: syncedAt.toISOString(),
      network_available: true,
    });
  });

  it('measures the real filesystem and process by default', async () => {
    const report = await collectMetrics({
      store: edge.store,
      dataDir: edge.dir,
      networkAvailable: () => true,
    });
    expect(report.disk_usage_percent).toBeGreaterThanOrEqual(0);
    expect(report.disk_usage_percent).toBeLessThanOrEqual(100);
    expect(report.memory_usage_mb).toBeGreaterThan(1);
  });

  it('posts the report; the devices API shows it', async () => {
    await queueSaf('PENDING');
    const syncedAt = new Date('2026-03-02T08:30:00.000Z');
    await recordLastSync(edge.store, syncedAt);
    const outcome = await reporter().reportNow();
    expect(outcome).toMatchObject({ sent: true });
    expect(await deviceMetrics()).toMatchObject({
      ...outcome.report,
      pending_transactions: 1,
      last_sync: syncedAt.toISOString(),
      network_available: true,
      reported_at: expect.any(String) as unknown,
    });
  });

  it('reports at start and then on every interval; stop() leaves no timer', async () => {
    const timers = manualTimers();
    const log = eventLog<MetricsEvent>();
    const metrics = reporter({ timers, intervalMs: 120_000, onEvent: log.push });
    metrics.start();
    await log.next('edge.metrics.reported');
    await expect.poll(() => timers.pending().map((t) => t.ms)).toEqual([120_000]);
    expect((await deviceMetrics())?.pending_transactions).toBe(0);

    await queueSaf('PENDING');
    const second = log.upcoming('edge.metrics.reported');
    expect(timers.fire()).toBe(1);
    expect((await second).report.pending_transactions).toBe(1);
    expect((await deviceMetrics())?.pending_transactions).toBe(1);
    await expect.poll(() => timers.pending().map((t) => t.ms)).toEqual([120_000]);
    await metrics.stop();
    expect(timers.pending()).toEqual([]);
  });

  it('a report that cannot be sent is reported, not thrown', async () => {
    const log = eventLog<MetricsEvent>();
    const metrics = reporter({
      cloud: cloud(() => Promise.reject(new TypeError('fetch failed'))),
      networkAvailable: () => false,
      onEvent: log.push,
    });
    const outcome = await metrics.reportNow();
    expect(outcome).toMatchObject({
      sent: false,
      report: { network_available: false },
      error: { code: 'METRICS_REPORT_FAILED' },
    });
    expect(metrics.last()).toBe(outcome);
    expect(log.all('edge.metrics.failed')).toHaveLength(1);
    expect(await deviceMetrics()).toBeNull();
  });

  it('DIAGNOSTIC returns and reports the metrics', async () => {
    await queueSaf('PENDING');
    const commands = eventLog<CommandChannelEvent>();
    const channel = createCommandChannel({
      store: edge.store,
      cloud: cloud(),
      handlers: defaultCommandHandlers({ metrics: reporter() }),
      cloudPublicKey: () => gw.keys.publicKeyPem,
      onEvent: commands.push,
    });
    await channel.start();
    try {
      await commands.next('edge.commands.connected');
      const res = await gw.asUser(operator, `/api/v1/devices/${deviceId}/commands`, {
        method: 'POST',
        body: JSON.stringify({
          command_type: 'DIAGNOSTIC',
          payload: { checks: ['metrics', 'printer'], upload_logs: true },
        }),
      });
      const { command_id } = (await res.json()) as { command_id: string };
      await commands.next('edge.commands.acked', (e) => e.commandId === command_id);
      const row = await gw.handle.store.cloud
        .selectFrom('device_commands')
        .select(['status', 'result'])
        .where('command_id', '=', command_id)
        .executeTakeFirstOrThrow();
      expect(row).toMatchObject({
        status: 'EXECUTED',
        result: {
          metrics: { pending_transactions: 1, network_available: true },
          reported: true,
          checks: { metrics: 'ok', printer: 'unsupported' },
          upload_logs: 'unsupported',
        },
      });
      expect(await deviceMetrics()).toMatchObject({ pending_transactions: 1 });
    } finally {
      await channel.stop();
    }
  });
});
