/**
 * The chaos run, start to finish:
 *
 * 1. a database of its own; two gateway and two worker processes on it; an admin token from
 *    `saffron users create`; webhooks to a local receiver; the fraud rules and the fleet
 *    configuration; a fake acquirer; one proxy per device group; every terminal registered;
 * 2. the agent hosts start and customers pay; for `chaosSeconds` the fault plan runs —
 *    gateway, worker and host SIGKILLs with restarts, one PostgreSQL restart, a config
 *    publish, a DIAGNOSTIC broadcast, single commands, cloud workflows started through the
 *    API — while network faults cut, slow and reset device groups;
 * 3. every group is cut at once for `fullCutSeconds` (terminals keep paying offline), then
 *    every proxy is restored in the same instant: the reconnect storm;
 * 4. payments stop and the run waits until every terminal is online with an empty queue and
 *    the cloud has no moving workflow, open task, open command or undelivered webhook;
 * 5. hosts stop cleanly (their files are then read), the cloud stops, and the invariants are
 *    computed from the database rows, the device files, the agents' logs and the receiver.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startFakeAcquirer } from '../../bin/demo/paymentLoad.js';
import type { PaymentCounts } from '../../bin/demo/demoStats.js';
import { loadKeyring } from '../../gateway/index.js';
import { asCloud, openStore, type CloudStore } from '../../runtime/index.js';
import { adminApi } from './adminApi.js';
import { startAgentHosts, type AgentHosts } from './agentHosts.js';
import type { CloudBacklog } from './cloudBacklog.js';
import { writeCloudFlow } from './cloudFlow.js';
import { createChaosCloud, type ChaosCloud } from './cloudProcesses.js';
import { drainAfterStorm, waitForFleetOffline, waitForWebhooks } from './drain.js';
import { planFaults } from './faultPlan.js';
import { setUpFleet, type ChaosFleet } from './fleet.js';
import { checkInvariants } from './invariants/checkInvariants.js';
import type { InvariantResult } from './invariants/invariant.js';
import type { UnplannedExit } from './managedProcess.js';
import { startNetworkFaults, type NetworkFaultCounts } from './networkFaults.js';
import { registerWebhooks, startCloudWorkflows } from './operatorLoad.js';
import { createChaosDatabase } from './postgres.js';
import { runFaults } from './runFaults.js';
import { seededRandom } from './seededRandom.js';
import type { ChaosSize } from './sizes.js';
import { startWebhookReceiver } from './webhookReceiver.js';

const LAUNCHER = fileURLToPath(new URL('../../bin/saffron.js', import.meta.url));
const run = promisify(execFile);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An admin token from `saffron users create` (the way an operator gets one). */
async function createAdminToken(dbUrl: string): Promise<string> {
  const { stdout } = await run(process.execPath, [
    LAUNCHER,
    'users',
    'create',
    '--role',
    'admin',
    '--name',
    'chaos operator',
    '--json',
    '--db',
    dbUrl,
  ]);
  return (JSON.parse(stdout) as { token: string }).token;
}

/** Everything a run reports. */
export interface ChaosReport {
  size: ChaosSize;
  seed: number;
  ok: boolean;
  /** Seconds per phase. */
  timings: Record<string, number>;
  payments: PaymentCounts;
  faults: {
    planned: number;
    done: Record<string, number>;
    network: NetworkFaultCounts;
    postgresDownSeconds: number | null;
    unplannedExits: UnplannedExit[];
    /** Starts that exited before ready (the database was down) and were tried again. */
    failedStarts: number;
    failedActions: string[];
  };
  storm: { allOnlineSeconds: number | null; drainedSeconds: number | null };
  drain: { drained: boolean; last: CloudBacklog | null };
  cloudWorkflows: { confirmed: number; failed: number };
  invariants: InvariantResult[];
  /** Errors the agents logged (the first few per device and kind; informational). */
  agentErrors: { count: number; examples: string[] };
  events: { t: number; text: string }[];
  /** Where the processes' logs were kept (only when the run failed). */
  logsDir: string | null;
}

