/**
 * Presence written behind (gateway/link/presence.ts) on real databases: one flush writes many
 * devices' statuses, actor snapshots, `last_seen` and exactly one `device.online` /
 * `device.offline` event per connectivity change, in a constant number of statements
 * (counted at the driver); a late disconnect of a replaced session leaves the device ONLINE
 * in one batch and across batches; a flush that fails (a real CHECK constraint, or its
 * connection dropped by the server) keeps its events and is retried; the sweep skips a device that spoke since it was found quiet; a
 * gateway that closes writes what is queued; and a gateway that dies with events unflushed
 * has its devices reset OFFLINE by another gateway's sweep.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import pg, { type PoolClient } from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createPresenceWriter,
  type PresenceSettings,
  type PresenceWriter,
} from '../../gateway/link/presence.js';
import { commandRoutes } from '../../gateway/routes/commands.js';
import { type CloudStore } from '../../runtime/index.js';
import { insertWebhook } from '../../gateway/webhooks/store/webhooks/index.js';
import { connectDevice } from '../support/device.js';
import { startTestGateway } from '../support/gateway.js';
import { CLOUD_DIALECTS, openWithSchema, rawExec, type TestStore } from '../support/stores.js';

const MANUAL: PresenceSettings = { flushEveryMs: 3_600_000, maxDevices: 10_000 };
const QUIET = { heartbeatIntervalMs: 3_600_000, sweepIntervalMs: 3_600_000 };

/** Warnings a writer logged (flush failures). */
interface TestLog {
  warnings: unknown[];
  warn(obj: unknown): void;
  error(obj: unknown): void;
}
const testLog = (): TestLog => {
  const warnings: unknown[] = [];
  return {
    warnings,
    warn: (obj) => void warnings.push(obj),
    error: (obj) => void warnings.push(obj),
  };
};

/** Statements `work` sends to the database, counted at the driver (BEGIN and COMMIT included). */
async function countStatements(store: CloudStore, work: () => Promise<void>): Promise<number> {
  let count = 0;
  let counting = true;
  const driver = store.driver;
  switch (driver.dialect) {
    case 'pglite': {
      const instance = driver.pglite;
      const original = instance.query.bind(instance);
      instance.query = (...args: Parameters<typeof original>) => {
        if (counting) count++;
        return original(...args);
      };
      try {
        await work();
      } finally {
        counting = false;
        instance.query = original;
      }
      return count;
    }
    case 'postgres': {
      const pool = driver.pool;
      const connect = pool.connect.bind(pool) as () => Promise<PoolClient>;
      const wrapped = new WeakSet<PoolClient>();
      (pool as unknown as { connect: () => Promise<PoolClient> }).connect = async () => {
        const client = await connect();
        if (!wrapped.has(client)) {
          wrapped.add(client);
          const query = client.query.bind(client) as (...args: unknown[]) => unknown;
          (client as unknown as { query: unknown }).query = (...args: unknown[]) => {
            if (counting) count++;
            return query(...args);
          };
        }
        return client;
      };
      try {
        await work();
      } finally {
        counting = false;
        (pool as unknown as { connect: unknown }).connect = connect;
      }
      return count;
    }
    case 'sqlite':
      throw new Error('presence is cloud tier only');
  }
}

