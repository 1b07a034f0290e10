/**
 * The agent's live status: what it learns from its parts' events rather than reads from its
 * database, held in one small reactive store (@xstate/store). Today that is whether the cloud
 * is reachable, since when and what showed it: the SAF recorder and the local workflow runner
 * decide online or offline rules from it, the metrics report sends it as `network_available`,
 * the local API's status shows it, and the log and the SAF upload (which starts when the cloud
 * comes back) hear each flip through the store's `connectivityChanged` event.
 *
 * A store rather than variables and a listener in each part: the flip-only rule (a repeat of
 * the current state changes nothing and tells nobody) is written once, in the transition, and
 * every reader sees the same snapshot. The store-and-forward backlog and the last sync time
 * are not copied here: the database keeps them in the transaction that changes them (the
 * backlog totals by trigger), and a second copy could only lag behind it.
 */
import { createStore } from '@xstate/store';

/** A change of reachability. */
export interface ConnectivityChange {
  online: boolean;
  /** What showed it: `http`, `websocket`, or the failing request's path. */
  via: string;
  /** Why it went offline (the network error's message; never a secret). */
  reason?: string;
  at: Date;
}

/** The live facts of the agent. */
export interface AgentLiveStatus {
  online: boolean;
  /** Since when `online` holds (null before the first observation: the agent starts offline). */
  onlineSince: Date | null;
  /** What showed the current state, and why it is offline when it is. */
  via: string | null;
  reason: string | null;
}

/** Events the parts send the store. */
type AgentStatusEvent = { type: 'reachability' } & ConnectivityChange;

/** Events the store emits to its listeners. */
type AgentStatusEmitted = { type: 'connectivityChanged' } & ConnectivityChange;

/** Create the store of one agent (offline until the cloud has answered once). */
export function createAgentStatusStore() {
  return createStore<AgentLiveStatus, AgentStatusEvent, AgentStatusEmitted>({
    context: { online: false, onlineSince: null, via: null, reason: null },
    on: {
      reachability: (context, { online, via, reason, at }, enqueue) => {
        if (context.onlineSince !== null && context.online === online) return context;
        const change: ConnectivityChange = {
          online,
          via,
          at,
          ...(reason !== undefined ? { reason } : {}),
        };
        enqueue.emit.connectivityChanged(change);
        return { online, onlineSince: at, via, reason: reason ?? null };
      },
    },
  });
}

/** The store of one agent. */
export type AgentStatusStore = ReturnType<typeof createAgentStatusStore>;
