/* global document */
/**
 * The overview's trend charts, drawn with uPlot from GET /api/v1/metrics/series: one chart
 * per panel, its series by name. A chart is created once per window and then fed new data,
 * so refreshing does not rebuild the canvas. Each chart's element keeps its uPlot instance
 * (`element.uplot`) so the drawn data can be read back.
 */
import uPlot from '/dashboard/vendor/uplot.js';

/** The panels: a title, a unit for the axis, and the series drawn (name, label, colour). */
export const PANELS = [
  {
    id: 'payments',
    title: 'Payments approved',
    unit: 'payments',
    series: [
      ['payments_approved_online', 'online', '#15803d'],
      ['payments_approved_offline', 'offline (floor limit)', '#c2410c'],
    ],
  },
  {
    id: 'backlog',
    title: 'SAF backlog',
    unit: 'records',
    series: [['saf_backlog', 'records on devices', '#7c3aed']],
  },
  {
    id: 'devices',
    title: 'Devices online',
    unit: 'devices',
    series: [['devices_online', 'online or syncing', '#0369a1']],
  },
  {
    id: 'commands',
    title: 'Commands',
    unit: 'commands',
    series: [
      ['commands_succeeded', 'executed', '#15803d'],
      ['commands_failed', 'failed', '#b91c1c'],
    ],
  },
  {
    id: 'throughput',
    title: 'Workflows ended',
    unit: 'workflows',
    series: [['workflows_ended', 'ended', '#0f766e']],
  },
  {
    id: 'latency',
    title: 'Workflow run time',
    unit: 'ms',
    series: [
      ['workflow_latency_p50_ms', 'p50', '#2563eb'],
      ['workflow_latency_p99_ms', 'p99', '#db2777'],
    ],
  },
];

const WIDTH = 420;
const HEIGHT = 180;

/**
 * Create the panels in `container`; returns `update(data)` that draws a series answer
 * (creating the charts on the first call and when the bucket width changes).
 */
export function trendCharts(container) {
  const boxes = PANELS.map((panel) => {
    const box = document.createElement('div');
    box.className = 'trend';
    box.dataset.chart = panel.id;
    const title = document.createElement('h3');
    title.textContent = panel.title;
    const total = document.createElement('span');
    total.className = 'total';
    title.append(' ', total);
    const plot = document.createElement('div');
    box.append(title, plot);
    return { panel, box, plot, total, chart: undefined, step: undefined };
  });
  container.replaceChildren(...boxes.map((b) => b.box));

  return function update(data) {
    for (const b of boxes) {
      const columns = [data.timestamps, ...b.panel.series.map(([name]) => data.series[name])];
      const points = columns
        .slice(1)
        .reduce((n, values) => n + values.filter((v) => v !== null).length, 0);
      b.box.dataset.points = String(points);
      b.total.textContent = summary(b.panel, data);
      if (b.chart && b.step === data.step_seconds) {
        b.chart.setData(columns);
        continue;
      }
      b.chart?.destroy();
      b.step = data.step_seconds;
      b.chart = new uPlot(
        {
          width: WIDTH,
          height: HEIGHT,
          cursor: { drag: { x: false, y: false } },
          legend: { live: false },
          scales: { y: { range: (_u, min, max) => [0, Math.max(1, max ?? 0, min ?? 0) * 1.1] } },
          axes: [{}, { label: b.panel.unit, size: 50 }],
          series: [
            {},
            ...b.panel.series.map(([, label, stroke]) => ({
              label,
              stroke,
              fill: `${stroke}22`,
              width: 2,
              spanGaps: false,
              points: { show: true, size: 4 },
            })),
          ],
        },
        columns,
        b.plot,
      );
      b.box.uplot = b.chart;
    }
  };
}

/** What a panel's heading adds: totals over the window, or the latest value of a gauge. */
function summary(panel, data) {
  return panel.series
    .map(([name, label]) => {
      const values = data.series[name];
      if (name === 'saf_backlog' || name === 'devices_online') {
        const last = [...values].reverse().find((v) => v !== null);
        return last === undefined ? '' : `now ${last}`;
      }
      if (name.startsWith('workflow_latency')) {
        const known = values.filter((v) => v !== null);
        return known.length ? `${label} max ${Math.round(Math.max(...known))}` : '';
      }
      return `${label} ${values.reduce((sum, v) => sum + (v ?? 0), 0)}`;
    })
    .filter(Boolean)
    .join(' · ');
}
