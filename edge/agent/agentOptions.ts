/**
 * How an edge agent is set up: who the device is, where its cloud and database are, where
 * its workflows and step functions live, and the knobs of its background work. Everything
 * the agent reaches outside itself (fetch, clock, timers, randomness) can be injected.
 */
import type { InspectOption, StepDurability } from '../../actors/index.js';
import type { DestinationPolicyOptions, SecretProvider, WasmLimits } from '../../runtime/index.js';
import type { EdgeTimers } from '../timers/timers.js';
import type { RestartRequest } from './agentHandlers.js';
import type { AgentLogger } from './agentLog.js';

/** How the agent is set up. */
export interface EdgeAgentOptions {
  deviceId: string;
  /** The device secret from registration: signs requests and SAF records. */
  deviceSecret: string;
  /**
   * Base URL of the cloud (e.g. `https://saffron.example.com`): HTTPS, or plain HTTP only to
   * a loopback host unless {@link EdgeAgentOptions.insecureCloudUrl} (edge/config/cloudUrlPolicy.ts).
   */
  cloudUrl: string;
  /** Allow a plain-HTTP cloud URL to a host that is not loopback (default false). */
  insecureCloudUrl?: boolean;
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
  /**
   * When step commits reach the disk (default `boundaries`: a workflow's end with its SAF
   * record, and its waits, are flushed before anyone is answered; its start and the steps in
   * between are held and written with the next of those — see the engine's `stepDurability`).
   * `every-step` writes and flushes each.
   */
  stepDurability?: StepDurability;
  /**
   * Limits of the WASM sandbox; `threads` shares one thread pool between the agents of one
   * process (a simulator or test hosting many terminals), instead of two threads per agent.
   */
  wasm?: WasmLimits;
  /**
   * The cloud's Ed25519 public key (PEM) provisioned with the device: configuration,
   * definitions and commands are verified with it, it must match a key pinned earlier from
   * the cloud, and no key is ever fetched. Without it the cloud's key is fetched once and
   * pinned (with a warning).
   */
  cloudPublicKeyPem?: string;
  /** Secrets of `{{ secrets.NAME }}` (default: SAFFRON_SECRET_<NAME>). */
  secrets?: SecretProvider;
  /** Where HTTP steps may connect (default: public addresses only); see `createRuntime`. */
  outbound?: DestinationPolicyOptions;
  /** Longest wait between reconnects and retries (60 s). */
  maxBackoffMs?: number;
  /** Largest random delay before the first upload after an outage (set by the SAF sync when absent). */
  syncJitterMs?: number;
  /** Records per SAF upload (set by the SAF sync when absent). */
  safBatchSize?: number;
  /** Period of the metrics report (5 min). */
  metricsIntervalMs?: number;
  /**
   * How often the agent looks for an idle moment to checkpoint its database log (1 s;
   * walCheckpoints.ts), and the log size in pages at which a commit checkpoints anyway
   * (10,000: 40 MiB of log at most).
   */
  walIdleCheckMs?: number;
  walBackstopPages?: number;
  /** Poll period for commands while the socket is down (30 s). */
  commandPollIntervalMs?: number;
  /**
   * Called after a REBOOT command was acked (and its delay passed): restart the agent. The CLI
   * stops it and exits with a code its supervisor restarts it on. Without one the command is
   * acked and only logged.
   */
  onRestart?: (request: RestartRequest) => void;
  log?: AgentLogger;
  /**
   * Stream the agent's workflow statecharts to Stately's inspector (`RuntimeOptions.inspect`):
   * card numbers are masked as in the agent's logs on top of the engine's redaction.
   */
  inspect?: InspectOption;
  /** Injected for tests; defaults to the global fetch, wall clock, timers and Math.random. */
  fetch?: typeof fetch;
  now?: () => Date;
  timers?: EdgeTimers;
  random?: () => number;
}
