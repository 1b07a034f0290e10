/**
 * The edge agent (issue 7; DESIGN §5–6): everything a payment terminal runs, assembled over
 * one SQLite file.
 *
 * - the store, its edge tables created on first start (`synchronous=FULL`: an approval the
 *   customer saw survives a power cut);
 * - the engine (inline or threads executor) over the installed and hot-deployed workflow
 *   definitions (workflowCatalog.ts), with the store-and-forward recorder as its settle hook:
 *   a workflow completed offline and its signed record commit together;
 * - connectivity learnt from real traffic (connectivity.ts), which starts the upload of the
 *   queue when the cloud comes back;
 * - config sync with the pinned cloud key and hot-reload (a refused document keeps the last
 *   good one and is logged and shown in `status()`), the command channel (socket + polling,
 *   exactly-once acks) with every command the spec names, the WASM cache (binaries of the
 *   loaded definitions prefetched in the background at start), the metrics report, and the
 *   SAF sync.
 *
 * `start()` brings it up in that order and drives workflows a previous process left
 * mid-flight (a crash or power cut) to their end; `stop()` takes it down in reverse, waiting
 * for running payments. A component that cannot reach the cloud never blocks the start: the
 * terminal must take payments the moment it boots, network or not.
 */
import { dirname } from 'node:path';
import {
  createRuntime,
  createWorkflowRegistry,
  type Runtime,
  type Service,
} from '../../actors/index.js';
import {
  ensureEdgeSchema,
  envSecrets,
  inlineExecutor,
  openStore,
  SaffronError,
  threadsExecutor,
  toError,
  type JsonObject,
  type SecretProvider,
  type Store,
  type WorkflowRecord,
} from '../../runtime/index.js';
import { createCloudClient } from '../cloud/cloudClient.js';
import { createCommandChannel, type CommandChannel } from '../commands/commandChannel.js';
import { defaultCommandHandlers } from '../commands/defaultHandlers.js';
import { createConfigSync, type ConfigSync } from '../config/configSync.js';
import type { VerifiedConfig } from '../config/documents.js';
import { resolveCloudPublicKey } from '../config/pinPublicKey.js';
import { createMetricsReporter, type MetricsReporter } from '../metrics/metricsReporter.js';
import { createSafRecorder, type SafRecorder } from '../saf/safRecorder.js';
import { safLimitsFromConfig } from '../saf/safLimits.js';
import { createSafSync, type SafSync } from '../sync/safSync.js';
import { readLastSync } from '../state/syncState.js';
import { backoffDelay } from '../timers/backoff.js';
import { systemTimers, type EdgeTimers } from '../timers/timers.js';
import { createWasmCache, type WasmCache } from '../wasm/wasmCache.js';
import { wasmHashesOf } from '../wasm/wasmHashes.js';
import { agentCommandHandlers, type RestartRequest } from './agentHandlers.js';
import {
  commandEntry,
  configEntry,
  connectivityEntry,
  metricsEntry,
  syncEntry,
  wasmEntry,
  type AgentLogEntry,
  type AgentLogger,
} from './agentLog.js';
import { applyConfigWorkflows, checkConfigWorkflows } from './configWorkflows.js';
import { createConnectivity, type Connectivity } from './connectivity.js';
import { AgentError } from './errors.js';
import {
  resumeLocalWorkflow,
  runLocalWorkflow,
  type LocalRunDeps,
  type LocalRunOutcome,
  type LocalRunRequest,
} from './runLocalWorkflow.js';
import { createWorkflowCatalog, type WorkflowCatalog } from './workflowCatalog.js';

