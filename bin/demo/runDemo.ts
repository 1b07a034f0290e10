/**
 * `saffron demo`: the whole product in one process, on embedded defaults. A cloud on PGlite,
 * N simulated terminals running real edge agents (own SQLite files, signed HTTP and
 * WebSocket traffic through a cuttable TCP proxy per group), customers paying at them,
 * random network outages, a configuration change and a fraud-rule update rolled out
 * mid-run, and a live summary. At the end — Ctrl-C, or `--duration` — the network comes
 * back, the queues drain, and the store-and-forward promise is checked: every record a
 * terminal wrote offline is in the cloud exactly once.
 */
import { setMaxListeners } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EdgeAgent } from '../../edge/index.js';
import type { CliIo } from '../io.js';
import { expectOk, startDemoCloud, type DemoCloud } from './demoCloud.js';
import { startDemoFleet, type DemoFleet } from './demoFleet.js';
import {
  emptyCounts,
  formatSnapshot,
  totalPayments,
  type DemoSnapshot,
  type PaymentCounts,
} from './demoStats.js';
import { buildFraudRules, type FraudRules } from './fraudRules.js';
import { startOutages } from './outages.js';
import { PAYMENT_WORKFLOW, runPayments, startFakeAcquirer } from './paymentLoad.js';
import { SETTLEMENT_WORKFLOW, startSettlements } from './settlements.js';
import { verifyExactlyOnce, type DemoVerdict } from './verifyDemo.js';

/** How the demo runs. */
export interface DemoOptions {
  devices: number;
  port: number;
  /** Stop by itself after this many seconds (else at SIGINT/SIGTERM). */
  durationSeconds?: number;
  /** Keep the demo's data here (else a temporary folder, removed at the end). */
  dataDir?: string;
  /** Mean seconds between two payments at one terminal. */
  paymentGapSeconds: number;
  /** Random numbers of the load and the outages (default Math.random). */
  random?: () => number;
  /** Resolves when the operator asks to stop (Ctrl-C). */
  stopRequested: Promise<unknown>;
}

/** What the demo reports at the end. */
export interface DemoResult {
  payments: PaymentCounts;
  /** Cloud settlement workflows by status. */
  settlements: Record<string, number>;
  /** Terminals on the payment workflow version 2 (fraud rules v2) at the end. */
  upgraded: number;
  verdict: DemoVerdict;
  dashboardUrl: string;
}

/** The POS example the terminals run. */
const EXAMPLE_DIR = [
  new URL('../../examples/pos/', import.meta.url), // bin/demo in a checkout
  new URL('../../../examples/pos/', import.meta.url), // dist/bin/demo in a package
]
  .map((url) => fileURLToPath(url))
  .find((dir) => existsSync(join(dir, 'pos_payment.yaml')))!;

