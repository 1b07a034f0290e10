/**
 * The agent's log: one structured entry per thing an operator may want to know, built from
 * the components' typed events. Entries carry ids, codes, counts and ETags — never a device
 * secret, token, card data or workflow state: those are not in the events to begin with, and
 * error messages come from the components, which keep them free of secrets.
 */
import { SaffronError, toError } from '../../runtime/index.js';
import type { CommandChannelEvent } from '../commands/commandChannel.js';
import type { ConfigSyncEvent } from '../config/configSync.js';
import type { MetricsEvent } from '../metrics/metricsReporter.js';
import type { SafSyncEvent } from '../sync/safSync.js';
import type { WasmCacheEvent } from '../wasm/wasmCache.js';
import type { WalCheckpointEvent } from './walCheckpoints.js';
import type { ConnectivityChange } from './connectivity.js';

/** Severity of an entry. */
export type AgentLogLevel = 'debug' | 'info' | 'warn' | 'error';

/** One log entry: a level, a namespaced event name, a sentence, and fields. */
export interface AgentLogEntry {
  level: AgentLogLevel;
  event: string;
  msg: string;
  [field: string]: unknown;
}

/** Where entries go. */
export type AgentLogger = (entry: AgentLogEntry) => void;

/** Log-safe description of an error: its code and message. */
export function failureEntry(event: string, msg: string, error: unknown) {
  const e = toError(error);
  return {
    level: 'error' as const,
    event,
    msg: `${msg}: ${e.message}`,
    ...(e instanceof SaffronError ? { code: e.code } : {}),
  };
}

/** The entry for a connectivity change. */
export function connectivityEntry(change: ConnectivityChange): AgentLogEntry {
  return change.online
    ? { level: 'info', event: 'edge.online', msg: `cloud reachable (${change.via})` }
    : {
        level: 'warn',
        event: 'edge.offline',
        msg: `cloud unreachable (${change.via}: ${change.reason ?? 'no answer'}); working offline`,
      };
}

/** The entry for a config sync event (polls that changed nothing are debug). */
export function configEntry(event: ConfigSyncEvent): AgentLogEntry {
  switch (event.type) {
    case 'edge.config.applied':
      return {
        level: 'info',
        event: event.type,
        msg: `configuration ${event.name} applied (revision ${event.revision}, from ${event.source})`,
        name: event.name,
        etag: event.etag,
      };
    case 'edge.config.rejected':
      return {
        level: 'error',
        event: event.type,
        msg: `configuration ${event.rejection.config_name} refused (${event.rejection.code}): ${event.rejection.message}; the last good one stays`,
        name: event.rejection.config_name,
        code: event.rejection.code,
      };
    case 'edge.config.failed':
      return {
        level: 'debug',
        event: event.type,
        msg: `configuration ${event.name} not polled (${event.code}): ${event.message}`,
      };
    case 'edge.config.unchanged':
      return { level: 'debug', event: event.type, msg: `configuration ${event.name} unchanged` };
    case 'edge.config.polled':
      return { level: 'debug', event: event.type, msg: 'configuration polled' };
    default: {
      const never: never = event;
      return { level: 'debug', event: 'edge.config', msg: String(never) };
    }
  }
}

/** The entry for a command channel event. */
export function commandEntry(event: CommandChannelEvent): AgentLogEntry {
  switch (event.type) {
    case 'edge.commands.connected':
      return { level: 'info', event: event.type, msg: 'command socket connected' };
    case 'edge.commands.disconnected':
      return {
        level: 'info',
        event: event.type,
        msg: `command socket closed (${event.code}); polling, reconnect in ${event.retryInMs} ms`,
      };
    case 'edge.commands.executed':
      return {
        level: event.status === 'EXECUTED' ? 'info' : 'warn',
        event: event.type,
        msg: `command ${event.commandType} ${event.commandId} ${event.status}${event.error ? `: ${event.error}` : ''}`,
        command_id: event.commandId,
        command_type: event.commandType,
        status: event.status,
      };
    case 'edge.commands.acked':
      return {
        level: 'debug',
        event: event.type,
        msg: `command ${event.commandId} acked ${event.status} over ${event.via}`,
        command_id: event.commandId,
        status: event.status,
      };
    case 'edge.commands.ack_refused':
      return {
        level: 'warn',
        event: event.type,
        msg: `ack of ${event.commandId} refused (${event.code}): ${event.message}`,
      };
    case 'edge.commands.invalid':
      return { level: 'warn', event: event.type, msg: `invalid command frame: ${event.message}` };
    case 'edge.commands.unverified':
      return {
        level: 'warn',
        event: event.type,
        msg: `command ${event.commandId} not run: ${event.message}`,
        command_id: event.commandId,
      };
    case 'edge.commands.received':
    case 'edge.commands.replayed':
    case 'edge.commands.polled':
    case 'edge.commands.poll_failed':
    case 'edge.commands.ack_failed':
      return { level: 'debug', event: event.type, msg: event.type };
    default: {
      const never: never = event;
      return { level: 'debug', event: 'edge.commands', msg: String(never) };
    }
  }
}

