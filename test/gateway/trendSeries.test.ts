/**
 * What the trend series count, exactly, on every cloud dialect: a gateway on a hand-moved
 * clock, terminals reporting workflow summaries that ended at chosen times, and gauge
 * samples taken by hand. Late uploads land in the bucket of their end time, run-time
 * percentiles are those of the workflows in the bucket, workflows outside the window (or
 * started before the look-back) are not counted, and each gauge bucket shows its last
 * sample with the live reading in the current one. (The charts drawn from these series are
 * checked in Chromium by trends.test.ts.)
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerDeviceRoutes } from '../../gateway/routes/devices.js';
import { trendRoutes } from '../../gateway/trends/module.js';
import { registerWorkflowSummaryRoutes } from '../../gateway/routes/workflowSummaries.js';
import type { Trends } from '../../gateway/trends/index.js';
import { createGaugeRing } from '../../gateway/trends/gaugeRing.js';
import { testClock, type TestClock } from '../support/device.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

interface Series {
  step_seconds: number;
  timestamps: number[];
  series: Record<string, (number | null)[]>;
}

describe('gauge ring', () => {
  it('keeps the last samples, oldest first, in bounded memory', () => {
    const ring = createGaugeRing(3);
    for (let at = 1; at <= 5; at++) ring.add({ at, devicesOnline: at, safBacklog: 0 });
    expect(ring.samples().map((s) => s.at)).toEqual([3, 4, 5]);
    expect(() => createGaugeRing(0)).toThrow(RangeError);
  });
});

for (const dialect of CLOUD_DIALECTS) {
  describe(`trend series on '${dialect.name}'`, () => {
    let gw: TestGateway;
    let clock: TestClock;
    let trends: Trends;
    let operator: string;
    let secret: string;

    beforeAll(async () => {
      clock = testClock();
      // start on a whole minute, so every time below has a known bucket
      clock.advance(60_000 - (clock.now().getTime() % 60_000));
      gw = await startTestGateway(dialect, {
        now: clock.now,
        routes: [
          registerDeviceRoutes,
          registerWorkflowSummaryRoutes,
          trendRoutes({ sampleMs: 3_600_000, cacheMs: 0, onTrends: (t) => (trends = t) }),
        ],
      });
      operator = await gw.token('viewer');
      secret = await gw.registerDevice('till-9');
    }, 60_000);
    afterAll(async () => {
      await gw?.close();
    });

    const read = async (window: string) => {
      const response = await gw.asUser(operator, `/api/v1/metrics/series?window=${window}`);
      expect(response.status).toBe(200);
      return (await response.json()) as Series;
    };
    const at = (data: Series, time: number) =>
      data.timestamps.indexOf(Math.floor(time / 1000 / data.step_seconds) * data.step_seconds);

    const report = async (summaries: object[]) => {
      const response = await gw.asDevice(
        'till-9',
        secret,
        '/api/v1/devices/till-9/workflow-summaries',
        { method: 'POST', body: JSON.stringify({ summaries }) },
      );
      expect(response.status).toBe(200);
    };
    const summary = (
      endedAgoMs: number,
      runMs: number,
      decision: { status: string; mode: string } | undefined,
    ) => {
      const completed = clock.now().getTime() - endedAgoMs;
      return {
        workflow_id: randomUUID(),
        workflow_type: 'pos_payment',
        status: 'COMPLETED',
        current_step_index: 2,
        current_step: 'receipt',
        state: decision ? { decision } : {},
        created_at: new Date(completed - runMs).toISOString(),
        completed_at: new Date(completed).toISOString(),
      };
    };

    it('puts late uploads in the bucket of their end, with their run-time percentiles', async () => {
      const online = { status: 'APPROVED', mode: 'ONLINE' };
      const offline = { status: 'APPROVED', mode: 'OFFLINE' };
      const declined = { status: 'DECLINED', mode: 'OFFLINE' };
      await report([
        // one bucket, 125 s ago: three payments of 100, 200 and 1000 ms
        summary(125_000, 100, online),
        summary(124_000, 200, offline),
        summary(123_000, 1000, declined),
        // 35 s ago: a workflow that is no payment
        summary(35_000, 50, undefined),
        // 11 minutes ago: in the hour, not in the last ten minutes
        summary(660_000, 300, online),
        // ended a minute ago, but started long before the look-back: not counted
        summary(60_000, 3 * 3_600_000, online),
      ]);
      const now = clock.now().getTime();
      const ten = await read('10m');
      expect(ten.step_seconds).toBe(10);
      expect(ten.timestamps).toHaveLength(60);
      expect(ten.timestamps.at(-1)).toBe(Math.floor(now / 10_000) * 10);
      const early = at(ten, now - 125_000);
      const s = ten.series;
      expect(s.payments_approved_online![early]).toBe(1);
      expect(s.payments_approved_offline![early]).toBe(1);
      expect(s.workflows_ended![early]).toBe(3);
      expect(s.workflow_latency_p50_ms![early]).toBe(200);
      // percentile_cont: 200 + 0.98 × (1000 - 200)
      expect(s.workflow_latency_p99_ms![early]).toBeCloseTo(984, 6);
      expect(s.workflows_ended![at(ten, now - 35_000)]).toBe(1);
      expect(s.payments_approved_online!.reduce((n, v) => n! + v!, 0)).toBe(1);
      expect(s.workflows_ended!.reduce((n, v) => n! + v!, 0)).toBe(4);
      // buckets where nothing ended have counts of 0 and no latency
      expect(s.workflows_ended![at(ten, now)]).toBe(0);
      expect(s.workflow_latency_p50_ms![at(ten, now)]).toBeNull();

      const hour = await read('60m');
      expect(hour.step_seconds).toBe(60);
      expect(hour.series.payments_approved_online![at(hour, now - 660_000)]).toBe(1);
      expect(hour.series.workflows_ended!.reduce((n, v) => n! + v!, 0)).toBe(5);
    });

    it('shows the last gauge sample of each bucket and the live reading in the current one', async () => {
      const metrics = (pending: number) =>
        gw.asDevice('till-9', secret, '/api/v1/devices/till-9/metrics', {
          method: 'POST',
          body: JSON.stringify({
            disk_usage_percent: 10,
            memory_usage_mb: 64,
            pending_transactions: pending,
            last_sync: null,
            network_available: true,
          }),
        });
      const first = clock.now().getTime();
      expect((await metrics(3)).status).toBe(204);
      await trends.sample();
      clock.advance(4_000);
      expect((await metrics(5)).status).toBe(204);
      await trends.sample(); // same 10 s bucket: the later sample is the one shown
      clock.advance(30_000);
      await gw.handle.store.cloud
        .updateTable('edge_devices')
        .set({ status: 'ONLINE' })
        .where('device_id', '=', 'till-9')
        .execute();
      expect((await metrics(9)).status).toBe(204);
      await trends.sample();
      clock.advance(30_000);
      expect((await metrics(2)).status).toBe(204); // not sampled: only the live reading shows it
      const now = clock.now().getTime();
      const ten = await read('10m');
      const s = ten.series;
      expect(s.saf_backlog![at(ten, first)]).toBe(5);
      expect(s.devices_online![at(ten, first)]).toBe(0);
      expect(s.saf_backlog![at(ten, first + 34_000)]).toBe(9);
      expect(s.devices_online![at(ten, first + 34_000)]).toBe(1);
      expect(s.saf_backlog![at(ten, now)]).toBe(2);
      // buckets without a sample have no value
      expect(s.saf_backlog![at(ten, first + 14_000)]).toBeNull();
      expect(s.saf_backlog![0]).toBeNull();
    });
  });
}
