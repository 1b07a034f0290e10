/**
 * The device status machine (spec: Device status ONLINE / OFFLINE / SYNCING; the spec leaves
 * the transitions open, these are ours):
 *
 * | from            | event                                 | to                              |
 * |-----------------|---------------------------------------|---------------------------------|
 * | any             | dev.connected (session s)             | ONLINE (SYNCING stays), s current |
 * | ONLINE          | dev.disconnected (current session)    | OFFLINE                         |
 * | any             | dev.disconnected (an older session)   | unchanged                       |
 * | OFFLINE, ONLINE | dev.sync.started                      | SYNCING                         |
 * | SYNCING         | dev.sync.finished (last upload)       | ONLINE with a session, else OFFLINE |
 * | any             | dev.stale (no sign of life for long)  | OFFLINE                         |
 *
 * ONLINE means a live WebSocket session; a device that only polls is OFFLINE with a fresh
 * `last_seen`. Heartbeats keep a session alive (a session silent for three intervals is
 * closed, which is `dev.disconnected`) and refresh `last_seen`; they are not transitions.
 *
 * Why sessions are named: a device that reconnects — perhaps to another gateway — opens the
 * new session before the old one's close is noticed. Only the current session's disconnect
 * takes the device offline, whatever order the two events arrive in. Uploads are counted so
 * two concurrent uploads end SYNCING only when both finish. A snapshot restored from the
 * bare status column (the JSON was lost) has session `*`, which any disconnect matches.
 *
 * The machine is only ever used through XState's pure `transition()` (see host.ts): the
 * snapshot lives in the database, so any gateway process can apply the next event.
 */
import { assign, setup } from 'xstate';
import type { DeviceStatus } from '../../runtime/index.js';
import type { DeviceEvent } from './events.js';

/** What the machine remembers. */
export interface DeviceMachineContext {
  /** The current WebSocket session, `*` when unknown, null when none. */
  session: string | null;
  /** Uploads in progress. */
  syncs: number;
}

/** The machine's states and the status each one means. */
export const DEVICE_STATE_STATUS = {
  offline: 'OFFLINE',
  online: 'ONLINE',
  syncing: 'SYNCING',
} as const satisfies Record<string, DeviceStatus>;

/** The device status machine. */
export const deviceMachine = setup({
  types: { context: {} as DeviceMachineContext, events: {} as DeviceEvent },
  guards: {
    isCurrentSession: ({ context, event }) =>
      event.type === 'dev.disconnected' &&
      (context.session === '*' || context.session === event.sessionId),
    otherSyncsRunning: ({ context }) => context.syncs > 1,
    hasSession: ({ context }) => context.session !== null,
  },
  actions: {
    setSession: assign(({ event }) =>
      event.type === 'dev.connected' ? { session: event.sessionId } : {},
    ),
    clearSession: assign({ session: null }),
    addSync: assign(({ context }) => ({ syncs: context.syncs + 1 })),
    removeSync: assign(({ context }) => ({ syncs: Math.max(0, context.syncs - 1) })),
    reset: assign({ session: null, syncs: 0 }),
  },
}).createMachine({
  id: 'device',
  initial: 'offline',
  context: { session: null, syncs: 0 },
  on: {
    'dev.stale': { target: '.offline', actions: 'reset' },
  },
  states: {
    offline: {
      on: {
        'dev.connected': { target: 'online', actions: 'setSession' },
        'dev.sync.started': { target: 'syncing', actions: 'addSync' },
      },
    },
    online: {
      on: {
        'dev.connected': { actions: 'setSession' },
        'dev.disconnected': {
          guard: 'isCurrentSession',
          target: 'offline',
          actions: 'clearSession',
        },
        'dev.sync.started': { target: 'syncing', actions: 'addSync' },
      },
    },
    syncing: {
      on: {
        'dev.connected': { actions: 'setSession' },
        'dev.disconnected': { guard: 'isCurrentSession', actions: 'clearSession' },
        'dev.sync.started': { actions: 'addSync' },
        'dev.sync.finished': [
          { guard: 'otherSyncsRunning', actions: 'removeSync' },
          { guard: 'hasSession', target: 'online', actions: 'removeSync' },
          { target: 'offline', actions: 'removeSync' },
        ],
      },
    },
  },
});
