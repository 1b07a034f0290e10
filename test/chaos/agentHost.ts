/**
 * An agent host of the chaos run: one child process running many edge agents — each a real
 * `createEdgeAgent` over its own SQLite file, reaching the cloud through its group's proxy —
 * and customers paying at them (the demo's `runPayments`). Many agents per process is how
 * hundreds of terminals fit a small machine; the run SIGKILLs a host at random and starts it
 * again over the same files, and the agents must pick up where the dead process left off
 * (`start()` drives the workflows it left mid-flight). The agents share one WASM thread pool:
 * two threads per agent (the default for a real terminal) would be hundreds per host.
 *
 * Usage: `node --import tsx test/chaos/agentHost.ts <spec.json>`. Reports on stdout as JSON
 * lines (hostProtocol.ts): ready, payment counts and SAF backlog every two seconds, every
 * command an agent executed (from the agent's own log, so the run can check none ran twice),
 * agent errors. Reads `{"cmd":"stop_payments"}` on stdin; SIGTERM stops every agent cleanly.
 */
import { setMaxListeners } from 'node:events';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { createEdgeAgent, type AgentLogEntry, type EdgeAgent } from '../../edge/index.js';
import { createWasmThreadPool } from '../../runtime/index.js';
import { mapSecrets } from '../../runtime/template/index.js';
import { emptyCounts } from '../../bin/demo/demoStats.js';
import { runPayments } from '../../bin/demo/paymentLoad.js';
import type { HostCommand, HostDevice, HostMessage, HostSpec } from './hostProtocol.js';

const spec = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as HostSpec;
const host = spec.host;
/** One WASM thread pool for every agent of the host (the fraud rules run in WASM). */
const wasmThreads = createWasmThreadPool(2);
const say = (message: HostMessage) => process.stdout.write(`${JSON.stringify(message)}\n`);

/** Agent errors passed up per device and event (the rest is only in the host's log). */
const ERRORS_PER_KIND = 3;
const errorCounts = new Map<string, number>();

function logFor(deviceId: string) {
  return (entry: AgentLogEntry) => {
    if (entry.event === 'edge.commands.executed')
      say({
        t: 'command',
        host,
        deviceId,
        commandId: String(entry.command_id),
        commandType: String(entry.command_type),
        status: String(entry.status),
      });
    if (entry.level === 'error') {
      const key = `${deviceId}:${entry.event}`;
      const n = (errorCounts.get(key) ?? 0) + 1;
      errorCounts.set(key, n);
      if (n <= ERRORS_PER_KIND)
        say({ t: 'agent_error', host, deviceId, event: entry.event, msg: entry.msg });
    }
    if (entry.level === 'error' || entry.level === 'warn')
      process.stderr.write(`${deviceId} ${entry.level} ${entry.event}: ${entry.msg}\n`);
  };
}

function agentOf(device: HostDevice): EdgeAgent {
  return createEdgeAgent({
    deviceId: device.deviceId,
    deviceSecret: device.deviceSecret,
    cloudUrl: device.cloudUrl,
    dbPath: device.dbFile,
    cardKey: Buffer.from(device.cardKeyHex, 'hex'),
    stepsRoot: spec.exampleDir,
    workflowDirs: [spec.exampleDir],
    cloudPublicKeyPem: spec.publicKeyPem,
    secrets: mapSecrets({
      ACQUIRER_TOKEN: { value: 'chaos-acquirer-token', hosts: ['127.0.0.1'] },
    }),
    outbound: { allowedPrivateNetworks: ['loopback'] },
    wasm: { threads: wasmThreads },
    // minutes of a real terminal's life in seconds: quick retries, a short upload jitter
    maxBackoffMs: 3_000,
    syncJitterMs: 2_000,
    metricsIntervalMs: 60_000,
    commandPollIntervalMs: 2_000,
    log: logFor(device.deviceId),
  });
}

/**
 * Start `agents`, `concurrency` at a time (starts wait on the disk and the cloud as much as on
 * the CPU), handing each to `onStarted` as soon as it is up.
 */
async function startAll(
  agents: EdgeAgent[],
  concurrency: number,
  onStarted: (agent: EdgeAgent) => void,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < agents.length) {
      const agent = agents[next++]!;
      await agent.start();
      onStarted(agent);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
}

async function main(): Promise<void> {
  const started = Date.now();
  // handlers first: a SIGTERM while the agents start still stops them cleanly
  const terminated = new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  const agents = spec.devices.map(agentOf);
  const counts = emptyCounts();
  const stopPayments = new AbortController();
  // every terminal's customer loop listens on this one signal
  setMaxListeners(agents.length + 10, stopPayments.signal);
  // a terminal takes payments as soon as its own agent is up, not when the whole host is
  const load: Promise<void>[] = [];
  await startAll(agents, 16, (agent) =>
    load.push(
      runPayments(agent, {
        counts,
        random: Math.random,
        acquirerUrl: spec.acquirerUrl,
        meanGapMs: spec.paymentGapMs,
        signal: stopPayments.signal,
      }),
    ),
  );
  say({ t: 'ready', host, agents: agents.length, startMs: Date.now() - started });

  const report = async () => {
    say({ t: 'counts', host, counts: { ...counts } });
    const statuses = await Promise.all(agents.map((a) => a.status().catch(() => undefined)));
    say({
      t: 'status',
      host,
      agents: agents.length,
      online: statuses.filter((s) => s?.online).length,
      pending: statuses.reduce((n, s) => n + (s?.saf.pending_count ?? 0), 0),
    });
  };
  let reporting = false;
  // every other second: a status is a few SQLite reads per agent, and a host has many
  const ticker = setInterval(() => {
    if (reporting) return;
    reporting = true;
    void report().finally(() => (reporting = false));
  }, 2_000);

  createInterface({ input: process.stdin }).on('line', (line) => {
    let command: HostCommand | undefined;
    try {
      command = JSON.parse(line) as HostCommand;
    } catch {
      return;
    }
    if (command.cmd === 'stop_payments') stopPayments.abort();
  });

  await terminated;
  stopPayments.abort();
  await Promise.all(load);
  clearInterval(ticker);
  await Promise.all(agents.map((a) => a.stop()));
  await wasmThreads.close();
  say({ t: 'stopped', host, counts: { ...counts } });
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`agent host ${host}: ${String(error)}\n`);
    process.exit(1);
  },
);
