/**
 * Command push routing between gateway processes (DESIGN §6): a commit that makes commands
 * deliverable sends NOTIFY on `saffron_commands` (delivered when the transaction commits)
 * naming the devices; every gateway LISTENs, and the one holding a device's socket pushes.
 *
 * Payload: `schema|origin|device,device,…`. The schema keeps two deployments that share a
 * database (or parallel test schemas) apart; the origin lets a gateway skip what it sent
 * itself (it already pushed locally). Device ids cannot contain `|` or `,` (see
 * authenticate.ts), and long lists are split to stay under NOTIFY's 8000-byte payload.
 *
 * The listening connection is dedicated; when it breaks it is re-established after a pause
 * and `onReconnect` is called, since notifications sent meanwhile are lost.
 */
import { sql } from 'kysely';
import type { Pool, PoolClient } from 'pg';
import type { StoreHandle } from '../store.js';

/** The channel command notifications use. */
export const COMMANDS_CHANNEL = 'saffron_commands';

const MAX_PAYLOAD = 7000;

/** Queue notifications for `deviceIds` in the caller's transaction (PostgreSQL only). */
export async function notifyCommands(
  h: StoreHandle,
  deviceIds: readonly string[],
  origin: string,
): Promise<void> {
  if (h.dialect !== 'postgres' || deviceIds.length === 0) return;
  const chunks: string[] = [];
  let current = '';
  for (const id of new Set(deviceIds)) {
    if (current && current.length + id.length + 1 > MAX_PAYLOAD) {
      chunks.push(current);
      current = '';
    }
    current = current ? `${current},${id}` : id;
  }
  if (current) chunks.push(current);
  for (const chunk of chunks)
    await sql`SELECT pg_notify(${COMMANDS_CHANNEL}, current_schema() || '|' || ${`${origin}|${chunk}`})`.execute(
      h.db,
    );
}

/** A command notification. */
export interface CommandNotification {
  origin: string;
  deviceIds: string[];
}

/** Options of {@link listenForCommands}. */
export interface CommandListenerOptions {
  onNotify(notification: CommandNotification): void;
  /** The connection was re-established; notifications may have been missed. */
  onReconnect(): void;
  /** A connection problem (logged by the caller). */
  onError(error: unknown): void;
  /** Pause before reconnecting (default 1000 ms). */
  retryMs?: number;
}

/** Listen on a dedicated connection; returns a function that stops listening. */
export async function listenForCommands(
  pool: Pool,
  options: CommandListenerOptions,
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
        if (message.channel !== COMMANDS_CHANNEL || !message.payload?.startsWith(prefix)) return;
        const [origin = '', list = ''] = message.payload.slice(prefix.length).split('|');
        options.onNotify({ origin, deviceIds: list.split(',').filter((id) => id !== '') });
      });
      await c.query(`LISTEN ${COMMANDS_CHANNEL}`);
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
      await c.query(`UNLISTEN ${COMMANDS_CHANNEL}`);
      c.release();
    } catch (error) {
      c.release(error instanceof Error ? error : true);
    }
  };
}
