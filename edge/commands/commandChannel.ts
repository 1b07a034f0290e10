/**
 * The command channel (docs/architecture.md#cloud-and-edge): commands arrive over the device socket, or — while the
 * socket is down — by polling `GET …/commands`; each runs once (commandExecutor.ts) and is
 * acked with its result, over the socket when it is up, else over REST.
 *
 * - Commands run one at a time in arrival order, so two commands never race over the same
 *   configuration or cache; a redelivery queued behind the original finds its stored
 *   result and is acked with it.
 * - Polling starts as soon as a connection attempt fails (at once, then a poll interval
 *   after each poll ends, on the background loop of runtime/loop) and stops when `welcome`
 *   arrives. Both paths may hand out the same command during a switch-over; the ledger
 *   makes that harmless.
 * - An ack that does not get through stays recorded as unacked and is sent again when the
 *   socket comes up and before each poll, until the cloud takes it or refuses it for good.
 *   The cloud also redelivers a command whose ack it never got; that too is answered from
 *   the ledger.
 * - Every command is verified before it runs (verifyCommand.ts): one that is not signed by
 *   the cloud key for this device, or that installs a definition the cloud did not sign, is
 *   not run and is acked FAILED with COMMAND_SIGNATURE_INVALID or
 *   DEFINITION_SIGNATURE_INVALID. The ack itself is trusted — it travels on the device's own
 *   signed requests — and tells the operator what happened; a forged command id the cloud
 *   does not know is refused by it. While the agent has no cloud key yet (a first start
 *   offline), a command is neither run nor acked: the cloud delivers it again later.
 */
import {
  createBackgroundLoop,
  toError,
  type BackoffPolicy,
  type EdgeStore,
} from '../../runtime/index.js';
import type { CloudClient } from '../cloud/cloudClient.js';
import { systemTimers, type EdgeTimers } from '../timers/timers.js';
import { parseCommand, type CommandHandlers, type EdgeCommand } from './command.js';
import { createCommandExecutor } from './commandExecutor.js';
import {
  listUnackedCommands,
  markCommandAcked,
  pruneCommandEntries,
  type CommandAck,
} from './commandLedger.js';
import { ackOverRest, pollCommands } from './restCommands.js';
import { verifyCommand } from './verifyCommand.js';
import { createSocketLink, type AckReply } from './socketLink.js';

/** How a command reached the device. */
export type CommandVia = 'websocket' | 'poll';

/** Events of the command channel. */
export type CommandChannelEvent =
  | { type: 'edge.commands.connected'; sessionId: string }
  | { type: 'edge.commands.disconnected'; code: number; reason: string; retryInMs: number }
  | { type: 'edge.commands.polled'; count: number }
  | { type: 'edge.commands.poll_failed'; message: string }
  | { type: 'edge.commands.received'; commandId: string; commandType: string; via: CommandVia }
  | {
      type: 'edge.commands.executed';
      commandId: string;
      commandType: string;
      status: CommandAck['status'];
      error?: string;
    }
  | {
      type: 'edge.commands.replayed';
      commandId: string;
      commandType: string;
      status: CommandAck['status'];
    }
  | {
      type: 'edge.commands.acked';
      commandId: string;
      status: CommandAck['status'];
      via: 'websocket' | 'rest';
      repeated: boolean;
    }
  | { type: 'edge.commands.ack_refused'; commandId: string; code: string; message: string }
  | { type: 'edge.commands.ack_failed'; commandId: string; message: string }
  | { type: 'edge.commands.invalid'; message: string }
  | { type: 'edge.commands.unverified'; commandId: string; message: string };

/** How the channel stands. */
export interface CommandChannelStatus {
  running: boolean;
  /** `websocket` while the socket is up, `polling` while it is down. */
  transport: 'websocket' | 'polling' | 'connecting' | 'stopped';
  sessionId: string | null;
  connectedSince: Date | null;
  /** Failed connection attempts since the socket was last up. */
  reconnectAttempts: number;
  lastPollAt: Date | null;
  lastError: string | null;
  /** Commands run by this process. */
  executed: number;
  /** Deliveries answered from the ledger without running anything. */
  replayed: number;
}