/** Fleet configuration: poll as often as allowed (a demo minute), and the offline risk limits. */
const fleetConfig = (maxUnsentMinor: number, maxRecords: number) => ({
  config_poll_interval_seconds: 10,
  store_and_forward: {
    max_unsent_amount_minor: maxUnsentMinor,
    max_records: maxRecords,
    max_age_seconds: 86_400,
  },
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function publishFleetConfig(cloud: DemoCloud, config: object): Promise<void> {
  await expectOk(
    'publishing the fleet configuration',
    cloud.api('/api/v1/config/fleet/*', { method: 'PUT', body: JSON.stringify(config) }),
  );
}

async function registerRules(cloud: DemoCloud, rules: FraudRules): Promise<void> {
  await expectOk(
    `registering fraud rules v${rules.version}`,
    cloud.api('/api/v1/wasm-components', {
      method: 'POST',
      body: JSON.stringify({
        name: 'pos-fraud-rules',
        version_tag: `${rules.version}.0.0`,
        description: `fraud rules of the POS example, version ${rules.version}`,
        binary_base64: Buffer.from(rules.bytes).toString('base64'),
      }),
    }),
  );
}

/**
 * Broadcast `command` to the terminals the way a change reaches a payment fleet: the operator
 * asks, the broadcast of a high-risk command is held for approval (202 with the approval), and
 * a second person — the admin — approves it, which starts it.
 */
async function broadcast(cloud: DemoCloud, command: object): Promise<void> {
  const res = await cloud.operatorApi('/api/v1/command-broadcasts', {
    method: 'POST',
    body: JSON.stringify({
      command,
      target: { device_type: 'POS_TERMINAL' },
      rollout: { phases: [50, 100], wait_seconds: 1 },
    }),
  });
  const text = await res.text();
  if (res.status !== 202)
    throw new Error(
      `demo: a rollout broadcast was not held for approval (${res.status}): ${text.slice(0, 500)}`,
    );
  const { approval_id: approvalId } = JSON.parse(text) as { approval_id: string };
  const decided = await expectOk<{ approval: { status: string } }>(
    'approving a rollout broadcast',
    cloud.api(`/api/v1/approvals/${approvalId}/approve`, {
      method: 'POST',
      body: JSON.stringify({ comment: 'reviewed the rollout' }),
    }),
  );
  if (decided.approval.status !== 'EXECUTED')
    throw new Error(`demo: the approved rollout is ${decided.approval.status}, not started`);
}

/**
 * Roll fraud rules v2 out: the binary first (sync_wasm), then the workflow that uses it, each
 * asked for by the operator and approved by the admin.
 */
async function rollOutRules(cloud: DemoCloud, v1: FraudRules, v2: FraudRules): Promise<void> {
  await registerRules(cloud, v2);
  await broadcast(cloud, {
    command_type: 'sync_wasm',
    payload: { binary_hash: v2.hash, name: 'pos-fraud-rules', version_tag: '2.0.0' },
  });
  const yaml = readFileSync(join(EXAMPLE_DIR, 'pos_payment.yaml'), 'utf8')
    .replace(v1.hash, v2.hash)
    .replace(/^workflow_version: .*$/m, "workflow_version: '2'");
  await broadcast(cloud, {
    command_type: 'update_workflow',
    payload: { workflow_type: PAYMENT_WORKFLOW, workflow_version: '2', definition_yaml: yaml },
  });
}

async function snapshot(
  cloud: DemoCloud,
  fleet: DemoFleet,
  counts: PaymentCounts,
  startedAt: number,
  lastEvent: string | undefined,
): Promise<DemoSnapshot> {
  const statuses = await Promise.all(fleet.devices.map((d) => d.agent.status()));
  const synced = await cloud.store.cloud
    .selectFrom('saf_transactions')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return {
    elapsedSeconds: (Date.now() - startedAt) / 1000,
    devices: fleet.devices.length,
    online: fleet.devices.filter((d) => d.agent.isOnline()).length,
    payments: counts,
    backlog: statuses.reduce((n, s) => n + s.saf.pending_count, 0),
    synced: Number(synced.n),
    lastEvent,
  };
}

/** Whether a terminal runs the payment workflow as version 2 (the fraud-rule rollout). */
const upgraded = (status: Awaited<ReturnType<EdgeAgent['status']>>) =>
  status.workflows.some((w) => w.workflow_type === PAYMENT_WORKFLOW && w.workflow_version === '2');

/**
 * Wait until every terminal is online with an empty queue and, when the rollout started, on
 * the new version (or `timeoutMs` passed). Answers how many terminals were upgraded.
 */
async function drain(
  agents: readonly EdgeAgent[],
  rollout: boolean,
  timeoutMs: number,
): Promise<{ drained: boolean; upgraded: number }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const statuses = await Promise.all(agents.map((a) => a.status()));
    const done = statuses.filter(upgraded).length;
    const drained = statuses.every(
      (s) => s.online && s.saf.pending_count === 0 && (!rollout || upgraded(s)),
    );
    if (drained || Date.now() >= deadline) return { drained, upgraded: done };
    await sleep(500);
  }
}

