/**
 * One LISTEN connection for every channel a process follows (command pushes, nonce
 * announcements): each channel on a connection of its own would take that many connections
 * out of the pool for good, and a small pool then starves. The connection survives its
 * server going away: it is re-established after a pause, every channel is listened to again
 * and told `onReconnect`, since notifications sent meanwhile are lost. Payloads start with the
 * sender's schema (`schema|…`), so two deployments sharing a database (or parallel test
 * schemas) stay apart; only this schema's payloads are passed on, without the prefix.
 */
import type { Pool, PoolClient } from 'pg';

/** What a channel's subscriber is told. */
export interface ChannelHandlers {
  /** A payload of this schema, without its `schema|` prefix. */
  onPayload(payload: string): void;
  /** The connection was re-established; notifications may have been missed. */
  onReconnect(): void;
  /** The connection broke: notifications are lost from now until `onReconnect`. */
  onLost?(): void;
}

/** Channels listened to over one connection. */
export interface ChannelListener {
  /** Receive `channel`'s payloads (a trusted identifier); returns a function that stops. */
  listen(channel: string, handlers: ChannelHandlers): Promise<() => Promise<void>>;
  /** Stop every channel and give the connection back. */
  close(): Promise<void>;
}

/** Options of {@link createChannelListener}. */
export interface ChannelListenerOptions {
  /** A connection problem (logged by the caller). */
  onError(error: unknown): void;
  /** Pause before reconnecting (default 1000 ms). */
  retryMs?: number;
}

/** A listener over a connection of `pool`, connected on the first `listen`. */
export function createChannelListener(
  pool: Pool,
  options: ChannelListenerOptions,
): ChannelListener {
  const channels = new Map<string, Set<ChannelHandlers>>();
  let client: PoolClient | undefined;
  let detach = () => undefined as void; // removes the current connection's handlers
  let listening = new Set<string>(); // channels LISTENed on the current connection
  let connecting: Promise<PoolClient> | undefined;
  let retry: NodeJS.Timeout | undefined;
  let closed = false;

  const drop = (c: PoolClient, error?: unknown) => {
    if (client !== c) return;
    client = undefined;
    listening = new Set();
    detach();
    // a broken connection is destroyed; a healthy one goes back without our handlers
    if (error === undefined) c.release();
    else c.release(error instanceof Error ? error : true);
  };
  const release = async (c: PoolClient) => {
    try {
      await c.query('UNLISTEN *');
      drop(c);
    } catch (error) {
      drop(c, error);
    }
  };

  const connect = async (): Promise<PoolClient> => {
    const c = await pool.connect();
    let prefix: string | undefined;
    const onError = (error: Error) => {
      options.onError(error);
      if (client !== c) return;
      drop(c, error);
      for (const set of channels.values()) for (const h of set) h.onLost?.();
      scheduleReconnect();
    };
    const onNotification = (message: { channel: string; payload?: string }) => {
      if (prefix === undefined || !message.payload?.startsWith(prefix)) return;
      const payload = message.payload.slice(prefix.length);
      for (const h of channels.get(message.channel) ?? []) h.onPayload(payload);
    };
    c.on('error', onError);
    c.on('notification', onNotification);
    detach = () => {
      c.off('error', onError);
      c.off('notification', onNotification);
    };
    client = c;
    try {
      const found = await c.query<{ schema: string }>('SELECT current_schema() AS schema');
      prefix = `${found.rows[0]?.schema ?? ''}|`;
      for (const channel of [...channels.keys()]) {
        await c.query(`LISTEN ${channel}`);
        listening.add(channel);
      }
      return c;
    } catch (error) {
      drop(c, error);
      throw error;
    }
  };
  const connected = (): Promise<PoolClient> => {
    if (client && !connecting) return Promise.resolve(client);
    connecting ??= connect().finally(() => (connecting = undefined));
    return connecting;
  };

  const scheduleReconnect = () => {
    if (closed || retry || channels.size === 0) return;
    retry = setTimeout(() => {
      retry = undefined;
      connected().then(
        () => [...channels.values()].forEach((set) => set.forEach((h) => h.onReconnect())),
        (error: unknown) => {
          options.onError(error);
          scheduleReconnect();
        },
      );
    }, options.retryMs ?? 1000);
  };

  return {
    async listen(channel, handlers) {
      if (closed) throw new Error('the channel listener is closed');
      const set = channels.get(channel) ?? new Set();
      channels.set(channel, set);
      set.add(handlers);
      const stop = async () => {
        set.delete(handlers);
        if (set.size > 0 || channels.get(channel) !== set) return;
        channels.delete(channel);
        const c = client;
        if (!c) return;
        if (channels.size === 0) {
          if (retry) clearTimeout(retry);
          retry = undefined;
          return release(c);
        }
        if (!listening.delete(channel)) return;
        await c.query(`UNLISTEN ${channel}`).catch((error: unknown) => options.onError(error));
      };
      try {
        const c = await connected();
        if (!listening.has(channel)) {
          await c.query(`LISTEN ${channel}`);
          listening.add(channel);
        }
      } catch (error) {
        await stop();
        throw error;
      }
      return stop;
    },
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      retry = undefined;
      channels.clear();
      await connecting?.catch(() => undefined);
      if (client) await release(client);
    },
  };
}