/** What the channel needs. */
export interface CommandChannelDeps {
  store: EdgeStore;
  cloud: CloudClient;
  /** Handlers by command type; types without one are acked FAILED. */
  handlers: CommandHandlers;
  /**
   * The cloud key commands are verified with (the provisioned or pinned one); undefined
   * while the agent has none yet — commands then wait for a later delivery.
   */
  cloudPublicKey: () => string | undefined;
  /** Use the socket (true); false polls only. */
  websocket?: boolean;
  /** Poll period while the socket is down (30 s). */
  pollIntervalMs?: number;
  /** Reconnect backoff (1 s doubling to 60 s, half of it random). */
  reconnect?: BackoffPolicy;
  /** Close a connection without `welcome` after this long (15 s). */
  connectTimeoutMs?: number;
  /** Wait this long for the reply to an ack, and for a REST request (15 s). */
  requestTimeoutMs?: number;
  /** Heartbeat period until the server names its own (30 s). */
  heartbeatIntervalMs?: number;
  /** Keep ledger entries this long (30 days). */
  retentionMs?: number;
  /** Largest result sent in an ack (48 KiB). */
  maxResultBytes?: number;
  onEvent?: (event: CommandChannelEvent) => void;
  now?: () => Date;
  timers?: EdgeTimers;
  random?: () => number;
}

/** The command channel of one device. */
export interface CommandChannel {
  /** Prune the ledger, then connect (and poll while the socket is down). */
  start(): Promise<void>;
  /** Close the socket, stop polling, abort handlers and wait for the command running. */
  stop(): Promise<void>;
  /** Poll once now (whatever the socket does); resolves with the number of commands taken. */
  pollNow(): Promise<number>;
  status(): CommandChannelStatus;
}

