/**
 * The chaos run's printed summary: what ran (terminals, payments, faults, the storm's
 * recovery times) and one row per invariant with its verdict and figures, then the
 * violations of any invariant that failed.
 */
import { totalPayments } from '../../bin/demo/demoStats.js';
import type { ChaosReport } from './chaosRun.js';

const figures = (f: Record<string, number | string>) =>
  Object.entries(f)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');

function table(rows: [string, string, string][]): string {
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i]!.length)));
  const line = (r: [string, string, string]) =>
    `| ${r.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')} |`;
  const rule = `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`;
  return [line(rows[0]!), rule, ...rows.slice(1).map(line)].join('\n');
}

/** The summary of `report` as text. */
export function formatReport(report: ChaosReport): string {
  const p = report.payments;
  const f = report.faults;
  const seconds = (x: number | null) => (x === null ? 'never' : `${x.toFixed(1)} s`);
  const rows: [string, string, string][] = [
    ['check', 'result', 'figures'],
    [
      'run',
      report.ok ? 'PASS' : 'FAIL',
      `size ${report.size.name}, seed ${report.seed}, ${report.size.agents} agents in ${report.size.hosts} hosts, ${report.size.groups} groups, total ${report.timings.total ?? '?'} s`,
    ],
    [
      'payments',
      '',
      `${totalPayments(p)}: approved ${p.approvedOnline} online + ${p.approvedOffline} offline, declined ${p.declined + p.limited}, failed ${p.failed}`,
    ],
    [
      'faults',
      f.failedActions.length === 0 && f.unplannedExits.length === 0 ? 'done' : 'FAIL',
      `${figures(f.done)}, slow links ${f.network.slowLinks}, resets ${f.network.resets}, PostgreSQL down ${f.postgresDownSeconds?.toFixed(1) ?? '?'} s, starts retried ${f.failedStarts}, unplanned exits ${f.unplannedExits.length}`,
    ],
    [
      'reconnect storm',
      report.drain.drained ? 'drained' : 'FAIL',
      `all ${report.size.agents} online after ${seconds(report.storm.allOnlineSeconds)}, SAF queues empty after ${seconds(report.storm.drainedSeconds)}, cloud drained after ${report.timings.drain ?? '?'} s`,
    ],
    [
      'cloud workflows started',
      report.cloudWorkflows.failed === 0 ? 'ok' : 'some failed',
      `${report.cloudWorkflows.confirmed} confirmed, ${report.cloudWorkflows.failed} failed to start`,
    ],
    ...report.invariants.map((i): [string, string, string] => [
      i.name,
      i.ok ? 'PASS' : 'FAIL',
      figures(i.figures),
    ]),
  ];
  const problems = [
    ...report.faults.failedActions.map((a) => `fault action failed: ${a}`),
    ...report.faults.unplannedExits.map(
      (e) => `unplanned exit: ${e.name} (${e.code ?? e.signal}) at ${e.at}`,
    ),
    ...(report.drain.drained ? [] : [`not drained: ${JSON.stringify(report.drain.last)}`]),
    ...report.invariants.flatMap((i) => i.violations.map((x) => `${i.name}: ${x}`)),
  ];
  return [table(rows), ...(problems.length ? ['', ...problems] : [])].join('\n');
}
