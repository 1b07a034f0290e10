/**
 * The parent's side of the agent hosts: one managed process per host spec, and what they
 * report folded together — payment counts (summed over every incarnation of a host, since a
 * killed host's counters die with it and a restarted one counts from zero), SAF backlog and
 * online terminals per host, and each command an agent reported executing, by device and
 * command id, so a command run twice on a device shows up as a count of two.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { emptyCounts, type PaymentCounts } from '../../bin/demo/demoStats.js';
import { parseHostMessage, type HostCommand, type HostMessage } from './hostProtocol.js';
import { managedProcess, type ManagedProcess, type UnplannedExit } from './managedProcess.js';

const HOST_SCRIPT = fileURLToPath(new URL('./agentHost.ts', import.meta.url));
const STOP_PAYMENTS = JSON.stringify({ cmd: 'stop_payments' } satisfies HostCommand);

/** The latest backlog report of a host. */
interface HostStatus {
  agents: number;
  online: number;
  pending: number;
  at: number;
}

/** The running hosts and what they said. */
export interface AgentHosts {
  processes: ManagedProcess[];
  /** Payments over every incarnation of every host. */
  counts(): PaymentCounts;
  /** Terminals online and SAF records pending, from reports newer than `sinceMs`. */
  backlog(sinceMs: number): { reported: number; online: number; pending: number };
  /** Executions reported per `<device>|<command id>`. */
  executions: Map<string, number>;
  /** Agent errors reported (first few per device and kind). */
  agentErrors: Extract<HostMessage, { t: 'agent_error' }>[];
  /** Milliseconds each host's agents took to start, per start. */
  startTimes: number[];
  /** Tell every host to stop taking payments. */
  stopPayments(): void;
  /** SIGTERM every host (agents stop cleanly). */
  stop(): Promise<void>;
}

/** Start one host per spec file and wait until all are ready. */
export async function startAgentHosts(
  specFiles: readonly string[],
  dir: string,
  onUnplannedExit: (exit: UnplannedExit) => void,
): Promise<AgentHosts> {
  const finished: PaymentCounts[] = [];
  const live = new Map<number, PaymentCounts>();
  const statuses = new Map<number, HostStatus>();
  const executions = new Map<string, number>();
  const agentErrors: AgentHosts['agentErrors'] = [];
  const startTimes: number[] = [];
  let paymentsStopped = false;
  const bank = (host: number) => {
    const counts = live.get(host);
    if (counts) finished.push(counts);
    live.delete(host);
    statuses.delete(host);
  };

  const onMessage = (message: HostMessage) => {
    switch (message.t) {
      case 'ready':
        // a new incarnation: bank what the previous one counted, and keep it from paying
        // again once the run has stopped payments
        bank(message.host);
        startTimes.push(message.startMs);
        if (paymentsStopped) processes[message.host]?.send(STOP_PAYMENTS);
        break;
      case 'counts':
        live.set(message.host, message.counts);
        break;
      case 'status':
        statuses.set(message.host, { ...message, at: Date.now() });
        break;
      case 'command': {
        const key = `${message.deviceId}|${message.commandId}`;
        executions.set(key, (executions.get(key) ?? 0) + 1);
        break;
      }
      case 'agent_error':
        agentErrors.push(message);
        break;
      case 'stopped':
        live.set(message.host, message.counts);
        break;
      default: {
        const never: never = message;
        throw new Error(`unknown host message ${JSON.stringify(never)}`);
      }
    }
  };

  const processes: ManagedProcess[] = specFiles.map((file, host) =>
    managedProcess({
      name: `host-${host}`,
      args: ['--import', 'tsx', HOST_SCRIPT, file],
      logFile: join(dir, 'logs', `host-${host}.log`),
      isReady: (line) => line.startsWith('{"t":"ready"'),
      // fifty agents on a busy machine take a while; their cloud may be restarting too
      readyTimeoutMs: 600_000,
      onLine: (line) => {
        const message = parseHostMessage(line);
        if (message) onMessage(message);
      },
      onUnplannedExit,
    }),
  );

  const hosts: AgentHosts = {
    processes,
    counts() {
      const total = emptyCounts();
      for (const c of [...finished, ...live.values()])
        for (const k of Object.keys(total) as (keyof PaymentCounts)[]) total[k] += c[k];
      return total;
    },
    backlog(sinceMs) {
      const fresh = [...statuses.values()].filter((s) => s.at >= sinceMs);
      return {
        reported: fresh.reduce((n, s) => n + s.agents, 0),
        online: fresh.reduce((n, s) => n + s.online, 0),
        pending: fresh.reduce((n, s) => n + s.pending, 0),
      };
    },
    executions,
    agentErrors,
    startTimes,
    stopPayments() {
      paymentsStopped = true;
      for (const p of processes) p.send(STOP_PAYMENTS);
    },
    async stop() {
      await Promise.all(processes.map((p) => p.stop(60_000)));
    },
  };
  await Promise.all(processes.map((p) => p.start()));
  return hosts;
}
