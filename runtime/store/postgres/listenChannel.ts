/**
 * LISTEN on a dedicated connection that survives its server going away: when the
 * connection breaks it is re-established after a pause and `onReconnect` is called, since
 * notifications sent meanwhile are lost. Payloads start with the sender's schema (`schema|…`),
 * so two deployments sharing a database (or parallel test schemas) stay apart; only this
 * schema's payloads are passed on, without the prefix.
 */
import type { Pool, PoolClient } from 'pg';

/** Options of {@link listenOnChannel}. */
export interface ChannelListenerOptions {
  /** A payload of this schema, without its `schema|` prefix. */
  onPayload(payload: string): void;
  /** The connection was re-established; notifications may have been missed. */
  onReconnect(): void;
  /** A connection problem (logged by the caller). */
  onError(error: unknown): void;
  /** Pause before reconnecting (default 1000 ms). */
  retryMs?: number;
}

/** Listen on `channel` (a trusted identifier); returns a function that stops listening. */
export async function listenOnChannel(
  pool: Pool,
  channel: string,
  options: ChannelListenerOptions,
): Promise<() => Promise<void>> {
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
      scheduleReconnect();
    };
    c.on('error', lost);
    client = c;
    try {
      const found = await c.query<{ schema: string }>('SELECT current_schema() AS schema');
      const prefix = `${found.rows[0]?.schema ?? ''}|`;
      c.on('notification', (message) => {
        if (message.channel !== channel || !message.payload?.startsWith(prefix)) return;
        options.onPayload(message.payload.slice(prefix.length));
      });
      await c.query(`LISTEN ${channel}`);
    } catch (error) {
      if (client === c) {
        client = undefined;
        c.release(error instanceof Error ? error : true);
      }
      throw error;
    }
  };

  const scheduleReconnect = () => {
    if (stopped) return;
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

  await connect();
  return async () => {
    stopped = true;
    if (retry) clearTimeout(retry);
    const c = client;
    client = undefined;
    if (!c) return;
    try {
      await c.query(`UNLISTEN ${channel}`);
      c.release();
    } catch (error) {
      c.release(error instanceof Error ? error : true);
    }
  };
}
