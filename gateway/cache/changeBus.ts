/**
 * How a gateway hears that what it holds in memory changed: device credentials, the ETags
 * of the documents devices poll, and command pushes for the devices whose sockets it holds.
 *
 * A change is announced in the transaction that makes it (NOTIFY on PostgreSQL, delivered
 * at commit) and applied to this gateway's caches right after the commit, so a gateway
 * reads its own writes at once and others within the notification's delay. The gateway's
 * one LISTEN connection (listenChannel.ts) carries every channel. While it is
 * down the caches are emptied and keep nothing (`trusted()` is false): requests read
 * through to the database until LISTEN holds again, so a missed notification can never
 * leave a stale entry behind. PGlite is one process: local application is all there is.
 */
import {
  CHANGES_CHANNEL,
  COMMANDS_CHANNEL,
  notifyChange,
  parseChange,
  parseCommandNotification,
  type CacheChange,
  type ChannelListener,
  type CommandNotification,
  type CloudStore,
  type CloudHandle,
} from '../../runtime/index.js';

/** What the device hub hears on the shared connection. */
export interface CommandListener {
  /** Commands became deliverable for these devices (committed on some gateway). */
  notify(notification: CommandNotification): void;
  /** LISTEN holds again after a loss: command notifications may have been missed. */
  reconnected(): void;
}

/** A change, or `undefined` for "anything may have changed" (the connection was lost). */
export type ChangeListener = (change: CacheChange | undefined) => void;

/** The change bus of one gateway. */
export interface ChangeBus {
  /** Whether caches may keep what they read now (false while notifications may be lost). */
  readonly trusted: () => boolean;
  /**
   * Run `work` in one transaction; each `changed(change)` is announced to every gateway with
   * the commit and applied to this gateway's caches right after it.
   */
  transaction<T>(
    work: (tx: CloudHandle, changed: (change: CacheChange) => Promise<void>) => Promise<T>,
  ): Promise<T>;
  /** Listen to changes, from this gateway and the others. */
  onChange(listener: ChangeListener): void;
  /** The device hub's command notifications (one listener; a later call replaces it). */
  onCommands(listener: CommandListener): void;
  /** Start listening (PostgreSQL); resolves once LISTEN holds. */
  start(): Promise<void>;
  /** Stop listening. */
  close(): Promise<void>;
}

/**
 * Create the bus of a gateway over `store`, hearing other gateways through `channels`
 * (PostgreSQL; without it changes are local only); `onError` logs what a cache listener throws.
 */
export function createChangeBus(
  store: CloudStore,
  channels: ChannelListener | undefined,
  onError: (error: unknown) => void,
): ChangeBus {
  const listeners: ChangeListener[] = [];
  let commands: CommandListener | undefined;
  let listening = channels === undefined;
  const stops: (() => Promise<void>)[] = [];

  const apply = (change: CacheChange | undefined) => {
    for (const listener of listeners) {
      try {
        listener(change);
      } catch (error) {
        onError(error);
      }
    }
  };

  return {
    trusted: () => listening,
    async transaction(work) {
      const changes: CacheChange[] = [];
      const result = await store.transaction((tx) =>
        work(tx, async (change) => {
          changes.push(change);
          await notifyChange(tx, change);
        }),
      );
      changes.forEach(apply);
      return result;
    },
    onChange(listener) {
      listeners.push(listener);
    },
    onCommands(listener) {
      commands = listener;
    },
    async start() {
      if (!channels) return;
      stops.push(
        await channels.listen(COMMANDS_CHANNEL, {
          onPayload: (body) => commands?.notify(parseCommandNotification(body)),
          onReconnect: () => commands?.reconnected(),
        }),
        await channels.listen(CHANGES_CHANNEL, {
          // a kind this gateway does not know (undefined): drop everything
          onPayload: (body) => apply(parseChange(body)),
          onLost() {
            listening = false;
            apply(undefined);
          },
          onReconnect() {
            listening = true;
            apply(undefined);
          },
        }),
      );
      listening = true;
    },
    async close() {
      listening = channels === undefined;
      for (const stop of stops.splice(0)) await stop();
    },
  };
}