/** Run the demo (see the module comment). */
export async function runDemo(options: DemoOptions, io: CliIo): Promise<DemoResult> {
  const say = (line: string) => io.stderr.write(`${line}\n`);
  const dir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'saffron-demo-'));
  mkdirSync(join(dir, 'devices'), { recursive: true });
  const random = options.random ?? Math.random;
  say(`demo: building the fraud rules and starting the cloud (embedded PGlite in ${dir})`);
  const rules = await buildFraudRules(EXAMPLE_DIR);
  const cloud = await startDemoCloud(dir, options.port, EXAMPLE_DIR, io);
  const acquirer = await startFakeAcquirer();
  let fleet: DemoFleet | undefined;
  try {
    const dashboardUrl = `${cloud.url}/dashboard/`;
    say(`demo: dashboard ${dashboardUrl}  (sign in with the token below)`);
    io.stdout.write(
      `${JSON.stringify({ dashboard: dashboardUrl, token: cloud.adminToken, data_dir: dir })}\n`,
    );
    await registerRules(cloud, rules.v1);
    await publishFleetConfig(cloud, fleetConfig(150_000, 60));
    fleet = await startDemoFleet(cloud, {
      count: options.devices,
      groups: Math.min(4, options.devices),
      dir: join(dir, 'devices'),
      workflowDir: EXAMPLE_DIR,
      // the fake acquirer listens on this machine's loopback: the demo, as this machine's
      // operator, allows loopback and binds the acquirer token to that host
      secrets: { ACQUIRER_TOKEN: { value: 'demo-acquirer-token', hosts: ['127.0.0.1'] } },
      outbound: { allowedPrivateNetworks: ['loopback'] },
      onStarted: (n) => {
        if (n % 10 === 0 || n === options.devices)
          say(`demo: ${n}/${options.devices} terminals up`);
      },
      log: (line) => say(`demo: ${line}`),
    });
    const { devices, groups } = fleet;
    const settlements = await startSettlements(cloud, EXAMPLE_DIR, groups.length, {
      everyMs: 5_000,
      reviewAfterMs: 4_000,
    });
    const counts = emptyCounts();
    const failureReasons = new Map<string, number>();
    let lastEvent: string | undefined;
    const event = (text: string) => {
      lastEvent = text;
      if (!io.stdout.isTTY) say(`demo: ${text}`);
    };
    const stopLoad = new AbortController();
    // every terminal's customer loop waits on this one signal
    setMaxListeners(0, stopLoad.signal);
    const load = devices.map((d) =>
      runPayments(d.agent, {
        counts,
        random,
        acquirerUrl: acquirer.url,
        meanGapMs: options.paymentGapSeconds * 1000,
        signal: stopLoad.signal,
        onFailed: (reason) => failureReasons.set(reason, (failureReasons.get(reason) ?? 0) + 1),
        onFinished: (record) => {
          const { decision, amount_minor } = record.state as {
            decision?: { status?: unknown };
            amount_minor?: unknown;
          };
          if (decision?.status === 'APPROVED' && typeof amount_minor === 'number')
            settlements.add(d.group, amount_minor);
        },
      }),
    );
    const outages = startOutages(groups, {
      everyMs: 6_000,
      minMs: 3_000,
      maxMs: 9_000,
      random,
      onChange: (g, up) =>
        event(`store-${String.fromCharCode(65 + g)} ${up ? 'back online' : 'lost its network'}`),
    });
    const startedAt = Date.now();
    const duration = options.durationSeconds;
    // the mid-run rollouts: at a third and at half of the run (or at 20 s and 35 s)
    const changes = [
      {
        at: duration ? duration * 0.3 : 20,
        run: async () => {
          await publishFleetConfig(cloud, fleetConfig(40_000, 25));
          event('published config v2: tighter offline limits (400.00 or 25 records unsent)');
        },
      },
      {
        at: duration ? duration * 0.5 : 35,
        run: async () => {
          await rollOutRules(cloud, rules.v1, rules.v2);
          rolloutStarted = true;
          event(
            'rolling out fraud rules v2 (WASM, declines from score 50) in two phases, approved by a second person',
          );
        },
      },
    ];
    let rolloutStarted = false;
    const stop = duration
      ? Promise.race([sleep(duration * 1000), options.stopRequested])
      : options.stopRequested;
    let stopping = false;
    void stop.then(() => (stopping = true));
    while (!stopping) {
      const elapsed = (Date.now() - startedAt) / 1000;
      for (const change of changes.filter((c) => c.at <= elapsed)) {
        changes.splice(changes.indexOf(change), 1);
        await change.run().catch((error: unknown) => say(`demo: ${String(error)}`));
      }
      await settlements
        .tick(Date.now())
        .catch((error: unknown) => say(`demo: settlements: ${String(error)}`));
      const line = formatSnapshot({
        ...(await snapshot(cloud, fleet, counts, startedAt, lastEvent)),
        failureReasons,
      });
      if (io.stdout.isTTY) io.stdout.write(`\r\x1b[K${line}`);
      else if (Math.round(elapsed) % 5 === 0) io.stdout.write(`${line}\n`);
      await Promise.race([sleep(1000), stop]);
    }
    if (io.stdout.isTTY) io.stdout.write('\n');
    say('demo: stopping the customers, restoring the network, draining the queues');
    stopLoad.abort();
    await Promise.all(load);
    outages.stop();
    const { drained, upgraded: onV2 } = await drain(
      devices.map((d) => d.agent),
      rolloutStarted,
      60_000,
    );
    if (!drained) say('demo: after 60 s some terminals are still offline, queued or not upgraded');
    say(`demo: ${onV2}/${devices.length} terminals run fraud rules v2`);
    io.stdout.write(
      `${formatSnapshot({
        ...(await snapshot(cloud, fleet, counts, startedAt, 'final')),
        failureReasons,
      })}\n`,
    );
    const settled = await cloud.store.db
      .selectFrom('workflow_executions')
      .select(['status', (eb) => eb.fn.countAll<number | string>().as('n')])
      .where('workflow_type', '=', SETTLEMENT_WORKFLOW)
      .groupBy('status')
      .execute();
    const settlementsByStatus = Object.fromEntries(settled.map((r) => [r.status, Number(r.n)]));
    say(
      `demo: ${settlements.started} store settlements started in the cloud: ${JSON.stringify(settlementsByStatus)}`,
    );
    await fleet.stop();
    fleet = undefined;
    const verdict = await verifyExactlyOnce(cloud.store, devices);
    say(
      `demo: ${totalPayments(counts)} payments; ${verdict.deviceRecords} offline records written, ` +
        `${verdict.cloudRecords} in the cloud, ${verdict.pending} pending, ${verdict.rejected} rejected, ` +
        `${verdict.missing.length} missing, ${verdict.unexpected.length} unexpected, ` +
        `${verdict.duplicated.length} duplicated — ${verdict.ok ? 'exactly once: OK' : 'FAILED'}`,
    );
    say(`demo: dashboard was ${dashboardUrl}`);
    return {
      payments: counts,
      settlements: settlementsByStatus,
      upgraded: onV2,
      verdict,
      dashboardUrl,
    };
  } finally {
    await fleet?.stop();
    await acquirer.close();
    await cloud.close();
    if (!options.dataDir) rmSync(dir, { recursive: true, force: true });
  }
}
