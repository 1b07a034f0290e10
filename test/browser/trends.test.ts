/**
 * The dashboard's trends and step timeline in headless Chromium against a real gateway,
 * after a workload run through the API: payments run by the cloud and payments terminals
 * report (workflow summaries), devices connected by WebSocket that report their SAF backlog,
 * and commands the devices ack. The overview's charts must draw the series the API serves
 * for that run, the workflow page one bar per step that ran, and the workflows table ids
 * that tell rows apart. Screenshots land in test-results/trends/ (the docs keep copies in
 * docs/images/).
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDefinition } from '../../runtime/index.js';
import { artifactDir, chromiumPath, launchBrowser } from '../support/browser.js';
import { connectDevice, type DeviceSocket } from '../support/device.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { schemaMismatches } from '../support/jsonSchemaMatch.js';
import type { JsonSchema } from '../support/schemaFuzz.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

const STEPS = fileURLToPath(new URL('./fixtures/', import.meta.url));
// screenshots for the docs: copied to docs/images/ by hand when the pages change
const IMAGES = `${artifactDir('trends')}/`;

const YAML = `
workflow_type: trend_payment
workflow_version: "1"
automate_next: true
initial_state: { floor_limit_minor: 5000 }
steps:
  - { name: check, type: STANDARD, function: payments.check }
  - { name: authorize, type: STANDARD, function: payments.authorize }
  - { name: receipt, type: STANDARD, function: payments.receipt }
`;

/** What the series route answers. */
interface Series {
  window: string;
  step_seconds: number;
  read_at: string;
  timestamps: number[];
  series: Record<string, (number | null)[]>;
}

/** What a chart drew: its uPlot data (x first), pixels in each series' colour, its point count. */
interface Drawn {
  data: (number | null)[][];
  stroked: number[];
  points: string;
}

/** Every panel has its uPlot instance (run in the page). */
const CHARTS_READY = `[...document.querySelectorAll('#trends .trend')].every((el) => el.uplot)`;

/**
 * The data of each chart and, per series drawn alone (one series may hide another where
 * their values agree), the canvas pixels in its stroke colour — run in the page, with the
 * colours the dashboard's own panels declare.
 */
const DRAWN = `(async () => {
  const { PANELS } = await import('/dashboard/charts.js');
  const frame = () => new Promise((resolve) => requestAnimationFrame(() => resolve()));
  const rgb = (hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
  const out = {};
  for (const el of document.querySelectorAll('#trends .trend')) {
    const panel = PANELS.find((p) => p.id === el.dataset.chart);
    const plot = el.uplot;
    const canvas = el.querySelector('canvas');
    const stroked = [];
    for (const [index, [, , colour]] of panel.series.entries()) {
      panel.series.forEach((_, j) => plot.setSeries(j + 1, { show: j === index }));
      await frame();
      const [r, g, b] = rgb(colour);
      const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
      let n = 0;
      for (let i = 0; i < pixels.length; i += 4)
        if (
          pixels[i + 3] > 200 &&
          Math.abs(pixels[i] - r) + Math.abs(pixels[i + 1] - g) + Math.abs(pixels[i + 2] - b) <= 48
        )
          n += 1;
      stroked.push(n);
    }
    panel.series.forEach((_, j) => plot.setSeries(j + 1, { show: true }));
    out[el.dataset.chart] = { data: plot.data, stroked, points: el.dataset.points };
  }
  return out;
})()`;

const sum = (values: (number | null)[]) => values.reduce<number>((n, v) => n + (v ?? 0), 0);
const last = (values: (number | null)[]) => [...values].reverse().find((v) => v !== null);

