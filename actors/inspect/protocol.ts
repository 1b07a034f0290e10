/**
 * The messages of Stately's inspection protocol (`@statelyai/inspect`), as its WebSocket
 * inspector sends them: one JSON object per message, `type` one of `@xstate.actor`,
 * `@xstate.event` and `@xstate.snapshot`, addressed by `sessionId` (the actor), `rootId` (the
 * root of its tree) and, for an actor, `parentId` and its machine `definition` as a JSON string.
 * `createdAt` is epoch milliseconds as a string, `_version` the protocol's version.
 *
 * The engine keeps no live XState actors (a workflow is a persisted snapshot advanced by pure
 * transitions), so it speaks these messages directly rather than XState's `InspectionEvent`s,
 * which carry live actor references.
 */
import type { StateValue } from 'xstate';
import type { JsonObject } from '../../runtime/index.js';

/** The `_version` every message carries: the `@statelyai/inspect` release whose framing is spoken. */
export const INSPECT_PROTOCOL_VERSION = '0.7.2';

/** The message types, as a closed set. */
export const INSPECTION_MESSAGE_TYPES = [
  '@xstate.actor',
  '@xstate.event',
  '@xstate.snapshot',
] as const;

/** One of {@link INSPECTION_MESSAGE_TYPES}. */
export type InspectionMessageType = (typeof INSPECTION_MESSAGE_TYPES)[number];

/** A workflow's snapshot as the inspector sees it: context already redacted. */
export interface InspectedSnapshot {
  /** `done` once the workflow reached a final state. */
  status: 'active' | 'done';
  /** The machine's state value (`{ step: 'waitingHuman' }`, `'completed'`, …). */
  value: StateValue;
  /** The machine's bookkeeping, the workflow's status and its (redacted) state. */
  context: JsonObject;
}

/** An event as sent: a `type` and its (redacted) payload. */
export type InspectedEvent = { type: string } & JsonObject;

interface MessageBase {
  /** The actor: a workflow id. */
  sessionId: string;
  /** The root workflow of the actor's tree (itself when it has no known parent). */
  rootId: string | undefined;
  /** Epoch milliseconds, as a string. */
  createdAt: string;
  /** Unique per message within a runtime. */
  id: string;
  _version: string;
}

/** An actor came into view: a workflow started here or first driven here. */
export interface ActorMessage extends MessageBase {
  type: '@xstate.actor';
  /** The workflow type. */
  name: string;
  /** The compiled machine's configuration, JSON-stringified, for the inspector to draw. */
  definition: string | undefined;
  parentId: string | undefined;
  snapshot: InspectedSnapshot;
}

/** An event a committed transition took. */
export interface EventMessage extends MessageBase {
  type: '@xstate.event';
  event: InspectedEvent;
  /** The actor that sent it (a parent or child workflow), when there is one. */
  sourceId: string | undefined;
}

/** The snapshot a committed transition left, with the last event it took. */
export interface SnapshotMessage extends MessageBase {
  type: '@xstate.snapshot';
  event: InspectedEvent;
  snapshot: InspectedSnapshot;
}

/** Any message of the protocol. */
export type InspectionMessage = ActorMessage | EventMessage | SnapshotMessage;

/**
 * Where inspection messages go: an observer (`next`, as XState's `inspect` option takes) or a
 * function. It is called synchronously after a commit and must not block: a slow consumer
 * queues (see `createWebSocketInspector`). What it throws is ignored.
 */
export type InspectionObserver =
  { next(message: InspectionMessage): void } | ((message: InspectionMessage) => void);
