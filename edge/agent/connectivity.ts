/**
 * Whether the agent can reach its cloud, learnt from what actually happens instead of from a
 * separate probe: every signed request goes through {@link Connectivity.client}, and an
 * HTTP answer of any status means the cloud is reachable (a 4xx or 5xx is the cloud talking)
 * while a request that never gets an answer — refused, reset, timed out — means it is not.
 * The command socket reports in too: `welcome` is proof of reachability; a socket that drops
 * proves nothing by itself (the cloud may have restarted), so the poll that follows decides.
 *
 * The agent starts offline: until the cloud has answered once, a payment is judged by the
 * offline rules (floor limit, SAF limits) — the safe side for a terminal that just booted
 * without a network.
 *
 * A request the agent aborted itself while stopping says nothing about the network and is
 * ignored (`quiet()`).
 *
 * The state itself lives in the agent's status store (agentStatusStore.ts), which every reader
 * shares; this tracker only feeds it what the traffic shows.
 */
import type WebSocket from 'ws';
import type { CloudClient, CloudRequest } from '../cloud/cloudClient.js';
import {
  createAgentStatusStore,
  type AgentStatusStore,
  type ConnectivityChange,
} from './agentStatusStore.js';

export type { ConnectivityChange };

/** The agent's view of its link to the cloud. */
export interface Connectivity {
  /** The cloud client to give every component: it reports each outcome here. */
  readonly client: CloudClient;
  isOnline: () => boolean;
  /** Since when the current state holds (null before the first observation). */
  since(): Date | null;
  /** Record proof of reachability from outside the client (the socket's `welcome`). */
  reachable(via: string): void;
  /** Record that the cloud could not be reached (a failure seen outside the client). */
  unreachable(via: string, reason: string): void;
  /** Ignore failures from now on (the agent is stopping and aborts its own requests). */
  quiet(): void;
}

/**
 * Create the tracker around `inner`, feeding `options.status` (a store of its own when
 * omitted); `onChange` hears every flip (not repeats).
 */
export function createConnectivity(
  inner: CloudClient,
  options: {
    status?: AgentStatusStore;
    onChange?: (change: ConnectivityChange) => void;
    now?: () => Date;
  } = {},
): Connectivity {
  const now = options.now ?? (() => new Date());
  const status = options.status ?? createAgentStatusStore();
  const { onChange } = options;
  if (onChange)
    status.on('connectivityChanged', ({ type: _, ...change }) => {
      try {
        onChange(change);
      } catch {
        // a listener's failure is not the tracker's
      }
    });
  let quiet = false;

  const set = (online: boolean, via: string, reason?: string) => {
    if (quiet && !online) return;
    status.trigger.reachability({
      online,
      via,
      at: now(),
      ...(reason !== undefined ? { reason } : {}),
    });
  };
  const live = () => status.getSnapshot().context;

  const client: CloudClient = {
    deviceId: inner.deviceId,
    baseUrl: inner.baseUrl,
    async request(request: CloudRequest): Promise<Response> {
      try {
        const response = await inner.request(request);
        set(true, 'http');
        return response;
      } catch (error) {
        set(false, request.path.split('?')[0] ?? request.path, networkReason(error));
        throw error;
      }
    },
    openSocket(): WebSocket {
      return inner.openSocket();
    },
    proveSocket: (challenge) => inner.proveSocket(challenge),
  };

  return {
    client,
    isOnline: () => live().online,
    since: () => live().onlineSince,
    reachable: (via) => set(true, via),
    unreachable: (via, reason) => set(false, via, reason),
    quiet() {
      quiet = true;
    },
  };
}

/** A short, secret-free description of a failed request (fetch hides the cause one level down). */
function networkReason(error: unknown): string {
  if (!(error instanceof Error)) return 'request failed';
  const cause = (error as { cause?: unknown }).cause;
  const code =
    cause !== null && typeof cause === 'object' && 'code' in cause ? String(cause.code) : undefined;
  if (error.name === 'AbortError' || error.name === 'TimeoutError') return 'request timed out';
  return code ?? error.message;
}
