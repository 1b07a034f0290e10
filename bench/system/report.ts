/**
 * The system benchmark's result files: `<prefix>.json` (the result as printed with `--json`,
 * plus when and with which settings it ran) and `<prefix>.md` (the same as Markdown tables,
 * which the README links to). Every figure in them comes from the run's result object; a
 * part that did not run or failed shows "—" and the notes say why.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { format, resolveConfig } from 'prettier';
import type { BenchResult } from '../harness.js';
import type { SystemSettings } from './settings.js';

type Figure = number | null | undefined;

const cell = (v: Figure, unit = '') =>
  typeof v === 'number' ? `${v.toLocaleString('en-US', { maximumFractionDigits: 2 })}${unit}` : '—';

function table(head: string[], rows: (string | Figure)[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [
    line(head),
    line(head.map(() => '---')),
    ...rows.map((r) => line(r.map((c) => (typeof c === 'string' ? c : cell(c))))),
  ].join('\n');
}

function workflowsSection(r: BenchResult, s: SystemSettings): string {
  const { metrics: m, baselines: b, ratios: q } = r;
  const rows: (string | Figure)[][] = s.workers.flatMap((w) => [
    [
      `workflows/s, ${w} worker process(es)`,
      m[`workflows_per_s_${w}w`],
      b[`dbos_workflows_per_s_${w}w`],
      q[`vs_dbos_${w}w`],
    ],
    [
      `latency in the burst p50 / p99 (ms), ${w} worker(s)`,
      `${cell(m[`burst_latency_p50_ms_${w}w`])} / ${cell(m[`burst_latency_p99_ms_${w}w`])}`,
      `${cell(b[`dbos_burst_latency_p50_ms_${w}w`])} / ${cell(b[`dbos_burst_latency_p99_ms_${w}w`])}`,
      '',
    ],
  ]);
  rows.push(
    [
      `latency p50 (ms), paced ${s.pacedRate}/s`,
      m.latency_p50_ms,
      b.dbos_latency_p50_ms,
      q.latency_p50_vs_dbos,
    ],
    [
      `latency p99 (ms), paced ${s.pacedRate}/s`,
      m.latency_p99_ms,
      b.dbos_latency_p99_ms,
      q.latency_p99_vs_dbos,
    ],
  );
  return [
    `## Durable workflows end to end (5 steps, one ASYNC; ${s.workflows} per burst)`,
    '',
    table(['', 'Saffron', 'DBOS Transact', 'Saffron ÷ DBOS'], rows),
    '',
    `Headline: \`metrics.workflows_per_s\` = ${cell(m.workflows_per_s)} (${cell(m.workflows_per_s_workers)} worker processes), \`baselines.dbos_workflows_per_s\` = ${cell(b.dbos_workflows_per_s)}, \`ratios.vs_dbos\` = ${cell(q.vs_dbos)} (goal ≥ 2).`,
  ].join('\n');
}

function safSection(r: BenchResult, s: SystemSettings): string {
  const { metrics: m, baselines: b, ratios: q } = r;
  return [
    `## Store-and-forward sync (${cell(m.saf_devices)} devices × ${s.safRecords} records, batches of ${s.safBatch})`,
    '',
    table(
      ['', 'value'],
      [
        ['records accepted/s through the gateway', m.saf_records_per_s],
        ['raw multi-row INSERT rows/s (baseline)', b.raw_batch_insert_rows_per_s],
        ['ratio', q.saf_vs_raw_batch_insert],
        ['whole fleet synced (s)', m.saf_sync_seconds],
        [
          'device backlog synced p50 / p99 (ms)',
          `${cell(m.saf_device_synced_p50_ms)} / ${cell(m.saf_device_synced_p99_ms)}`,
        ],
        [
          'upload request p50 / p99 (ms)',
          `${cell(m.saf_request_p50_ms)} / ${cell(m.saf_request_p99_ms)}`,
        ],
      ],
    ),
  ].join('\n');
}

function stormSection(r: BenchResult): string {
  const { metrics: m, baselines: b, ratios: q } = r;
  return [
    `## Reconnect storm (${cell(m.storm_devices)} WebSocket devices dropped and reconnecting at once)`,
    '',
    table(
      ['', 'Saffron gateway', 'bare ws server', 'ratio'],
      [
        ['devices back within the budget', m.storm_reconnected, '', ''],
        [
          'all reconnected (s)',
          m.storm_reconnect_all_seconds,
          b.raw_ws_storm_reconnect_all_seconds,
          q.storm_vs_raw_ws,
        ],
        ['all reported online by the gateway (s)', m.storm_online_all_seconds, '—', ''],
        [
          'per-device reconnect p50 (ms)',
          m.storm_reconnect_p50_ms,
          b.raw_ws_storm_reconnect_p50_ms,
          '',
        ],
        [
          'per-device reconnect p99 (ms)',
          m.storm_reconnect_p99_ms,
          b.raw_ws_storm_reconnect_p99_ms,
          q.storm_p99_vs_raw_ws,
        ],
        ['failed attempts (retried)', m.storm_failed_attempts, b.raw_ws_storm_failed_attempts, ''],
        ['of them refused by admission (503, Retry-After)', m.storm_admission_refusals, '', ''],
        ['initial connect of the fleet (s)', m.storm_initial_connect_seconds, '', ''],
      ],
    ),
  ].join('\n');
}

/** Markdown of `result`. */
export function markdownOf(result: BenchResult, s: SystemSettings, at: Date): string {
  const sections = [
    '# System benchmark results',
    '',
    `Written by \`npm run bench -- system\` (bench/system.ts) on ${at.toISOString()}. Every baseline was measured in the same run on the same machine and database; the notes below say exactly what each figure is.`,
  ];
  if (s.parts.includes('workflows')) sections.push('', workflowsSection(result, s));
  if (s.parts.includes('saf')) sections.push('', safSection(result, s));
  if (s.parts.includes('storm')) sections.push('', stormSection(result));
  sections.push('', '## Notes', '', ...result.notes.map((n) => `- ${n.replace(/\n/g, ' ')}`), '');
  return sections.join('\n');
}

/**
 * Write `<prefix>.json` and `<prefix>.md`; returns their paths. The JSON is laid out by the
 * repository's Prettier settings, so `npm run check` accepts the committed file as written.
 */
export async function writeReport(
  prefix: string,
  result: BenchResult,
  s: SystemSettings,
): Promise<string[]> {
  const at = new Date();
  mkdirSync(dirname(prefix), { recursive: true });
  const json = `${prefix}.json`;
  const md = `${prefix}.md`;
  const text = JSON.stringify({ ...result, written_at: at.toISOString(), settings: s });
  const config = (await resolveConfig(json)) ?? {};
  writeFileSync(json, await format(text, { ...config, filepath: json }));
  writeFileSync(md, markdownOf(result, s, at));
  return [json, md];
}