/** Create the command channel (not started). */
export function createCommandChannel(deps: CommandChannelDeps): CommandChannel {
  const now = deps.now ?? (() => new Date());
  const timers = deps.timers ?? systemTimers;
  const random = deps.random ?? Math.random;
  const pollIntervalMs = deps.pollIntervalMs ?? 30_000;
  const requestTimeoutMs = deps.requestTimeoutMs ?? 15_000;
  const useSocket = deps.websocket ?? true;
  const emit = (event: CommandChannelEvent) => {
    try {
      deps.onEvent?.(event);
    } catch {
      // a listener's failure is not the channel's
    }
  };

  let running = false;
  let abort = new AbortController();
  let queue: Promise<void> = Promise.resolve();
  let sessionId: string | null = null;
  let connectedSince: Date | null = null;
  let lastPollAt: Date | null = null;
  let lastError: string | null = null;
  let executed = 0;
  let replayed = 0;
  const afterAck = new Map<string, (() => void)[]>();
  const executor = createCommandExecutor({
    store: deps.store,
    handlers: deps.handlers,
    verify: (command) => verifyCommand(command, deps.cloud.deviceId, deps.cloudPublicKey() ?? ''),
    now,
    ...(deps.maxResultBytes !== undefined ? { maxResultBytes: deps.maxResultBytes } : {}),
  });

  /** A signal for one request: aborted by stop() or after the request timeout. */
  const withTimeout = async <T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> => {
    const controller = new AbortController();
    const onStop = () => controller.abort();
    abort.signal.addEventListener('abort', onStop);
    if (abort.signal.aborted) controller.abort(); // stopping: fail fast, ack again on restart
    const timer = timers.setTimeout(() => controller.abort(), requestTimeoutMs);
    try {
      return await work(controller.signal);
    } finally {
      timers.clearTimeout(timer);
      abort.signal.removeEventListener('abort', onStop);
    }
  };

  const acked = async (ack: CommandAck, reply: AckReply, via: 'websocket' | 'rest') => {
    await markCommandAcked(deps.store, ack.commandId, now());
    if (reply.kind === 'acked')
      emit({
        type: 'edge.commands.acked',
        commandId: ack.commandId,
        status: ack.status,
        via,
        repeated: reply.repeated,
      });
    else emit({ type: 'edge.commands.ack_refused', commandId: ack.commandId, ...reply });
    const callbacks = afterAck.get(ack.commandId) ?? [];
    afterAck.delete(ack.commandId);
    for (const callback of callbacks) {
      try {
        callback();
      } catch (error) {
        lastError = `after-ack callback of ${ack.commandId}: ${toError(error).message}`;
      }
    }
  };

  /** Send `ack`: over the socket when up, else (or when that fails) over REST. */
  const deliverAck = async (ack: CommandAck): Promise<void> => {
    if (link?.isUp()) {
      try {
        return await acked(ack, await link.sendAck(ack), 'websocket');
      } catch {
        // try REST below
      }
    }
    try {
      const reply = await withTimeout((signal) => ackOverRest(deps.cloud, ack, { signal }));
      await acked(ack, reply, 'rest');
    } catch (error) {
      lastError = toError(error).message;
      emit({ type: 'edge.commands.ack_failed', commandId: ack.commandId, message: lastError });
    }
  };

  const flushUnacked = async () => {
    for (const ack of await listUnackedCommands(deps.store)) {
      if (!running) return;
      await deliverAck(ack);
    }
  };

  const handle = async (command: EdgeCommand, via: CommandVia) => {
    emit({
      type: 'edge.commands.received',
      commandId: command.command_id,
      commandType: command.command_type,
      via,
    });
    if (deps.cloudPublicKey() === undefined) {
      emit({
        type: 'edge.commands.unverified',
        commandId: command.command_id,
        message: 'no cloud key to verify it with yet; left for a later delivery',
      });
      return;
    }
    const run = await executor.run(command, abort.signal);
    if (run.replayed) {
      replayed += 1;
      emit({
        type: 'edge.commands.replayed',
        commandId: command.command_id,
        commandType: command.command_type,
        status: run.ack.status,
      });
    } else {
      executed += 1;
      if (run.afterAck.length > 0) afterAck.set(command.command_id, run.afterAck);
      emit({
        type: 'edge.commands.executed',
        commandId: command.command_id,
        commandType: command.command_type,
        status: run.ack.status,
        ...(run.ack.error !== undefined ? { error: run.ack.error } : {}),
      });
    }
    await deliverAck(run.ack);
  };

  /** Queue `raw` to run after the commands before it; resolves when it has been acked. */
  const enqueue = (raw: unknown, via: CommandVia): Promise<void> => {
    const command = parseCommand(raw);
    if (!command) {
      emit({ type: 'edge.commands.invalid', message: 'a command without id or type' });
      return Promise.resolve();
    }
    const next = queue.then(() => handle(command, via));
    queue = next.catch((error: unknown) => {
      lastError = toError(error).message;
    });
    return queue;
  };

  const pollOnce = async (): Promise<number> => {
    await flushUnacked();
    const commands = await withTimeout((signal) => pollCommands(deps.cloud, { signal }));
    lastPollAt = now();
    emit({ type: 'edge.commands.polled', count: commands.length });
    await Promise.all(commands.map((raw) => enqueue(raw, 'poll')));
    return commands.length;
  };

  // polls run one at a time: a poll asked for during another joins it
  const polls = createBackgroundLoop({
    intervalMs: pollIntervalMs,
    firstDelayMs: 0,
    timers,
    pass: () =>
      pollOnce().catch((error: unknown) => {
        lastError = toError(error).message;
        emit({ type: 'edge.commands.poll_failed', message: lastError });
        return 0;
      }),
    onError: () => undefined, // a failed poll is reported by the pass
  });

  const startPolling = () => {
    if (running) polls.start();
  };
  const stopPolling = () => {
    void polls.stop(); // the poll in progress ends on its own; stop() waits for it
  };

  const link = useSocket
    ? createSocketLink({
        cloud: deps.cloud,
        timers,
        now,
        random,
        reconnect: deps.reconnect ?? { baseMs: 1_000, maxMs: 60_000 },
        connectTimeoutMs: deps.connectTimeoutMs ?? 15_000,
        ackTimeoutMs: requestTimeoutMs,
        heartbeatIntervalMs: deps.heartbeatIntervalMs ?? 30_000,
        onUp(welcome) {
          sessionId = welcome.session_id;
          connectedSince = now();
          stopPolling();
          emit({ type: 'edge.commands.connected', sessionId: welcome.session_id });
          void flushUnacked().catch((error: unknown) => {
            lastError = toError(error).message;
          });
        },
        onDown(info) {
          sessionId = null;
          connectedSince = null;
          emit({ type: 'edge.commands.disconnected', ...info });
          startPolling();
        },
        onCommand: (raw) => void enqueue(raw, 'websocket'),
        onInvalid: (message) => emit({ type: 'edge.commands.invalid', message }),
      })
    : undefined;

  return {
    async start() {
      if (running) return;
      running = true;
      abort = new AbortController();
      const retentionMs = deps.retentionMs ?? 30 * 86_400_000;
      await pruneCommandEntries(deps.store, new Date(now().getTime() - retentionMs));
      if (link) link.start();
      else startPolling();
    },
    async stop() {
      running = false;
      const polled = polls.stop();
      abort.abort();
      await link?.stop();
      await polled;
      await queue;
    },
    pollNow: () => polls.runNow(),
    status: () => ({
      running,
      transport: !running
        ? 'stopped'
        : link?.isUp()
          ? 'websocket'
          : polls.started
            ? 'polling'
            : 'connecting',
      sessionId,
      connectedSince,
      reconnectAttempts: link?.failures() ?? 0,
      lastPollAt,
      lastError,
      executed,
      replayed,
    }),
  };
}
