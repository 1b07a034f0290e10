/**
 * What the agent shows about itself (`EdgeAgent.status()`, the local API's
 * `GET /local/v1/status`): whether it reaches the cloud, the store-and-forward backlog, the
 * configuration in force (and the last one it refused), the command transport and the
 * workflow versions new workflows start on. Reachability comes from the agent's live status
 * store (agentStatusStore.ts); the backlog and the last sync from the database, which keeps
 * them with the writes that change them.
 */
import { readLastSync } from '../state/syncState.js';
import type { AgentParts } from './agentParts.js';

/** The agent's status, in the local API's JSON names. */
export interface EdgeAgentStatus {
  device_id: string;
  running: boolean;
  online: boolean;
  online_since: string | null;
  saf: { pending_count: number; pending_amount_minor: number; oldest_created_at: string | null };
  last_sync: string | null;
  config: {
    version: string | null;
    etag: string | null;
    revision: number | null;
    applied_at: string | null;
    fraud_rules_etag: string | null;
    last_rejection: unknown;
  };
  commands: { transport: string; executed: number };
  workflows: {
    workflow_type: string;
    workflow_version: string | null;
    definition_hash: string;
    source: string;
  }[];
}

/** The status of the agent made of `parts`. */
export async function agentStatus(
  parts: AgentParts,
  info: { deviceId: string; running: boolean },
): Promise<EdgeAgentStatus> {
  const { store, recorder, config, commands, catalog, status } = parts;
  const backlog = await recorder.backlog(store);
  const lastSync = await readLastSync(store);
  const live = status.getSnapshot().context;
  const device = config?.current('device');
  const channel = commands.status();
  return {
    device_id: info.deviceId,
    running: info.running,
    online: live.online,
    online_since: live.onlineSince?.toISOString() ?? null,
    saf: {
      pending_count: backlog.count,
      pending_amount_minor: backlog.amountMinor,
      oldest_created_at: backlog.oldestCreatedAt,
    },
    last_sync: lastSync?.toISOString() ?? null,
    config: {
      version: device?.version ?? null,
      etag: device?.etag ?? null,
      revision: device?.revision ?? null,
      applied_at: device?.appliedAt?.toISOString() ?? null,
      fraud_rules_etag: config?.current('fraud_rules')?.etag ?? null,
      last_rejection: config?.status().lastRejection ?? null,
    },
    commands: { transport: channel.transport, executed: channel.executed },
    workflows: catalog.entries().map((e) => ({
      workflow_type: e.definition.workflow_type,
      workflow_version: e.definition.workflow_version ?? null,
      definition_hash: e.hash,
      source: e.source.kind,
    })),
  };
}