for (const dialect of CLOUD_DIALECTS) {
  describe(`device presence written behind on ${dialect.name}`, () => {
    let handle: TestStore<CloudStore>;
    let store: CloudStore;
    const writers: PresenceWriter[] = [];
    const writer = (settings = MANUAL, log = testLog()) => {
      const w = createPresenceWriter({ store, now: () => new Date(), log }, settings);
      writers.push(w);
      return w;
    };

    const insertDevices = async (prefix: string, n: number) => {
      const ids = Array.from({ length: n }, (_, i) => `${prefix}-${String(i).padStart(4, '0')}`);
      await store.cloud
        .insertInto('edge_devices')
        .values(ids.map((device_id) => ({ device_id, secret_ciphertext: 'sealed' })))
        .execute();
      return ids;
    };
    const rowOf = async (deviceId: string) => {
      const row = await store.cloud
        .selectFrom('edge_devices')
        .select(['status', 'last_seen', sql<unknown>`metadata -> 'actor'`.as('actor')])
        .where('device_id', '=', deviceId)
        .executeTakeFirstOrThrow();
      return {
        status: row.status,
        lastSeen: row.last_seen === null ? null : store.codec.parseTime(row.last_seen),
        actor: store.codec.parseJson(row.actor),
      };
    };
    const snapshot = (value: string, session: string | null) => ({
      machine: 'device',
      value,
      context: { session, syncs: 0 },
    });
    /** The device's webhook events in sequence order: `kind/reason`. */
    const eventsOf = async (deviceId: string) => {
      const rows = await sql<{ event_type: string; reason: string; status: string }>`
        SELECT event_type, payload -> 'data' ->> 'reason' AS reason,
          payload -> 'data' ->> 'status' AS status
        FROM webhook_deliveries WHERE payload -> 'data' ->> 'device_id' = ${deviceId}
        ORDER BY sequence`.execute(store.db);
      return rows.rows.map((r) => `${r.event_type}/${r.reason}/${r.status}`);
    };
    const subscribe = (s: CloudStore) =>
      insertWebhook(
        s,
        {
          webhookId: randomUUID(),
          name: 'presence',
          url: 'http://127.0.0.1:9/presence',
          eventTypes: ['device.online', 'device.offline'],
          secretCiphertext: 'sealed',
          active: true,
          maxRetries: 0,
          createdBy: null,
        },
        new Date(),
      );

    beforeAll(async () => {
      handle = await openWithSchema(dialect);
      store = handle.store;
      await subscribe(store);
    });
    afterAll(async () => {
      // writers left with nothing queued; their intervals stop
      for (const w of writers) await w.close();
      await handle.close();
    });

    it('writes many devices in one flush: statuses, snapshots, last_seen, one event per change', async () => {
      const ids = await insertDevices('many', 60);
      const [idle] = await insertDevices('many-idle', 1);
      const w = writer();
      const t0 = new Date();
      for (const id of ids) w.connected(id, `s-${id}`);
      // 0–19 leave again; 20–29 reconnect (new session) and the old one's close comes late
      for (const id of ids.slice(0, 20)) w.disconnected(id, `s-${id}`);
      for (const id of ids.slice(20, 30)) {
        w.connected(id, `t-${id}`);
        w.disconnected(id, `s-${id}`);
      }
      const t2 = new Date(Date.now() + 5_000);
      w.seen(ids.slice(30), t2);
      expect(w.queued).toBe(60);
      // nothing is written before the flush
      expect((await rowOf(ids[0]!)).status).toBe('OFFLINE');

      const statements = await countStatements(store, () => w.flush());
      expect(w.queued).toBe(0);
      // BEGIN, lock, update, lock subscribers, insert deliveries, COMMIT
      expect(statements).toBe(6);

      for (const [i, id] of ids.entries()) {
        const row = await rowOf(id);
        if (i < 20) {
          expect(row).toMatchObject({ status: 'OFFLINE', actor: snapshot('offline', null) });
          expect(await eventsOf(id)).toEqual([
            'device.online/connected/ONLINE',
            'device.offline/disconnected/OFFLINE',
          ]);
        } else {
          const session = i < 30 ? `t-${id}` : `s-${id}`;
          expect(row).toMatchObject({ status: 'ONLINE', actor: snapshot('online', session) });
          expect(await eventsOf(id)).toEqual(['device.online/connected/ONLINE']);
        }
        expect(row.lastSeen!.getTime()).toBeGreaterThanOrEqual(t0.getTime());
        if (i >= 30) expect(row.lastSeen).toEqual(t2);
      }
      expect(await rowOf(idle!)).toEqual({ status: 'OFFLINE', lastSeen: null, actor: null });
    });

    it('runs the same number of statements for 3 devices as for 400', async () => {
      const flushOf = async (prefix: string, n: number) => {
        const ids = await insertDevices(prefix, n);
        const w = writer();
        for (const id of ids) w.connected(id, 'a');
        const statements = await countStatements(store, () => w.flush());
        expect((await rowOf(ids.at(-1)!)).status).toBe('ONLINE');
        return statements;
      };
      const few = await flushOf('few', 3);
      const many = await flushOf('lots', 400);
      expect(many).toBe(few);
      expect(many).toBe(6);
      // signs of life alone: no snapshot, no webhook work
      const w = writer();
      w.seen(['few-0000', 'few-0001'], new Date());
      expect(await countStatements(store, () => w.flush())).toBe(4);
    });

    it("keeps a reconnected device ONLINE when the old session's disconnect comes late", async () => {
      const [same, across, swapped] = await insertDevices('late', 3);
      const w = writer();
      // in one batch
      w.connected(same!, 'a');
      w.connected(same!, 'b');
      w.disconnected(same!, 'a');
      // across batches
      w.connected(across!, 'a');
      await w.flush();
      w.connected(across!, 'b');
      await w.flush();
      w.disconnected(across!, 'a');
      await w.flush();
      // the new session's connect and the old one's disconnect in the batch after the first
      w.connected(swapped!, 'a');
      await w.flush();
      w.connected(swapped!, 'b');
      w.disconnected(swapped!, 'a');
      await w.flush();
      for (const id of [same!, across!, swapped!]) {
        expect(await rowOf(id)).toMatchObject({ status: 'ONLINE', actor: snapshot('online', 'b') });
        expect(await eventsOf(id)).toEqual(['device.online/connected/ONLINE']);
      }
      // the current session's end does take it offline
      w.disconnected(across!, 'b');
      await w.flush();
      expect((await rowOf(across!)).status).toBe('OFFLINE');
      expect(await eventsOf(across!)).toEqual([
        'device.online/connected/ONLINE',
        'device.offline/disconnected/OFFLINE',
      ]);
    });

    it('keeps the events of a failed flush, in order, and writes them when a retry succeeds', async () => {
      const [first, second] = await insertDevices('fail', 2);
      const log = testLog();
      const w = writer({ flushEveryMs: 25, maxDevices: 1_000 }, log);
      // a real constraint refuses the write: the whole transaction rolls back
      await rawExec(
        handle,
        `ALTER TABLE edge_devices ADD CONSTRAINT presence_test_refuse
           CHECK (device_id NOT LIKE 'fail-%' OR status <> 'ONLINE') NOT VALID`,
      );
      try {
        w.connected(first!, 'a');
        w.connected(second!, 'a');
        await vi.waitFor(() => expect(log.warnings.length).toBeGreaterThanOrEqual(1), {
          timeout: 5_000,
        });
        // more events meanwhile: they queue behind the failed ones
        w.disconnected(first!, 'a');
        w.connected(first!, 'b');
        await vi.waitFor(() => expect(log.warnings.length).toBeGreaterThanOrEqual(2), {
          timeout: 5_000,
        });
        expect(w.queued).toBe(2);
        for (const id of [first!, second!]) {
          expect(await rowOf(id)).toEqual({ status: 'OFFLINE', lastSeen: null, actor: null });
          expect(await eventsOf(id)).toEqual([]);
        }
      } finally {
        await rawExec(handle, `ALTER TABLE edge_devices DROP CONSTRAINT presence_test_refuse`);
      }
      // the writer's own retry gets through (the back-off is at most a few hundred ms here)
      await vi.waitFor(async () => expect((await rowOf(second!)).status).toBe('ONLINE'), {
        timeout: 5_000,
      });
      expect(w.queued).toBe(0);
      expect(await rowOf(first!)).toMatchObject({
        status: 'ONLINE',
        actor: snapshot('online', 'b'),
      });
      expect(await eventsOf(first!)).toEqual([
        'device.online/connected/ONLINE',
        'device.offline/disconnected/OFFLINE',
        'device.online/connected/ONLINE',
      ]);
      expect(await eventsOf(second!)).toEqual(['device.online/connected/ONLINE']);
    });

    it.runIf(dialect.name === 'postgres')(
      'retries a flush whose connection the server dropped',
      async () => {
        const [held, other] = await insertDevices('dropped', 2);
        const log = testLog();
        // another session holds one row, so the flush waits inside its transaction
        const blocker = new pg.Client({
          connectionString: process.env.DATABASE_URL,
          options: `-c search_path=${handle.location}`,
        });
        await blocker.connect();
        try {
          await blocker.query('BEGIN');
          await blocker.query('SELECT 1 FROM edge_devices WHERE device_id = $1 FOR UPDATE', [held]);
          const w = writer({ flushEveryMs: 25, maxDevices: 1_000 }, log);
          w.connected(held!, 'a');
          w.connected(other!, 'a');
          // the server drops the flush's connection while it waits (a restart does the same)
          let pid: number | undefined;
          await vi.waitFor(
            async () => {
              // inside a transaction the activity view is a snapshot: take a fresh one
              await blocker.query('SELECT pg_stat_clear_snapshot()');
              const { rows } = await blocker.query<{ pid: number }>(
                `SELECT pid FROM pg_stat_activity
                 WHERE wait_event_type = 'Lock' AND query LIKE '%FOR UPDATE OF d%'`,
              );
              pid = rows[0]?.pid;
              expect(pid).toBeDefined();
            },
            { timeout: 5_000 },
          );
          await blocker.query('SELECT pg_terminate_backend($1)', [pid]);
          await vi.waitFor(() => expect(log.warnings.length).toBeGreaterThanOrEqual(1), {
            timeout: 5_000,
          });
          expect(w.queued).toBe(2);
          await blocker.query('COMMIT');
          await vi.waitFor(
            async () => {
              for (const id of [held!, other!]) expect((await rowOf(id)).status).toBe('ONLINE');
            },
            { timeout: 5_000 },
          );
          for (const id of [held!, other!])
            expect(await eventsOf(id)).toEqual(['device.online/connected/ONLINE']);
        } finally {
          await blocker.end();
        }
      },
    );

    it('resets a stale device unless it showed a sign of life since', async () => {
      const [quiet, back, rejoined] = await insertDevices('stale', 3);
      const w = writer();
      for (const id of [quiet!, back!, rejoined!]) w.connected(id, 'a');
      await w.flush();
      // the three were left ONLINE an hour ago; the sweep's cutoff is a minute ago
      await store.cloud
        .updateTable('edge_devices')
        .set({ last_seen: store.codec.time(new Date(Date.now() - 3_600_000)) })
        .where('device_id', 'in', [quiet!, back!, rejoined!])
        .execute();
      const before = new Date(Date.now() - 60_000);
      // `back` spoke since (through another gateway, say): written before the reset comes
      w.seen([back!], new Date());
      await w.flush();
      // `rejoined` reconnects here, queued before the reset in the same batch
      w.connected(rejoined!, 'b');
      for (const id of [quiet!, back!, rejoined!]) w.stale(id, before);
      await w.flush();
      expect(await rowOf(quiet!)).toMatchObject({
        status: 'OFFLINE',
        actor: snapshot('offline', null),
      });
      expect(await eventsOf(quiet!)).toEqual([
        'device.online/connected/ONLINE',
        'device.offline/stale/OFFLINE',
      ]);
      expect(await rowOf(back!)).toMatchObject({
        status: 'ONLINE',
        actor: snapshot('online', 'a'),
      });
      expect(await rowOf(rejoined!)).toMatchObject({
        status: 'ONLINE',
        actor: snapshot('online', 'b'),
      });
      for (const id of [back!, rejoined!])
        expect(await eventsOf(id)).toEqual(['device.online/connected/ONLINE']);
    });

    it('writes what is queued when the gateway closes', async () => {
      const gw = await startTestGateway(dialect, {
        routes: [commandRoutes({ ...QUIET, presenceFlushMs: 3_600_000 })],
      });
      let open = true;
      try {
        await subscribe(gw.handle.store);
        const secret = await gw.insertDevice('closing-1');
        const device = await connectDevice(gw.url, 'closing-1', secret);
        device.send({ type: 'hello' });
        await device.next('welcome');
        const read = () =>
          gw.handle.store.cloud
            .selectFrom('edge_devices')
            .select(['status', 'last_seen'])
            .where('device_id', '=', 'closing-1')
            .executeTakeFirstOrThrow();
        // connected, but not written: the interval is an hour
        expect(await read()).toEqual({ status: 'OFFLINE', last_seen: null });
        // hold the device's row: the final write waits for it, and so does the close
        let release!: () => void;
        const released = new Promise<void>((resolve) => (release = resolve));
        let locked!: () => void;
        const isLocked = new Promise<void>((resolve) => (locked = resolve));
        const holder = gw.handle.store.transaction(async (tx) => {
          await sql`SELECT 1 FROM edge_devices WHERE device_id = 'closing-1' FOR UPDATE`.execute(
            tx.db,
          );
          locked();
          await released;
        });
        await isLocked;
        let closed = false;
        const closing = gw.gateway.close().then(() => (closed = true));
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(closed).toBe(false);
        release();
        await holder;
        await closing;
        open = false;
        const row = await read();
        expect(row.status).toBe('OFFLINE');
        expect(row.last_seen).not.toBeNull();
        const events = await sql<{ event_type: string }>`
          SELECT event_type FROM webhook_deliveries ORDER BY sequence`.execute(gw.handle.store.db);
        expect(events.rows.map((r) => r.event_type)).toEqual(['device.online', 'device.offline']);
      } finally {
        if (open) await gw.gateway.close();
        await gw.handle.close();
      }
    });

    it("has a dead gateway's devices reset OFFLINE by another gateway's sweep", async () => {
      const gw = await startTestGateway(dialect, {
        routes: [
          commandRoutes({
            // the live device below does not answer heartbeats: 10 s of silence are allowed
            heartbeatIntervalMs: 1_000,
            missedHeartbeats: 10,
            lastSeenEveryMs: 100,
            staleAfterMs: 1_500,
            sweepIntervalMs: 100,
            presenceFlushMs: 50,
          }),
        ],
      });
      try {
        const s = gw.handle.store;
        await subscribe(s);
        const dead = ['dead-1', 'dead-2'];
        for (const id of dead) await gw.insertDevice(id);
        const liveSecret = await gw.insertDevice('alive-1');
        // the dying gateway: its connects were written, its devices' disconnects never are
        // (it is never closed: it died)
        const doomed = createPresenceWriter(
          { store: s, now: () => new Date(), log: testLog() },
          MANUAL,
        );
        for (const id of dead) doomed.connected(id, 'a');
        await doomed.flush();
        for (const id of dead) doomed.disconnected(id, 'a'); // lost with the process
        // a device on the surviving gateway keeps talking and stays ONLINE
        const alive = await connectDevice(gw.url, 'alive-1', liveSecret);
        alive.send({ type: 'hello' });
        await alive.next('welcome');
        const statusOf = async (id: string) =>
          (
            await s.cloud
              .selectFrom('edge_devices')
              .select('status')
              .where('device_id', '=', id)
              .executeTakeFirstOrThrow()
          ).status;
        for (const id of dead) expect(await statusOf(id)).toBe('ONLINE');
        await vi.waitFor(
          async () => {
            for (const id of dead) expect(await statusOf(id)).toBe('OFFLINE');
          },
          { timeout: 10_000, interval: 100 },
        );
        expect(await statusOf('alive-1')).toBe('ONLINE');
        const reasons = await sql<{ id: string; reason: string }>`
          SELECT payload -> 'data' ->> 'device_id' AS id, payload -> 'data' ->> 'reason' AS reason
          FROM webhook_deliveries WHERE event_type = 'device.offline' ORDER BY sequence`.execute(
          s.db,
        );
        expect(reasons.rows.map((r) => `${r.id}/${r.reason}`).sort()).toEqual([
          'dead-1/stale',
          'dead-2/stale',
        ]);
        expect(doomed.queued).toBe(2);
        await alive.close();
      } finally {
        await gw.close();
      }
    });
  });
}
