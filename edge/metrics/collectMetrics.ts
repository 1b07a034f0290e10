/**
 * The device metrics report (spec: "a JSON object with disk_usage_percent,
 * memory_usage_mb, pending_transactions (numbers), last_sync (timestamp) and
 * network_available (boolean)"; the cloud takes it at `POST /api/v1/devices/{id}/metrics`).
 *
 * Disk is measured on the filesystem that holds the agent's database — the one that fills up
 * when a terminal is offline for days and its SAF queue grows — as `df` does: used blocks
 * over used plus blocks available to unprivileged users. Memory is the process's resident
 * set. `last_sync` is written by the sync component (`SYNC_STATE_KEYS.lastSync`); a device
 * that has never synced reports null.
 */
import { statfs } from 'node:fs/promises';
import type { EdgeHandle } from '../../runtime/index.js';
import { readLastSync } from '../state/syncState.js';
import { countPendingTransactions } from './countPendingTransactions.js';

/** A metrics report, as the cloud takes it. */
export interface EdgeMetricsReport {
  disk_usage_percent: number;
  memory_usage_mb: number;
  pending_transactions: number;
  /** ISO 8601; null when the device has never synced. */
  last_sync: string | null;
  network_available: boolean;
}

/** What {@link collectMetrics} reads. */
export interface CollectMetricsDeps {
  store: EdgeHandle;
  /** A path on the filesystem to measure (the database's folder). */
  dataDir: string;
  /** Whether the agent believes it can reach the cloud. */
  networkAvailable: () => boolean;
  /** Resident memory in bytes (default `process.memoryUsage.rss()`). */
  memoryBytes?: () => number;
  /** Filesystem figures (default `fs.promises.statfs`). */
  statfs?: (path: string) => Promise<{ blocks: number; bfree: number; bavail: number }>;
}

const round = (value: number, digits: number) => Number(value.toFixed(digits));

/** Percentage of the filesystem used, as `df` computes it. */
export function diskUsagePercent(fs: { blocks: number; bfree: number; bavail: number }): number {
  const used = fs.blocks - fs.bfree;
  const denominator = used + fs.bavail;
  if (!(denominator > 0)) return 0;
  return Math.min(100, Math.max(0, round((used / denominator) * 100, 2)));
}

/** Collect a metrics report now. */
export async function collectMetrics(deps: CollectMetricsDeps): Promise<EdgeMetricsReport> {
  const [fs, pending, lastSync] = await Promise.all([
    (deps.statfs ?? statfs)(deps.dataDir),
    countPendingTransactions(deps.store),
    readLastSync(deps.store),
  ]);
  const rss = (deps.memoryBytes ?? (() => process.memoryUsage.rss()))();
  return {
    disk_usage_percent: diskUsagePercent(fs),
    memory_usage_mb: round(rss / (1024 * 1024), 1),
    pending_transactions: pending,
    last_sync: lastSync?.toISOString() ?? null,
    network_available: deps.networkAvailable(),
  };
}
