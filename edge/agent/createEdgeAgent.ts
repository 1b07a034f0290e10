/**
 * The edge agent (docs/architecture.md#security, #cloud-and-edge): everything a payment terminal runs, assembled over
 * one SQLite file (agentParts.ts):
 *
 * - the store, its edge tables created on first start (`synchronous=FULL`: an approval the
 *   customer saw survives a power cut);
 * - the engine (inline or threads executor) over the installed and hot-deployed workflow
 *   definitions (workflowCatalog.ts), with the store-and-forward recorder as its settle hook:
 *   a workflow completed offline and its signed record commit together;
 * - connectivity learnt from real traffic (connectivity.ts), which starts the upload of the
 *   queue when the cloud comes back;
 * - config sync with the pinned cloud key and hot-reload (agentConfig.ts; a refused document
 *   keeps the last good one and is logged and shown in `status()`), the command channel
 *   (socket + polling, exactly-once acks) with every command the spec names, the WASM cache,
 *   the metrics report, and the SAF sync.
 *
 * `start()` brings it up and first drives workflows a previous process left mid-flight (a
 * crash or power cut) to their end; then binaries of the loaded definitions are prefetched in
 * the background. `stop()` takes it down in reverse, waiting for running payments. Nothing
 * that needs the cloud blocks the start: the terminal must take payments the moment it boots,
 * network or not.
 *
 * What the agent keeps and shows holds no card number in clear: its log entries are masked
 * here, the rest in edge/cardData.
 */
import {
  SaffronError,
  toError,
  type JsonObject,
  type WorkflowRecord,
} from '../../runtime/index.js';
import { maskCardData } from '../cardData/maskCardNumbers.js';
import { checkCloudUrl } from '../config/cloudUrlPolicy.js';
import type { VerifiedConfig } from '../config/documents.js';
import { type SafLimits, safLimitsFromConfig } from '../saf/safLimits.js';
import { systemTimers } from '../timers/timers.js';
import { wasmHashesOf } from '../wasm/wasmHashes.js';
import type { RestartRequest } from './agentHandlers.js';
import { failureEntry, type AgentLogEntry, type AgentLogger } from './agentLog.js';
import { startAgentConfig } from './agentConfig.js';
import type { EdgeAgentOptions } from './agentOptions.js';
import {
  assembleAgent,
  prefetchMissing,
  type AgentContext,
  type AgentParts,
} from './agentParts.js';
import { agentStatus, type EdgeAgentStatus } from './agentStatus.js';
import { AgentError } from './errors.js';
import {
  resumeLocalWorkflow,
  runLocalWorkflow,
  type LocalRunDeps,
  type LocalRunOutcome,
  type LocalRunRequest,
} from './runLocalWorkflow.js';

export type { EdgeAgentOptions, EdgeAgentStatus };

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

/** Create the agent (not started). */
export function createEdgeAgent(options: EdgeAgentOptions): EdgeAgent {
  const timers = options.timers ?? systemTimers;
  const log: AgentLogger = (entry: AgentLogEntry) => {
    try {
      // an error text may quote a card number a step was given: masked before it is logged
      options.log?.(maskCardData(entry));
    } catch {
      // a failing log sink must not take the terminal down
    }
  };
  const pendingTimers = new Set<unknown>();
  let parts: AgentParts | undefined;
  let stopping: Promise<void> | undefined;

  const ctx: AgentContext = {
    options,
    now: options.now ?? (() => new Date()),
    timers,
    random: options.random ?? Math.random,
    maxBackoffMs: options.maxBackoffMs ?? 60_000,
    log,
    fail: (event, msg, error) => log(failureEntry(event, msg, error)),
    later(ms, callback) {
      const handle = timers.setTimeout(() => {
        pendingTimers.delete(handle);
        callback();
      }, ms);
      pendingTimers.add(handle);
    },
    restart(request: RestartRequest) {
      log({
        level: 'warn',
        event: 'edge.restart',
        msg: `REBOOT ${request.commandId}${request.reason ? ` (${request.reason})` : ''}: restarting in ${request.delaySeconds} s`,
      });
      ctx.later(request.delaySeconds * 1000, () => {
        if (options.onRestart) options.onRestart(request);
        else log({ level: 'warn', event: 'edge.restart', msg: 'no restart hook: still running' });
      });
    },
  };

  const isOnline = () => parts?.status.getSnapshot().context.online ?? false;
  const need = (): AgentParts => {
    if (!parts || stopping) throw new AgentError('AGENT_NOT_RUNNING', 'the agent is not running');
    return parts;
  };
  // the limits of the device configuration in force, read once per configuration
  let limitsOf: { config: VerifiedConfig | undefined; limits: SafLimits } | undefined;
  const offlineLimits = (p: AgentParts): SafLimits => {
    const config = p.config?.current('device');
    if (!limitsOf || limitsOf.config !== config)
      limitsOf = { config, limits: safLimitsFromConfig((config?.content ?? {}) as JsonObject) };
    return limitsOf.limits;
  };
  const runDeps = (p: AgentParts): LocalRunDeps => ({
    store: p.store,
    runtime: p.runtime,
    deviceId: options.deviceId,
    isOnline,
    hasType: (type) => p.catalog.get(type) !== undefined,
    checkOfflineLimits: (request) => p.recorder.checkLimits(p.store, request, offlineLimits(p)),
    onSettled: () => p.sync.notifyPending(),
  });

  const agent: EdgeAgent = {
    deviceId: options.deviceId,

    async start() {
      if (parts) return;
      checkCloudUrl(options.cloudUrl, options.insecureCloudUrl === true);
      const p = await assembleAgent(ctx);
      parts = p;
      stopping = undefined;
      // a previous process died mid-payment: finish what it committed (the store is ours alone)
      const { recovered } = await p.runtime.maintain({ zombieAfterMs: 0 });
      if (recovered > 0)
        log({
          level: 'warn',
          event: 'edge.workflow.recovered',
          msg: `${recovered} workflow(s) interrupted by the last shutdown are being resumed`,
        });
      p.service = p.runtime.serve({});
      prefetchMissing(p, ctx, wasmHashesOf(p.catalog.entries().map((e) => e.definition)));
      try {
        await startAgentConfig(p, ctx, () => parts === p && !stopping);
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
      p.wal.start();
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
        p.connectivity.quiet();
        p.wal.stop();
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
          if (r.status === 'rejected') ctx.fail('edge.stop', 'a component did not stop', r.reason);
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

    status: () =>
      parts
        ? agentStatus(parts, { deviceId: options.deviceId, running: !stopping })
        : Promise.reject(new AgentError('AGENT_NOT_RUNNING', 'the agent is not running')),
  };
  return agent;
}
