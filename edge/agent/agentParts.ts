/**
 * Assembling an agent's parts over its SQLite file, in dependency order: store (edge tables
 * created if absent) → signed cloud client wrapped by the connectivity tracker → workflow
 * catalog (installed files, then hot-deployed definitions) → SAF recorder → WASM cache →
 * engine (its settle hook the recorder, its WASM source the cache) → SAF sync → metrics →
 * command channel with every handler → the store's idle-time log checkpoints. The database
 * files are the agent user's alone, every write is masked of card numbers and a step that
 * leaves one in the state fails (edge/cardData). Nothing here talks to the network or
 * starts a background loop: that is `start()`'s job (createEdgeAgent.ts).
 */
import { dirname } from 'node:path';
import {
  createRuntime,
  createWorkflowRegistry,
  type InspectOption,
  type Runtime,
  type Service,
} from '../../actors/index.js';
import {
  ensureEdgeSchema,
  envSecrets,
  inlineExecutor,
  asEdge,
  openStore,
  parseStoreTarget,
  threadsExecutor,
  type EdgeStore,
} from '../../runtime/index.js';
import { maskCardData } from '../cardData/maskCardNumbers.js';
import { maskCardWrites } from '../cardData/maskCardWrites.js';
import { prepareDatabaseFiles } from '../cardData/privateFiles.js';
import { refuseCardState } from '../cardData/refuseCardState.js';
import { createCloudClient } from '../cloud/cloudClient.js';
import { createCommandChannel, type CommandChannel } from '../commands/commandChannel.js';
import { defaultCommandHandlers } from '../commands/defaultHandlers.js';
import type { ConfigSync } from '../config/configSync.js';
import { createMetricsReporter, type MetricsReporter } from '../metrics/metricsReporter.js';
import { createSafRecorder, type SafRecorder } from '../saf/safRecorder.js';
import { createSafSync, type SafSync } from '../sync/safSync.js';
import type { EdgeTimers } from '../timers/timers.js';
import { createWasmCache, type WasmCache } from '../wasm/wasmCache.js';
import { agentCommandHandlers, type RestartRequest } from './agentHandlers.js';
import {
  commandEntry,
  connectivityEntry,
  metricsEntry,
  syncEntry,
  walEntry,
  wasmEntry,
  type AgentLogger,
} from './agentLog.js';
import type { EdgeAgentOptions } from './agentOptions.js';
import { createAgentStatusStore, type AgentStatusStore } from './agentStatusStore.js';
import { createConnectivity, type Connectivity } from './connectivity.js';
import { AgentError } from './errors.js';
import { createWalCheckpoints, type WalCheckpoints } from './walCheckpoints.js';
import { createWorkflowCatalog, type WorkflowCatalog } from './workflowCatalog.js';

/** The parts of a running agent. */
export interface AgentParts {
  store: EdgeStore;
  /** The agent's live status (agentStatusStore.ts), fed by `connectivity`. */
  status: AgentStatusStore;
  connectivity: Connectivity;
  runtime: Runtime;
  /** The engine's maintenance loop (timers, zombie recovery); set by `start()`. */
  service: Service | undefined;
  catalog: WorkflowCatalog;
  recorder: SafRecorder;
  wasm: WasmCache;
  commands: CommandChannel;
  metrics: MetricsReporter;
  sync: SafSync;
  /** Checkpoints of the store's log while the terminal is idle. */
  wal: WalCheckpoints;
  /** Set once the cloud key is known (agentConfig.ts). */
  config: ConfigSync | undefined;
  /** The cloud key configuration and commands are verified with, once known (agentConfig.ts). */
  cloudKey: string | undefined;
}

/** What the parts share: the options, injected clock/timers/randomness and the agent's hooks. */
export interface AgentContext {
  options: EdgeAgentOptions;
  now: () => Date;
  timers: EdgeTimers;
  random: () => number;
  maxBackoffMs: number;
  log: AgentLogger;
  /** Log `error` as `event` (its code and message only). */
  fail(event: string, msg: string, error: unknown): void;
  /** Run `callback` after `ms` unless the agent stops first. */
  later(ms: number, callback: () => void): void;
  /** A REBOOT was acked. */
  restart(request: RestartRequest): void;
}

/** Fetch those of `hashes` not cached yet, in the background. */
export function prefetchMissing(parts: AgentParts, ctx: AgentContext, hashes: string[]): void {
  if (hashes.length === 0) return;
  parts.wasm
    .missing(hashes)
    .then((missing) => {
      if (missing.length > 0) parts.wasm.prefetch(missing);
    })
    .catch((error: unknown) => ctx.fail('edge.wasm.failed', 'WASM prefetch failed', error));
}

