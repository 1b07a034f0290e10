/**
 * One dedicated LISTEN connection for several notification channels. A gateway hears
 * command pushes and cache invalidations on the same connection, so it holds one idle
 * session on the server rather than one per concern.
 *
 * Every payload starts with `schema|`: deployments (or parallel test schemas) that share a
 * database see only their own notifications. When the connection breaks, notifications sent
 * meanwhile are lost: `onLost` is called at once (a cache must stop trusting itself), and
 * `onReconnect` once LISTEN holds again on a new connection after a pause.
 */
import type { Pool, PoolClient } from 'pg';

/** Options of {@link listenChannels}. */
export interface ChannelListenerOptions {
  /** A notification of this schema: its channel and the payload after `schema|`. */
  onNotify(channel: string, body: string): void;
  /** The connection broke: notifications from now on are lost until `onReconnect`. */
  onLost(): void;
  /** LISTEN holds again on a new connection. */
  onReconnect(): void;
  /** A connection problem (logged by the caller). */
  onError(error: unknown): void;
  /** Pause before reconnecting (default 1000 ms). */
  retryMs?: number;
}

const quoted = (channel: string) => `"${channel.replaceAll('"', '""')}"`;

/** LISTEN on `channels` over a dedicated connection; returns a function that stops listening. */
export async function listenChannels(
  pool: Pool,
  channels: readonly string[],
  options: ChannelListenerOptions,
): Promise<() => Promise<void>> {
  const wanted = new Set(channels);
  let stopped = false;
  let client: PoolClient | undefined;
  let retry: NodeJS.Timeout | undefined;

  const connect = async (): Promise<void> => {
    const c = await pool.connect();
    const lost = (error: unknown) => {
      options.onError(error);
      if (client !== c) return;
      client = undefined;
      c.release(error instanceof Error ? error : true);
      options.onLost();
      scheduleReconnect();
    };
    c.on('error', lost);
    client = c;
    try {
      const found = await c.query<{ schema: string }>('SELECT current_schema() AS schema');
      const prefix = `${found.rows[0]?.schema ?? ''}|`;
      c.on('notification', (message) => {
        if (!wanted.has(message.channel) || !message.payload?.startsWith(prefix)) return;
        options.onNotify(message.channel, message.payload.slice(prefix.length));
      });
      for (const channel of wanted) await c.query(`LISTEN ${quoted(channel)}`);
    } catch (error) {
      if (client === c) {
        client = undefined;
        c.release(error instanceof Error ? error : true);
      }
      throw error;
    }
  };

  const scheduleReconnect = () => {
    if (stopped || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      connect().then(
        () => options.onReconnect(),
        (error: unknown) => {
          options.onError(error);
          scheduleReconnect();
        },
      );
    }, options.retryMs ?? 1000);
  };

  try {
    await connect();
  } catch (error) {
    // the caller gets the error and no stop function: nothing may keep reconnecting
    stopped = true;
    if (retry) clearTimeout(retry);
    throw error;
  }
  return async () => {
    stopped = true;
    if (retry) clearTimeout(retry);
    const c = client;
    client = undefined;
    if (!c) return;
    try {
      await c.query('UNLISTEN *');
      c.release();
    } catch (error) {
      c.release(error instanceof Error ? error : true);
    }
  };
}