/** How the agent is set up. */
export interface EdgeAgentOptions {
  deviceId: string;
  /** The device secret from registration: signs requests and SAF records. */
  deviceSecret: string;
  /** Base URL of the cloud (e.g. `http://127.0.0.1:8080`). */
  cloudUrl: string;
  /** The SQLite file (created with its folder when missing). */
  dbPath: string;
  /** The 32-byte AES-256-GCM key that encrypts card payloads of SAF records. */
  cardKey: Buffer;
  /** Root of step modules. */
  stepsRoot: string;
  /** Folders of installed workflow YAML files. */
  workflowDirs?: readonly string[];
  /** Where step functions run (default inline). */
  executor?: 'inline' | 'threads';
  /** The cloud's Ed25519 public key provisioned with the device (else fetched once and pinned). */
  cloudPublicKeyPem?: string;
  /** Secrets of `{{ secrets.NAME }}` (default: SAFFRON_SECRET_<NAME>). */
  secrets?: SecretProvider;
  /** Longest wait between reconnects and retries (60 s). */
  maxBackoffMs?: number;
  /** Largest random delay before the first upload after an outage (set by the SAF sync when absent). */
  syncJitterMs?: number;
  /** Records per SAF upload (set by the SAF sync when absent). */
  safBatchSize?: number;
  /** Period of the metrics report (5 min). */
  metricsIntervalMs?: number;
  /** Poll period for commands while the socket is down (30 s). */
  commandPollIntervalMs?: number;
  /**
   * Called after a REBOOT command was acked (and its delay passed): restart the agent. The CLI
   * stops it and exits with a code its supervisor restarts it on. Without one the command is
   * acked and only logged.
   */
  onRestart?: (request: RestartRequest) => void;
  log?: AgentLogger;
  /** Injected for tests; defaults to the global fetch, wall clock, timers and Math.random. */
  fetch?: typeof fetch;
  now?: () => Date;
  timers?: EdgeTimers;
  random?: () => number;
}

/** What `status()` shows (also the local API's `GET /local/v1/status`). */
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

/** A running edge agent. */
export interface EdgeAgent {
  readonly deviceId: string;
  /** Open the store and start every component (see the module comment). */
  start(): Promise<void>;
  /** Stop every component, wait for running workflows, close the store; idempotent. */
  stop(): Promise<void>;
  /** Run a workflow for the POS (runLocalWorkflow.ts). */
  runWorkflow(request: LocalRunRequest): Promise<LocalRunOutcome>;
  /** Give human input to a waiting workflow and drive it until it is no longer ACTIVE. */
  resumeWorkflow(id: string, input: JsonObject): Promise<WorkflowRecord>;
  /** A workflow of this device, or undefined. */
  getWorkflow(id: string): Promise<WorkflowRecord | undefined>;
  isOnline(): boolean;
  status(): Promise<EdgeAgentStatus>;
}

/** The parts that exist while the agent runs. */
interface Running {
  store: Store;
  runtime: Runtime;
  service: Service;
  catalog: WorkflowCatalog;
  recorder: SafRecorder;
  wasm: WasmCache;
  commands: CommandChannel;
  metrics: MetricsReporter;
  sync: SafSync;
  config: ConfigSync | undefined;
}

