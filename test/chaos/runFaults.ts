/**
 * Carrying out the fault plan (faultPlan.ts) during the chaos phase: each action at its
 * time, without waiting for the previous one (a host takes a while to come back, and the
 * next fault should not wait for it) — except that a process is not killed again before it
 * is back from its previous kill. A kill is SIGKILL, a pause, and a start that waits
 * for the process to be ready again. Resolves when every action has finished; failures are
 * collected, not thrown, so one failed action does not hide what the others did.
 */
import type { AdminApi } from './adminApi.js';
import type { AgentHosts } from './agentHosts.js';
import type { ChaosCloud } from './cloudProcesses.js';
import type { PlannedFault } from './faultPlan.js';
import { publishFleetConfig, type ChaosFleet } from './fleet.js';
import type { ManagedProcess } from './managedProcess.js';
import { broadcastDiagnostic, sendCommand } from './operatorLoad.js';
import { restartPostgres } from './postgres.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What the actions act on and report to. */
export interface FaultTargets {
  cloud: ChaosCloud;
  hosts: AgentHosts;
  fleet: ChaosFleet;
  api: AdminApi;
  random: () => number;
  /** A line for the run's event log. */
  event: (text: string) => void;
}

/** What the plan did. */
export interface FaultOutcome {
  /** Actions completed, by kind. */
  done: Record<string, number>;
  /** Actions that failed, with the error. */
  failed: string[];
  /** Seconds PostgreSQL did not answer during its restart (null if it was not restarted). */
  postgresDownSeconds: number | null;
}

function processOf(t: FaultTargets, f: Extract<PlannedFault, { downMs: number }>): ManagedProcess {
  switch (f.kind) {
    case 'kill-gateway':
      return t.cloud.gateways[f.target]!;
    case 'kill-worker':
      return t.cloud.workers[f.target]!;
    case 'kill-host':
      return t.hosts.processes[f.target]!;
  }
}

async function act(t: FaultTargets, f: PlannedFault, outcome: FaultOutcome): Promise<void> {
  switch (f.kind) {
    case 'kill-gateway':
    case 'kill-worker':
    case 'kill-host': {
      const proc = processOf(t, f);
      await proc.kill();
      t.event(`SIGKILL ${proc.name}; back in ${(f.downMs / 1000).toFixed(1)} s`);
      await sleep(f.downMs);
      await proc.start();
      t.event(`${proc.name} restarted`);
      return;
    }
    case 'restart-postgres': {
      t.event('restarting PostgreSQL');
      const seconds = await restartPostgres();
      outcome.postgresDownSeconds = seconds;
      t.event(`PostgreSQL answers again after ${seconds.toFixed(1)} s`);
      return;
    }
    case 'publish-config':
      await publishFleetConfig(t.api, 2);
      t.event('published fleet config v2');
      return;
    case 'broadcast':
      t.event(`DIAGNOSTIC broadcast ${await broadcastDiagnostic(t.api)} started`);
      return;
    case 'command': {
      const device = t.fleet.devices[f.target]!;
      t.event(`${await sendCommand(t.api, device.deviceId, t.random)} sent to ${device.deviceId}`);
      return;
    }
    default: {
      const never: never = f;
      throw new Error(`unknown fault ${JSON.stringify(never)}`);
    }
  }
}

/** Run `plan` from `startedAt` (epoch ms); resolves when every action has finished. */
export async function runFaults(
  t: FaultTargets,
  plan: readonly PlannedFault[],
  startedAt: number,
): Promise<FaultOutcome> {
  const outcome: FaultOutcome = { done: {}, failed: [], postgresDownSeconds: null };
  const actions: Promise<void>[] = [];
  // a process is killed again only once it is back from its previous kill
  const lastOn = new Map<string, Promise<void>>();
  for (const f of plan) {
    await sleep(Math.max(0, startedAt + f.atMs - Date.now()));
    const key = 'downMs' in f ? `${f.kind}:${f.target}` : `${f.kind}:${actions.length}`;
    const action = (lastOn.get(key) ?? Promise.resolve()).then(() => act(t, f, outcome));
    lastOn.set(
      key,
      action.catch(() => undefined),
    );
    actions.push(
      action.then(
        () => void (outcome.done[f.kind] = (outcome.done[f.kind] ?? 0) + 1),
        (error: unknown) => {
          outcome.failed.push(`${f.kind}: ${String(error)}`);
          t.event(`${f.kind} failed: ${String(error)}`);
        },
      ),
    );
  }
  await Promise.all(actions);
  return outcome;
}