/** Run the chaos run of `size`; `say` gets progress lines. */
export async function runChaos(
  size: ChaosSize,
  options: {
    seed: number;
    say: (line: string) => void;
    /** Where to keep the processes' logs when the run fails (or throws). */
    keepLogsIn: string;
  },
): Promise<ChaosReport> {
  const { say } = options;
  const random = seededRandom(options.seed);
  const dir = mkdtempSync(join(tmpdir(), `saffron-chaos-${size.name}-`));
  mkdirSync(join(dir, 'logs'), { recursive: true });
  mkdirSync(join(dir, 'devices'), { recursive: true });
  const runStart = Date.now();
  const events: ChaosReport['events'] = [];
  let phaseStart = runStart;
  const event = (text: string) => {
    const t = Math.round((Date.now() - phaseStart) / 100) / 10;
    events.push({ t, text });
    say(`chaos: [${t.toFixed(1)} s] ${text}`);
  };
  const timings: Record<string, number> = {};
  const lap = (name: string, since: number) => (timings[name] = (Date.now() - since) / 1000);
  const unplannedExits: UnplannedExit[] = [];
  const onUnplannedExit = (exit: UnplannedExit) => {
    unplannedExits.push(exit);
    event(`${exit.name} exited on its own (${exit.code ?? exit.signal}); restarting it`);
  };

  const database = await createChaosDatabase();
  say(`chaos: database ${database.name}, folder ${dir}, seed ${options.seed}`);
  let cloud: ChaosCloud | undefined;
  let fleet: ChaosFleet | undefined;
  let hosts: AgentHosts | undefined;
  let store: CloudStore | undefined;
  const receiver = await startWebhookReceiver();
  const acquirer = await startFakeAcquirer();
  let passed = false;
  try {
    // 1. the cloud and the fleet
    const flow = writeCloudFlow(dir);
    const keys = loadKeyring(join(dir, 'keys'), {});
    cloud = await createChaosCloud({ dbUrl: database.url, dir, ...flow, onUnplannedExit });
    const token = await cloud.start(() => createAdminToken(database.url));
    const api = adminApi(cloud.gatewayUrls, token);
    const webhookIds = await registerWebhooks(api, receiver);
    fleet = await setUpFleet({
      api,
      gatewayUrls: cloud.gatewayUrls,
      dir,
      agents: size.agents,
      hosts: size.hosts,
      groups: size.groups,
      acquirerUrl: acquirer.url,
      publicKeyPem: keys.publicKeyPem,
      paymentGapMs: size.paymentGapSeconds * 1000,
    });
    lap('cloud_and_fleet_setup', runStart);
    say(
      `chaos: cloud up, ${size.agents} terminals registered in ${timings.cloud_and_fleet_setup} s`,
    );
    const hostsStart = Date.now();
    hosts = await startAgentHosts(fleet.specFiles, dir, onUnplannedExit);
    lap('hosts_start', hostsStart);
    say(
      `chaos: ${size.hosts} agent hosts up in ${timings.hosts_start} s (agents started in ${hosts.startTimes.map((ms) => `${(ms / 1000).toFixed(1)} s`).join(', ')})`,
    );

    // 2. payments under faults
    phaseStart = Date.now();
    const plan = planFaults(size, random);
    const network = startNetworkFaults(fleet.proxies, {
      everyMs: Math.max(1_000, 12_000 / size.groups),
      random,
    });
    const stopStarts = new AbortController();
    const starts = startCloudWorkflows(api, {
      count: size.cloudWorkflows,
      durationMs: size.chaosSeconds * 900,
      runId: database.name,
      signal: stopStarts.signal,
    });
    const faults = runFaults({ cloud, hosts, fleet, api, random, event }, plan, phaseStart);
    await sleep(Math.max(0, phaseStart + size.chaosSeconds * 1000 - Date.now()));
    // the phase ends when the last fault has played out (every process back up)
    const outcome = await faults;
    network.stop();
    lap('chaos_phase', phaseStart);

    // 3. full cut, then every device back at the same moment
    for (const p of fleet.proxies) p.cut();
    event(`every group cut for ${size.fullCutSeconds} s`);
    await sleep(size.fullCutSeconds * 1000);
    stopStarts.abort();
    for (const p of fleet.proxies) p.restore();
    const stormStart = Date.now();
    event('every group restored at once: reconnect storm');
    hosts.stopPayments();

    // 4. drain
    await starts.done;
    await starts.retryFailed();
    store = asCloud(await openStore(database.url, { postgres: { maxConnections: 2 } }));
    const drain = await drainAfterStorm({
      hosts,
      agents: size.agents,
      store,
      webhookIds,
      stormStart,
      timeoutMs: size.drainTimeoutSeconds * 1000,
    });
    lap('drain', stormStart);
    event(
      drain.drained
        ? `drained: all online after ${drain.allOnlineSeconds} s, queues empty after ${drain.queuesEmptySeconds} s`
        : `NOT drained after ${size.drainTimeoutSeconds} s: ${JSON.stringify({ fleet: hosts.backlog(stormStart), cloud: drain.last })}`,
    );

    // 5. stop and check
    await hosts.stop();
    // the terminals' goodbyes (device.offline) are webhook events too: once the gateways have
    // written them (presence is written behind), let them go out
    await waitForFleetOffline(
      store,
      fleet.devices.map((d) => d.deviceId),
      60_000,
    );
    await waitForWebhooks(store, webhookIds, 60_000);
    await cloud.stop();
    const checkStart = Date.now();
    const invariants = await checkInvariants({
      store,
      devices: fleet.devices,
      executions: hosts.executions,
      receiver,
      webhookIds,
      startedKeys: starts.confirmed,
    });
    lap('checks', checkStart);
    lap('total', runStart);
    const done = outcome.done;
    const allFaults =
      (done['kill-gateway'] ?? 0) >= size.killsPerKind &&
      (done['kill-worker'] ?? 0) >= size.killsPerKind &&
      (done['kill-host'] ?? 0) >= size.killsPerKind &&
      done['restart-postgres'] === 1;
    // a process that died on its own (say, when PostgreSQL restarted) fails the run too
    passed =
      drain.drained &&
      allFaults &&
      outcome.failed.length === 0 &&
      unplannedExits.length === 0 &&
      starts.failed.length === 0 &&
      invariants.every((i) => i.ok);
    return {
      size,
      seed: options.seed,
      ok: passed,
      timings,
      payments: hosts.counts(),
      faults: {
        planned: plan.length,
        done: { ...done, network_cuts: network.counts.cuts },
        network: network.counts,
        postgresDownSeconds: outcome.postgresDownSeconds,
        unplannedExits,
        failedStarts: [...cloud.gateways, ...cloud.workers, ...hosts.processes].reduce(
          (n, p) => n + p.failedStarts,
          0,
        ),
        failedActions: outcome.failed,
      },
      storm: {
        allOnlineSeconds: drain.allOnlineSeconds,
        drainedSeconds: drain.queuesEmptySeconds,
      },
      drain: { drained: drain.drained, last: drain.last },
      cloudWorkflows: { confirmed: starts.confirmed.length, failed: starts.failed.length },
      invariants,
      agentErrors: {
        count: hosts.agentErrors.length,
        examples: hosts.agentErrors.slice(0, 20).map((e) => `${e.deviceId} ${e.event}: ${e.msg}`),
      },
      events,
      logsDir: passed ? null : options.keepLogsIn,
    };
  } finally {
    await hosts?.stop().catch(() => undefined);
    await cloud?.stop().catch(() => undefined);
    await fleet?.close().catch(() => undefined);
    await store?.close().catch(() => undefined);
    await receiver.close();
    await acquirer.close();
    await database
      .drop()
      .catch((error: unknown) => say(`chaos: dropping ${database.name}: ${String(error)}`));
    if (!passed) {
      rmSync(options.keepLogsIn, { recursive: true, force: true });
      cpSync(join(dir, 'logs'), options.keepLogsIn, { recursive: true });
    }
    rmSync(dir, { recursive: true, force: true });
  }
}