describe.skipIf(chromiumPath === undefined)(
  'dashboard trends and step timeline in Chromium',
  () => {
    let gw: TestGateway;
    let browser: Browser;
    let page: Page;
    let operator: string;
    const sockets: DeviceSocket[] = [];
    const errors: string[] = [];
    const cloudPayments: { id: string; status: string }[] = [];
    // what the workload did, counted as it is done
    const expected = { online: 0, offline: 0, ended: 0, succeeded: 0, failed: 0, backlog: 0 };

    beforeAll(async () => {
      mkdirSync(IMAGES, { recursive: true });
      gw = await startTestGateway(CLOUD_DIALECTS[0]!, { stepsRoot: STEPS });
      gw.gateway.context.runtime.registry.register(
        (await loadDefinition(YAML, { stepsRoot: STEPS })).definition,
      );
      operator = await gw.token('operator');
      browser = await launchBrowser();
      page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
      page.setDefaultTimeout(15_000);
      page.on('pageerror', (error) => errors.push(String(error)));
      page.on('console', (message) => {
        if (message.type() === 'error') errors.push(message.text());
      });
    }, 60_000);
    afterAll(async () => {
      for (const s of sockets) await s.close();
      await browser?.close();
      await gw?.close();
    });

    const series = async (window: string) => {
      const response = await gw.asUser(operator, `/api/v1/metrics/series?window=${window}`);
      expect(response.status).toBe(200);
      return (await response.json()) as Series;
    };

    it('refuses a bad window and an anonymous caller with problem+json', async () => {
      const bad = await gw.asUser(operator, '/api/v1/metrics/series?window=5y');
      expect(bad.status).toBe(400);
      expect(bad.headers.get('content-type')).toContain('application/problem+json');
      const anonymous = await fetch(`${gw.url}/api/v1/metrics/series`);
      expect(anonymous.status).toBe(401);
      const openapi = (await (await fetch(`${gw.url}/api/v1/openapi.json`)).json()) as {
        paths: Record<string, unknown>;
      };
      expect(Object.keys(openapi.paths)).toContain('/api/v1/metrics/series');
      // the chart library comes from the installed package, and only the files named
      const uplot = await fetch(`${gw.url}/dashboard/vendor/uplot.js`);
      expect(uplot.status).toBe(200);
      expect(uplot.headers.get('content-type')).toContain('text/javascript');
      expect(await uplot.text()).toContain('export { uPlot as default }');
      expect((await fetch(`${gw.url}/dashboard/vendor/uplot.css`)).status).toBe(200);
      expect((await fetch(`${gw.url}/dashboard/vendor/..%2Fpackage.json`)).status).toBe(404);
      expect((await fetch(`${gw.url}/dashboard/vendor/uPlot.cjs.js`)).status).toBe(404);
    });

    it('runs a workload through the API', async () => {
      // three terminals; two connect and report their backlog
      const secrets = new Map<string, string>();
      for (const id of ['till-1', 'till-2', 'till-3']) secrets.set(id, await gw.registerDevice(id));
      for (const id of ['till-1', 'till-2']) {
        const socket = await connectDevice(gw.url, id, secrets.get(id)!);
        socket.send({ type: 'hello' });
        await socket.next('welcome');
        sockets.push(socket);
      }
      for (const [id, pending] of [
        ['till-1', 4],
        ['till-2', 7],
      ] as const) {
        const body = JSON.stringify({
          disk_usage_percent: 40,
          memory_usage_mb: 120,
          pending_transactions: pending,
          last_sync: null,
          network_available: true,
        });
        const reported = await gw.asDevice(id, secrets.get(id)!, `/api/v1/devices/${id}/metrics`, {
          method: 'POST',
          body,
        });
        expect(reported.status).toBe(204);
        expected.backlog += pending;
      }

      // payments the cloud runs: online, under the floor offline, over the floor offline
      for (const data of [
        { amount_minor: 1200, online: true },
        { amount_minor: 86000, online: true },
        { amount_minor: 3100, online: false },
        { amount_minor: 9900, online: false },
      ]) {
        const response = await gw.asUser(operator, '/api/v1/workflows', {
          method: 'POST',
          body: JSON.stringify({ workflow_type: 'trend_payment', data }),
        });
        expect(response.status).toBe(201);
        const wf = (await response.json()) as { id: string; status: string };
        expect(wf.status).toBe('COMPLETED');
        cloudPayments.push(wf);
        expected.ended += 1;
        if (data.online) expected.online += 1;
        else if (data.amount_minor <= 5000) expected.offline += 1;
      }

      // payments a terminal ran in the last nine minutes and reports late, as workflow
      // summaries: each lands in the bucket of its own end time
      const now = Date.now();
      const decisions = [
        ['APPROVED', 'ONLINE'],
        ['APPROVED', 'ONLINE'],
        ['APPROVED', 'OFFLINE'],
        ['DECLINED', 'FRAUD_RULES'],
      ] as const;
      const summaries = Array.from({ length: 20 }, (_, i) => {
        const [status, mode] = decisions[i % decisions.length]!;
        const completed = now - 5_000 - i * 27_000;
        return {
          workflow_id: randomUUID(),
          workflow_type: 'pos_payment',
          workflow_version: '1',
          status: 'COMPLETED',
          current_step_index: 3,
          current_step: 'receipt',
          state: { amount_minor: 1000 + i, decision: { status, mode } },
          created_at: new Date(completed - 400 - 37 * i).toISOString(),
          completed_at: new Date(completed).toISOString(),
        };
      });
      const uploaded = await gw.asDevice(
        'till-1',
        secrets.get('till-1')!,
        '/api/v1/devices/till-1/workflow-summaries',
        { method: 'POST', body: JSON.stringify({ summaries }) },
      );
      expect(uploaded.status).toBe(200);
      expect(((await uploaded.json()) as { synced_ids: string[] }).synced_ids).toHaveLength(20);
      for (const summary of summaries) {
        expected.ended += 1;
        const { status, mode } = summary.state.decision;
        if (status === 'APPROVED' && mode === 'ONLINE') expected.online += 1;
        if (status === 'APPROVED' && mode === 'OFFLINE') expected.offline += 1;
      }

      // commands to till-2: two executed, one failed
      for (const outcome of ['EXECUTED', 'EXECUTED', 'FAILED'] as const) {
        const created = await gw.asUser(operator, '/api/v1/devices/till-2/commands', {
          method: 'POST',
          body: JSON.stringify({ command_type: 'DIAGNOSTIC', payload: { checks: ['disk'] } }),
        });
        expect(created.status).toBe(201);
        const { command_id: commandId } = (await created.json()) as { command_id: string };
        const acked = await gw.asDevice(
          'till-2',
          secrets.get('till-2')!,
          `/api/v1/devices/till-2/commands/${commandId}/ack`,
          {
            method: 'POST',
            body: JSON.stringify(
              outcome === 'EXECUTED'
                ? { status: 'EXECUTED', result: { disk: 'ok' } }
                : { status: 'FAILED', error: 'disk check failed' },
            ),
          },
        );
        expect(acked.status).toBe(200);
        if (outcome === 'EXECUTED') expected.succeeded += 1;
        else expected.failed += 1;
      }

      // the two sockets count as online once their sessions are recorded
      await expect
        .poll(async () => {
          const { devices } = (await (await gw.asUser(operator, '/api/v1/devices')).json()) as {
            devices: { status: string }[];
          };
          return devices.filter((d) => d.status === 'ONLINE').length;
        })
        .toBe(2);
    });

    it('answers as its OpenAPI operation documents', async () => {
      const doc = (await (await fetch(`${gw.url}/api/v1/openapi.json`)).json()) as {
        paths: Record<
          string,
          Record<
            string,
            {
              parameters: { name: string; in: string }[];
              responses: Record<string, { content?: Record<string, { schema: JsonSchema }> }>;
            }
          >
        >;
      };
      const operation = doc.paths['/api/v1/metrics/series']!.get!;
      expect(operation.parameters.map((p) => `${p.in}:${p.name}`)).toEqual(['query:window']);
      const schema = operation.responses['200']!.content!['application/json']!.schema;
      for (const window of ['10m', '60m'])
        expect(schemaMismatches(schema, await series(window))).toEqual([]);
      // errors (the 400 of a bad window, the 401) are the documented problem+json
      expect(Object.keys(operation.responses.default!.content!)).toEqual([
        'application/problem+json',
      ]);
    });

    it('serves series that count the workload', async () => {
      for (const window of ['10m', '60m']) {
        const data = await series(window);
        expect(data.timestamps).toHaveLength(60);
        expect(data.step_seconds).toBe(window === '10m' ? 10 : 60);
        const s = data.series;
        expect(sum(s.payments_approved_online!)).toBe(expected.online);
        // the late uploads fall in the buckets of their end times, not all in the current one
        expect(s.payments_approved_online!.filter((v) => (v ?? 0) > 0).length).toBeGreaterThan(3);
        expect(sum(s.payments_approved_offline!)).toBe(expected.offline);
        expect(sum(s.workflows_ended!)).toBe(expected.ended);
        expect(sum(s.commands_succeeded!)).toBe(expected.succeeded);
        expect(sum(s.commands_failed!)).toBe(expected.failed);
        expect(last(s.devices_online!)).toBe(2);
        expect(last(s.saf_backlog!)).toBe(expected.backlog);
        // run times of the workflows that ended: a p99 at least the p50, both positive
        const p50 = s.workflow_latency_p50_ms!.filter((v): v is number => v !== null);
        const p99 = s.workflow_latency_p99_ms!.filter((v): v is number => v !== null);
        expect(p50.length).toBeGreaterThan(0);
        expect(p99.length).toBe(p50.length);
        p50.forEach((v, i) => expect(p99[i]!).toBeGreaterThanOrEqual(v));
      }
    });

    it('draws the charts of the overview from those series', async () => {
      await page.goto(`${gw.url}/dashboard/`);
      await page.fill('#token', operator);
      await page.click('#login');
      await page.waitForSelector('#devices tr[data-device="till-1"]');
      for (const window of ['10m', '60m']) {
        await page.goto(`${gw.url}/dashboard/#/overview?window=${window}`);
        await page.waitForSelector('#trends .trend[data-chart="payments"] canvas');
        await page.waitForFunction(CHARTS_READY);
        // what each chart drew, read back from its uPlot instance, and its painted pixels
        const drawn = await page.evaluate<Record<string, Drawn>>(DRAWN);
        const api = await series(window);
        const columns = {
          payments: ['payments_approved_online', 'payments_approved_offline'],
          backlog: ['saf_backlog'],
          devices: ['devices_online'],
          commands: ['commands_succeeded', 'commands_failed'],
          throughput: ['workflows_ended'],
          latency: ['workflow_latency_p50_ms', 'workflow_latency_p99_ms'],
        } as const;
        for (const [chart, names] of Object.entries(columns)) {
          const { data, stroked, points } = drawn[chart]!;
          expect(data[0]).toHaveLength(60);
          expect(Number(points)).toBeGreaterThan(0);
          // every series with a value has its line on the canvas, in its colour
          names.forEach((_, i) => {
            if (data[i + 1]!.some((v) => v !== null))
              expect(stroked[i], `${chart}: ${names[i]} drawn`).toBeGreaterThan(0);
          });
          // the same buckets hold the same values as the API's (a bucket boundary may pass
          // between the two reads: compare the buckets both have)
          names.forEach((name, i) => {
            const byTime = new Map(api.timestamps.map((t, j) => [t, api.series[name]![j]]));
            data[0]!.forEach((t, j) => {
              if (byTime.has(t!) && j < 59) expect(data[i + 1]![j]).toBe(byTime.get(t!));
            });
          });
        }
        expect(sum(drawn.payments!.data[1]!)).toBe(expected.online);
        expect(sum(drawn.payments!.data[2]!)).toBe(expected.offline);
        expect(sum(drawn.commands!.data[1]!)).toBe(expected.succeeded);
        expect(sum(drawn.commands!.data[2]!)).toBe(expected.failed);
        expect(last(drawn.backlog!.data[1]!)).toBe(expected.backlog);
        expect(last(drawn.devices!.data[1]!)).toBe(2);
        if (window === '10m')
          await page.screenshot({ path: `${IMAGES}dashboard-overview.png`, fullPage: true });
      }
    });

    it('shows one bar per executed step next to the statechart', async () => {
      const wf = cloudPayments[0]!;
      const audit = (await (
        await gw.asUser(operator, `/api/v1/workflows/${wf.id}/audit`)
      ).json()) as {
        events: { event_type: string; step_name: string | null; data: { duration_ms?: number } }[];
      };
      const executed = audit.events.filter((e) => e.event_type === 'STEP_EXECUTED');
      expect(executed.map((e) => e.step_name)).toEqual(['check', 'authorize', 'receipt']);

      await page.goto(`${gw.url}/dashboard/#/workflows/${wf.id}`);
      await page.waitForSelector('#statechart g.node.active[data-state="completed"]');
      const bars = page.locator('#step-timeline g.bar');
      await expect.poll(() => bars.count()).toBe(executed.length);
      const shown = await Promise.all(
        (await bars.all()).map(async (bar) => ({
          step: await bar.getAttribute('data-step'),
          ms: Number(await bar.getAttribute('data-duration-ms')),
          width: Number(await bar.locator('rect').getAttribute('width')),
          x: Number(await bar.locator('rect').getAttribute('x')),
        })),
      );
      expect(shown.map((b) => b.step)).toEqual(executed.map((e) => e.step_name));
      expect(shown.map((b) => b.ms)).toEqual(executed.map((e) => e.data.duration_ms));
      // bar lengths are proportional to the durations (authorize waits 20 ms: its bar is
      // longer than the 3-pixel least), and each step starts after the one before ended
      const authorize = shown[1]!;
      expect(authorize.ms).toBeGreaterThanOrEqual(20);
      const pxPerMs = authorize.width / authorize.ms;
      for (const bar of shown)
        if (bar.ms * pxPerMs > 3) expect(bar.width).toBeCloseTo(bar.ms * pxPerMs, 1);
        else expect(bar.width).toBe(3);
      // (audit times are whole milliseconds: a start may read up to 1 ms early)
      for (let i = 1; i < shown.length; i++)
        expect(shown[i]!.x).toBeGreaterThanOrEqual(
          shown[i - 1]!.x + Math.max(3, shown[i - 1]!.ms * pxPerMs) - pxPerMs - 0.01,
        );
      await page.screenshot({ path: `${IMAGES}dashboard-workflow-timeline.png`, fullPage: true });
    });

    it('shows ids that tell rows apart, the full id on hover', async () => {
      await page.goto(`${gw.url}/dashboard/#/workflows?type=trend_payment`);
      for (const wf of cloudPayments) {
        const cell = page.locator(`#workflows tr[data-workflow="${wf.id}"] td.id`);
        await cell.waitFor();
        expect(await cell.getAttribute('title')).toBe(wf.id);
        expect(await cell.locator('code').textContent()).toBe(`…${wf.id.slice(-12)}`);
      }
      const shownIds = await page.locator('#workflows td.id code').allTextContents();
      expect(new Set(shownIds).size).toBe(shownIds.length);
      await page.screenshot({ path: `${IMAGES}dashboard-workflows.png`, fullPage: true });
      expect(errors).toEqual([]);
    });
  },
);