/** Open the store and build every part (see the module comment). */
export async function assembleAgent(ctx: AgentContext): Promise<AgentParts> {
  const { options, now, timers, random, maxBackoffMs, log } = ctx;
  const target = parseStoreTarget(options.dbPath);
  if (target.kind === 'sqlite') prepareDatabaseFiles(target.file);
  // card numbers are masked on every write, whichever part writes (edge/cardData)
  const opened = await openStore(target, { sqlite: { rewriteWrites: maskCardWrites } });
  try {
    await ensureEdgeSchema(opened); // refuses a store that is not SQLite
    const store = asEdge(opened);
    const status = createAgentStatusStore();
    status.on('connectivityChanged', ({ type: _, ...change }) => {
      try {
        log(connectivityEntry(change));
        if (change.online) parts.sync.notifyOnline();
      } catch (error) {
        ctx.fail('edge.sync.failed', 'could not start the upload after the cloud came back', error);
      }
    });
    const isOnline = () => status.getSnapshot().context.online;
    const connectivity = createConnectivity(
      createCloudClient({
        baseUrl: options.cloudUrl,
        deviceId: options.deviceId,
        secret: options.deviceSecret,
        ...(options.fetch ? { fetch: options.fetch } : {}),
        now,
      }),
      { status, now },
    );
    const cloud = connectivity.client;
    const registry = createWorkflowRegistry();
    const catalog = createWorkflowCatalog({
      store,
      registry,
      stepsRoot: options.stepsRoot,
      ...(options.workflowDirs ? { workflowDirs: options.workflowDirs } : {}),
      now,
    });
    for (const skip of (await catalog.load()).skipped)
      log({
        level: 'warn',
        event: 'edge.workflow.skipped',
        msg: `hot-deployed workflow ${skip.workflowType} no longer loads and is not used: ${skip.message}`,
      });
    const recorder = createSafRecorder({
      deviceId: options.deviceId,
      deviceSecret: options.deviceSecret,
      isOnline,
      cardKey: options.cardKey,
      clock: now,
      onEvent: (event) =>
        log({
          level: 'warn',
          event: event.type,
          msg: `card data or secrets taken out of the SAF record of workflow ${event.workflowId} at ${event.paths.join(', ')}`,
        }),
    });
    const wasm = createWasmCache({ store, cloud, onEvent: (e) => log(wasmEntry(e)), now });
    const runtime = createRuntime({
      store,
      stepsRoot: options.stepsRoot,
      executor:
        options.executor === 'threads'
          ? threadsExecutor({ stepsRoot: options.stepsRoot })
          : inlineExecutor({ stepsRoot: options.stepsRoot }),
      registry,
      secrets: options.secrets ?? envSecrets(),
      ...(options.outbound ? { outbound: options.outbound } : {}),
      wasmSource: wasm.source({ fetchOnMiss: true }),
      ...(options.wasm ? { wasm: options.wasm } : {}),
      onSettled: recorder.onSettled,
      stateGuard: refuseCardState,
      stepDurability: options.stepDurability ?? 'boundaries',
      ...(options.inspect === undefined ? {} : { inspect: withCardMasking(options.inspect) }),
      onBackgroundError: (error, id) =>
        ctx.fail('edge.workflow.failed', `background drive of workflow ${id} failed`, error),
    });
    const sync = createSafSync({
      store,
      client: cloud,
      ...(options.safBatchSize !== undefined ? { batchSize: options.safBatchSize } : {}),
      ...(options.syncJitterMs !== undefined ? { outageJitterMs: options.syncJitterMs } : {}),
      backoff: { baseMs: 1_000, maxMs: maxBackoffMs },
      timers,
      random,
      secrets: [options.deviceSecret],
      onEvent: (event) => log(syncEntry(event)),
    });
    const metrics = createMetricsReporter({
      store,
      cloud,
      dataDir: dirname(options.dbPath),
      networkAvailable: isOnline,
      ...(options.metricsIntervalMs !== undefined ? { intervalMs: options.metricsIntervalMs } : {}),
      onEvent: (event) => log(metricsEntry(event)),
      now,
      timers,
    });
    const wal = createWalCheckpoints({
      store,
      timers,
      ...(options.walIdleCheckMs !== undefined ? { idleMs: options.walIdleCheckMs } : {}),
      ...(options.walBackstopPages !== undefined
        ? { backstopPages: options.walBackstopPages }
        : {}),
      onEvent: (event) => log(walEntry(event)),
    });
    const handlers = {
      ...defaultCommandHandlers({
        config: {
          pollNow: (o) => {
            if (!parts.config)
              throw new AgentError(
                'AGENT_NOT_RUNNING',
                'configuration sync has not started: the cloud public key is not pinned yet',
              );
            return parts.config.pollNow(o);
          },
          status: () => parts.config!.status(),
        },
        wasm,
        metrics,
      }),
      ...agentCommandHandlers({
        catalog,
        syncTransactions: (request) => sync.upload(request),
        prefetchWasm: (hashes) => prefetchMissing(parts, ctx, hashes),
        restart: (request) => ctx.restart(request),
      }),
    };
    const commands = createCommandChannel({
      store,
      cloud,
      handlers,
      cloudPublicKey: () => parts.cloudKey,
      reconnect: { baseMs: 1_000, maxMs: maxBackoffMs },
      ...(options.commandPollIntervalMs !== undefined
        ? { pollIntervalMs: options.commandPollIntervalMs }
        : {}),
      onEvent: (event) => {
        if (event.type === 'edge.commands.connected') connectivity.reachable('websocket');
        log(commandEntry(event));
      },
      now,
      timers,
      random,
    });
    const parts: AgentParts = {
      store,
      status,
      connectivity,
      runtime,
      service: undefined,
      catalog,
      recorder,
      wasm,
      commands,
      metrics,
      sync,
      wal,
      config: undefined,
      cloudKey: undefined,
    };
    return parts;
  } catch (error) {
    await opened.close();
    throw error;
  }
}

/** `inspect` with the agent's card masking after the engine's redaction. */
function withCardMasking(inspect: InspectOption): InspectOption {
  const options =
    typeof inspect === 'object' && !(inspect instanceof URL) && 'to' in inspect
      ? inspect
      : { to: inspect };
  const own = options.redact;
  return {
    ...options,
    redact: (value) => maskCardData(own ? own(value) : value),
  };
}