/** Create the agent (not started). */
export function createEdgeAgent(options: EdgeAgentOptions): EdgeAgent {
  const now = options.now ?? (() => new Date());
  const timers = options.timers ?? systemTimers;
  const random = options.random ?? Math.random;
  const maxBackoffMs = options.maxBackoffMs ?? 60_000;
  const log: AgentLogger = (entry: AgentLogEntry) => {
    try {
      options.log?.(entry);
    } catch {
      // a failing log sink must not take the terminal down
    }
  };
  const fail = (event: string, msg: string, error: unknown) => {
    const e = toError(error);
    log({
      level: 'error',
      event,
      msg: `${msg}: ${e.message}`,
      ...(e instanceof SaffronError ? { code: e.code } : {}),
    });
  };

  let parts: Running | undefined;
  let stopping: Promise<void> | undefined;
  const pendingTimers = new Set<unknown>();
  const later = (ms: number, callback: () => void) => {
    const handle = timers.setTimeout(() => {
      pendingTimers.delete(handle);
      callback();
    }, ms);
    pendingTimers.add(handle);
  };

  let connectivity: Connectivity | undefined;
  const isOnline = () => connectivity?.isOnline() ?? false;

  const need = (): Running => {
    if (!parts || stopping) throw new AgentError('AGENT_NOT_RUNNING', 'the agent is not running');
    return parts;
  };

  /** Hot-reload of an applied configuration document. */
  const onConfigApplied = async (p: Running, config: VerifiedConfig) => {
    if (config.name !== 'device') return;
    for (const deployed of await applyConfigWorkflows(p.store, p.catalog, config.content, now()))
      log({
        level: 'info',
        event: 'edge.workflow.deployed',
        msg: `workflow ${deployed.workflowType} ${deployed.workflowVersion ?? ''} deployed from the configuration`,
        definition_hash: deployed.definitionHash,
      });
    const assignments = (config.document.assignments ?? []) as {
      assignment_type?: unknown;
      target_id?: unknown;
    }[];
    const assigned = assignments
      .filter((a) => a.assignment_type === 'WASM' && typeof a.target_id === 'string')
      .map((a) => a.target_id as string);
    prefetch(p, [...assigned, ...wasmHashesOf(p.catalog.entries().map((e) => e.definition))]);
  };

  const prefetch = (p: Running, hashes: string[]) => {
    if (hashes.length === 0) return;
    void p.wasm
      .missing(hashes)
      .then((missing) => {
        if (missing.length > 0) p.wasm.prefetch(missing);
      })
      .catch((error: unknown) => fail('edge.wasm.failed', 'WASM prefetch failed', error));
  };

  /** Resolve the cloud key and start config sync; retried in the background while unreachable. */
  const startConfig = async (p: Running, failures = 0): Promise<void> => {
    if (parts !== p || stopping) return;
    let publicKeyPem: string;
    try {
      publicKeyPem = (
        await resolveCloudPublicKey({
          store: p.store,
          cloud: connectivity!.client,
          ...(options.cloudPublicKeyPem !== undefined
            ? { configuredPem: options.cloudPublicKeyPem }
            : {}),
          now,
        })
      ).publicKeyPem;
    } catch (error) {
      const retryable = error instanceof SaffronError && error.retryable;
      if (!retryable) throw error;
      const delay = backoffDelay({ baseMs: 1_000, maxMs: maxBackoffMs }, failures + 1, random);
      log({
        level: 'warn',
        event: 'edge.config.key_unavailable',
        msg: `cloud public key not pinned yet and the cloud is unreachable; configuration sync starts once it answers (retry in ${delay} ms)`,
      });
      later(
        delay,
        () =>
          void startConfig(p, failures + 1).catch((e: unknown) =>
            fail('edge.config.failed', 'configuration sync did not start', e),
          ),
      );
      return;
    }
    if (parts !== p || stopping) return;
    const config = createConfigSync({
      store: p.store,
      cloud: connectivity!.client,
      publicKeyPem,
      validate: async (c) => {
        if (c.name !== 'device') return;
        safLimitsFromConfig(c.content as JsonObject);
        await checkConfigWorkflows(p.catalog, c.content);
      },
      onApplied: (c) => onConfigApplied(p, c),
      onEvent: (event) => log(configEntry(event)),
      retry: { baseMs: 1_000, maxMs: maxBackoffMs },
      now,
      timers,
      random,
    });
    p.config = config;
    await config.start();
  };

  const assemble = async (): Promise<Running> => {
    const store = await openStore(options.dbPath);
    try {
      await ensureEdgeSchema(store);
      const cloud = createCloudClient({
        baseUrl: options.cloudUrl,
        deviceId: options.deviceId,
        secret: options.deviceSecret,
        ...(options.fetch ? { fetch: options.fetch } : {}),
        now,
      });
      const link = createConnectivity(cloud, {
        now,
        onChange: (change) => {
          log(connectivityEntry(change));
          if (change.online) parts?.sync.notifyOnline();
        },
      });
      connectivity = link;
      const registry = createWorkflowRegistry();
      const catalog = createWorkflowCatalog({
        store,
        registry,
        stepsRoot: options.stepsRoot,
        ...(options.workflowDirs ? { workflowDirs: options.workflowDirs } : {}),
        now,
      });
      const loaded = await catalog.load();
      for (const skip of loaded.skipped)
        log({
          level: 'warn',
          event: 'edge.workflow.skipped',
          msg: `hot-deployed workflow ${skip.workflowType} no longer loads and is not used: ${skip.message}`,
        });
      const recorder = createSafRecorder({
        deviceId: options.deviceId,
        deviceSecret: options.deviceSecret,
        isOnline: link.isOnline,
        cardKey: options.cardKey,
        clock: now,
        onEvent: (event) =>
          log({
            level: 'warn',
            event: event.type,
            msg: `card data or secrets taken out of the SAF record of workflow ${event.workflowId} at ${event.paths.join(', ')}`,
          }),
      });
      const wasm = createWasmCache({
        store,
        cloud: link.client,
        onEvent: (event) => log(wasmEntry(event)),
        now,
      });
      const runtime = createRuntime({
        store,
        stepsRoot: options.stepsRoot,
        executor:
          options.executor === 'threads'
            ? threadsExecutor({ stepsRoot: options.stepsRoot })
            : inlineExecutor({ stepsRoot: options.stepsRoot }),
        registry,
        secrets: options.secrets ?? envSecrets(),
        wasmSource: wasm.source({ fetchOnMiss: true }),
        onSettled: recorder.onSettled,
        onBackgroundError: (error, id) =>
          fail('edge.workflow.failed', `background drive of workflow ${id} failed`, error),
      });
      const sync = createSafSync({
        store,
        client: link.client,
        ...(options.safBatchSize !== undefined ? { batchSize: options.safBatchSize } : {}),
        ...(options.syncJitterMs !== undefined ? { outageJitterMs: options.syncJitterMs } : {}),
        backoff: { baseMs: 1_000, maxMs: maxBackoffMs },
        timers,
        random,
        onEvent: (event) => log(syncEntry(event)),
      });
      const metrics = createMetricsReporter({
        store,
        cloud: link.client,
        dataDir: dirname(options.dbPath),
        networkAvailable: link.isOnline,
        ...(options.metricsIntervalMs !== undefined
          ? { intervalMs: options.metricsIntervalMs }
          : {}),
        onEvent: (event) => log(metricsEntry(event)),
        now,
        timers,
      });
      const p: Running = {
        store,
        runtime,
        service: undefined as unknown as Service,
        catalog,
        recorder,
        wasm,
        commands: undefined as unknown as CommandChannel,
        metrics,
        sync,
        config: undefined,
      };
      const handlers = {
        ...defaultCommandHandlers({
          config: {
            pollNow: (o) => {
              if (!p.config)
                throw new AgentError(
                  'AGENT_NOT_RUNNING',
                  'configuration sync has not started: the cloud public key is not pinned yet',
                );
              return p.config.pollNow(o);
            },
            status: () => p.config!.status(),
          },
          wasm,
          metrics,
        }),
        ...agentCommandHandlers({
          catalog,
          syncTransactions: () => sync.syncNow(),
          prefetchWasm: (hashes) => prefetch(p, hashes),
          restart: (request) => restart(request),
        }),
      };
      p.commands = createCommandChannel({
        store,
        cloud: link.client,
        handlers,
        reconnect: { baseMs: 1_000, maxMs: maxBackoffMs },
        ...(options.commandPollIntervalMs !== undefined
          ? { pollIntervalMs: options.commandPollIntervalMs }
          : {}),
        onEvent: (event) => {
          if (event.type === 'edge.commands.connected') link.reachable('websocket');
          log(commandEntry(event));
        },
        now,
        timers,
        random,
      });
      return p;
    } catch (error) {
      await store.close();
      throw error;
    }
  };

  const restart = (request: RestartRequest) => {
    log({
      level: 'warn',
      event: 'edge.restart',
      msg: `REBOOT ${request.commandId}${request.reason ? ` (${request.reason})` : ''}: restarting in ${request.delaySeconds} s`,
    });
    later(request.delaySeconds * 1000, () => {
      if (options.onRestart) options.onRestart(request);
      else
        log({
          level: 'warn',
          event: 'edge.restart',
          msg: 'no restart hook: the agent keeps running',
        });
    });
  };

  const runDeps = (p: Running): LocalRunDeps => ({
    store: p.store,
    runtime: p.runtime,
    deviceId: options.deviceId,
    isOnline,
    hasType: (type) => p.catalog.get(type) !== undefined,
    checkOfflineLimits: (request) =>
      p.recorder.checkLimits(
        p.store,
        request,
        safLimitsFromConfig((p.config?.current('device')?.content ?? {}) as JsonObject),
      ),
    onSettled: () => p.sync.notifyPending(),
  });

  const agent: EdgeAgent = {
    deviceId: options.deviceId,

    async start() {
      if (parts) return;
      const p = await assemble();
      parts = p;
      stopping = undefined;
      // a previous process died mid-payment: finish what it committed (the store is ours alone)
      const recovered = await p.runtime.maintain({ zombieAfterMs: 0 });
      if (recovered.recovered > 0)
        log({
          level: 'warn',
          event: 'edge.workflow.recovered',
          msg: `${recovered.recovered} workflow(s) interrupted by the last shutdown are being resumed`,
        });
      p.service = p.runtime.serve({});
      prefetch(p, wasmHashesOf(p.catalog.entries().map((e) => e.definition)));
      try {
        await startConfig(p);
      } catch (error) {
        await agent.stop();
        throw new AgentError(
          'AGENT_START_FAILED',
          `configuration sync: ${toError(error).message}`,
          {
            cause: error,
          },
        );
      }
      await p.commands.start();
      p.metrics.start();
      p.sync.start();
      log({
        level: 'info',
        event: 'edge.started',
        msg: `agent ${options.deviceId} started with ${p.catalog.entries().length} workflow type(s)`,
      });
    },

    stop() {
      const p = parts;
      if (!p) return Promise.resolve();
      stopping ??= (async () => {
        connectivity?.quiet();
        for (const handle of pendingTimers) timers.clearTimeout(handle);
        pendingTimers.clear();
        const results = await Promise.allSettled([
          p.commands.stop(),
          p.config?.stop(),
          p.metrics.stop(),
          p.sync.stop(),
          p.wasm.stop(),
        ]);
        for (const r of results)
          if (r.status === 'rejected')
            fail('edge.stop', 'a component did not stop cleanly', r.reason);
        await p.service?.stop();
        await p.runtime.close();
        await p.store.close();
        parts = undefined;
        log({ level: 'info', event: 'edge.stopped', msg: 'agent stopped' });
      })();
      return stopping;
    },

    runWorkflow: (request) => runLocalWorkflow(runDeps(need()), request),

    resumeWorkflow: (id, input) => resumeLocalWorkflow(runDeps(need()), id, input),

    async getWorkflow(id) {
      const p = need();
      try {
        return await p.runtime.get(id);
      } catch (error) {
        if (error instanceof SaffronError && error.code === 'WORKFLOW_NOT_FOUND') return undefined;
        throw error;
      }
    },

    isOnline,

    async status() {
      const p = need();
      const backlog = await p.recorder.backlog(p.store);
      const lastSync = await readLastSync(p.store);
      const device = p.config?.current('device');
      const commands = p.commands.status();
      return {
        device_id: options.deviceId,
        running: !stopping,
        online: isOnline(),
        online_since: connectivity?.since()?.toISOString() ?? null,
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
          fraud_rules_etag: p.config?.current('fraud_rules')?.etag ?? null,
          last_rejection: p.config?.status().lastRejection ?? null,
        },
        commands: { transport: commands.transport, executed: commands.executed },
        workflows: p.catalog.entries().map((e) => ({
          workflow_type: e.definition.workflow_type,
          workflow_version: e.definition.workflow_version ?? null,
          definition_hash: e.hash,
          source: e.source.kind,
        })),
      };
    },
  };
  return agent;
}