/** The entry for a WASM cache event. */
export function wasmEntry(event: WasmCacheEvent): AgentLogEntry {
  switch (event.type) {
    case 'edge.wasm.downloaded':
      return {
        level: 'info',
        event: event.type,
        msg: `WASM binary ${event.hash} downloaded and verified (${event.sizeBytes} bytes)`,
      };
    case 'edge.wasm.failed':
      return {
        level: 'warn',
        event: event.type,
        msg: `WASM binary ${event.hash} not fetched (${event.code}): ${event.message}`,
      };
    case 'edge.wasm.prefetch.done':
      return {
        level: event.report.failed > 0 ? 'warn' : 'info',
        event: event.type,
        msg: `WASM prefetch: ${event.report.cached} cached, ${event.report.downloaded} downloaded, ${event.report.failed} failed`,
      };
    case 'edge.wasm.prefetch.progress':
      return { level: 'debug', event: event.type, msg: event.type };
    default: {
      const never: never = event;
      return { level: 'debug', event: 'edge.wasm', msg: String(never) };
    }
  }
}

/** The entry for a WAL checkpoint event (checkpoints are debug). */
export function walEntry(event: WalCheckpointEvent): AgentLogEntry {
  switch (event.type) {
    case 'edge.wal.checkpointed':
      return {
        level: 'debug',
        event: event.type,
        msg: `database log checkpointed while idle: ${event.result.checkpointedPages} of ${event.result.logPages} page(s)${event.result.busy ? ' (busy)' : ''}`,
      };
    case 'edge.wal.failed':
      return failureEntry(event.type, 'database log checkpoint failed', event.error);
    default: {
      const never: never = event;
      return { level: 'debug', event: 'edge.wal', msg: String(never) };
    }
  }
}

/** The entry for a metrics event. */
export function metricsEntry(event: MetricsEvent): AgentLogEntry {
  return event.type === 'edge.metrics.reported'
    ? { level: 'debug', event: event.type, msg: 'metrics reported' }
    : {
        level: 'debug',
        event: event.type,
        msg: `metrics not reported (${event.code}): ${event.message}`,
      };
}

/** "n rejected", with each one's workflow id and code. */
const rejectedList = (rejected: readonly { workflowId: string; code: string }[]) =>
  `${rejected.length} rejected${
    rejected.length > 0 ? ` (${rejected.map((r) => `${r.workflowId} ${r.code}`).join(', ')})` : ''
  }`;

/** The entry for a SAF sync event (acks and failures are info; scheduling is debug). */
export function syncEntry(event: SafSyncEvent): AgentLogEntry {
  switch (event.type) {
    case 'edge.sync.ack':
      return {
        level: event.rejected.length > 0 ? 'warn' : 'info',
        event: event.type,
        msg: `SAF upload of ${event.uploaded}: ${event.synced.length} synced (${event.duplicates.length} already held), ${rejectedList(event.rejected)}`,
      };
    case 'edge.sync.failed':
      return {
        level: 'warn',
        event: event.type,
        msg: `SAF upload failed (${event.code}${event.status !== undefined ? `, HTTP ${event.status}` : ''}): ${event.message}`,
      };
    case 'edge.sync.summaries':
      return {
        level: event.rejected.length > 0 ? 'warn' : 'debug',
        event: event.type,
        msg: `workflow summaries uploaded: ${event.synced} held by the cloud, ${rejectedList(event.rejected)}`,
      };
    case 'edge.sync.summaries_unsupported':
      return {
        level: 'info',
        event: event.type,
        msg: `the cloud does not take workflow summaries (HTTP ${event.status}); they stay on the device`,
      };
    case 'edge.sync.done':
      return {
        level: 'debug',
        event: event.type,
        msg: `SAF sync round: ${event.result.synced} synced, ${event.result.remaining} pending`,
      };
    case 'edge.sync.scheduled':
      return {
        level: 'debug',
        event: event.type,
        msg: `SAF sync in ${event.delayMs} ms (${event.reason})`,
      };
    default: {
      const never: never = event;
      return { level: 'debug', event: 'edge.sync', msg: String(never) };
    }
  }
}
