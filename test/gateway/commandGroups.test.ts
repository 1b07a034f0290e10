/**
 * Group commit of the command plane (gateway/link/commandGroups.ts over the store's
 * ackCommands and deliverToDevices): many devices' acks and deliveries committed together,
 * each caller with its own outcome, a constant number of statements per group (counted at
 * the driver), an item the database refuses failing alone, and (PostgreSQL) one group of
 * creations or acks written at a time.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createSharedRuleReads } from '../../gateway/governance/sharedRuleReads.js';
import { createCommandGroups } from '../../gateway/link/commandGroups.js';
import { type CloudStore } from '../../runtime/index.js';
import { ackCommands, type AckRequest } from '../../gateway/commands/store/commands/ackCommands.js';
import { type CommandActor } from '../../gateway/commands/store/commands/command.js';
import { deliverToDevices } from '../../gateway/commands/store/commands/deliverCommands.js';
import { insertCommand } from '../../gateway/commands/store/commands/insertCommand.js';
import { readCommandRules } from '../../gateway/governance/store/authorization/index.js';
import { CLOUD_DIALECTS, openWithSchema, type TestStore } from '../support/stores.js';

const OPERATOR: CommandActor = { actor: 'alice', role: 'operator' };
const GATEWAY: CommandActor = { actor: 'gateway:test', role: 'system' };
const DEVICES = Array.from({ length: 12 }, (_, i) => `pos-${i}`);

/**
 * Count the statements a store sends to its database: every query its driver runs. On
 * PostgreSQL the pool's clients bind `query` when they connect (prepareStatements.ts), so the
 * spy goes on before the store opens.
 */
function spyOnStatements(store?: CloudStore) {
  const spy =
    store?.driver.dialect === 'pglite'
      ? vi.spyOn(store.driver.pglite, 'query')
      : vi.spyOn(pg.Client.prototype, 'query');
  return () => {
    const start = spy.mock.calls.length;
    return {
      get count() {
        return spy.mock.calls.length - start;
      },
    };
  };
}

for (const dialect of CLOUD_DIALECTS) {
  describe(`command groups on ${dialect.name}`, () => {
    let handle: TestStore<CloudStore>;
    let store: CloudStore;
    let countStatements: () => { readonly count: number };
    const now = new Date('2026-03-01T10:00:00Z');

    beforeEach(async () => {
      const beforeOpen = dialect.name === 'postgres' ? spyOnStatements() : undefined;
      handle = await openWithSchema(dialect);
      store = handle.store;
      countStatements = beforeOpen ?? spyOnStatements(store);
      await store.cloud
        .insertInto('edge_devices')
        .values(DEVICES.map((device_id) => ({ device_id, device_type: 'POS' })))
        .execute();
    });
    afterEach(async () => {
      vi.restoreAllMocks();
      await handle.close();
    });

    /** `perDevice` PENDING commands for each device, oldest first. */
    const createCommands = async (perDevice: number) => {
      const made = new Map<string, string[]>();
      for (const deviceId of DEVICES)
        for (let k = 0; k < perDevice; k++) {
          const command = await insertCommand(
            store,
            {
              commandId: randomUUID(),
              deviceId,
              commandType: 'DIAGNOSTIC',
              payload: { k },
              maxRetries: 3,
              expiresAt: null,
            },
            OPERATOR,
            'test',
            new Date(now.getTime() + k),
          );
          made.set(deviceId, [...(made.get(deviceId) ?? []), command!.commandId]);
        }
      return made;
    };
    const ackOf = (deviceId: string, commandId: string, result: unknown = { ok: true }) => ({
      ack: { deviceId, commandId, status: 'EXECUTED' as const, result },
      actor: { actor: deviceId, role: 'device', sourceIp: '10.0.0.1' },
      now,
    });
    const auditCount = async (event: string) =>
      Number(
        (
          await store.cloud
            .selectFrom('command_audit_log')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('event_type', '=', event)
            .executeTakeFirstOrThrow()
        ).n,
      );

    it('creates concurrent commands for many devices in one statement, each its own; an unknown device fails alone', async () => {
      const groups = createCommandGroups(store, GATEWAY, 'test', () => now);
      const command = (deviceId: string) => ({
        commandId: randomUUID(),
        deviceId,
        commandType: 'DIAGNOSTIC',
        payload: { to: deviceId },
        maxRetries: 2,
        expiresAt: null,
      });
      const counter = countStatements();
      const created = await Promise.all([
        // every other device's socket is idle here: created DELIVERED
        ...DEVICES.map((d, i) =>
          groups.create({
            command: command(d),
            actor: OPERATOR,
            ...(i % 2 === 0 ? { deliverer: GATEWAY } : {}),
          }),
        ),
        groups.create({ command: command('no-such-device'), actor: OPERATOR }),
        groups.create({ command: command(DEVICES[1]!), actor: OPERATOR }), // the next group
      ]);
      expect(counter.count).toBe(2);
      DEVICES.forEach((d, i) => {
        expect(created[i]!.deviceId).toBe(d);
        expect(created[i]!.payload).toEqual({ to: d });
        expect(created[i]!.status).toBe(i % 2 === 0 ? 'DELIVERED' : 'PENDING');
      });
      expect(created[DEVICES.length]).toBeUndefined();
      expect(created.at(-1)!.deviceId).toBe(DEVICES[1]);
      expect(await auditCount('COMMAND_CREATED')).toBe(DEVICES.length + 1);
      expect(await auditCount('COMMAND_DELIVERED')).toBe(DEVICES.length / 2);
      // a device with a PENDING command gets the next one PENDING too, behind it
      const behind = await groups.create({
        command: command(DEVICES[1]!),
        actor: OPERATOR,
        deliverer: GATEWAY,
      });
      expect(behind!.status).toBe('PENDING');
    });

    it("shares concurrent reads of the gate's versions and policies; each request gets its own types' rules", async () => {
      const version = (command_type: string, v: string) => ({
        id: randomUUID(),
        command_type,
        version: v,
        payload_schema: JSON.stringify({ type: 'object' }),
      });
      await store.cloud
        .insertInto('command_versions')
        .values([
          version('REBOOT', '1.0.0'),
          version('REBOOT', '1.1.0'),
          version('DIAGNOSTIC', '2.0.0'),
        ])
        .execute();
      const policy = (name: string, command_type: string | null, enabled = true) => ({
        policy_id: randomUUID(),
        name,
        command_type,
        required_role: 'operator',
        enabled,
      });
      await store.cloud
        .insertInto('authorization_policies')
        .values([
          policy('any-command', null),
          policy('reboots', 'REBOOT'),
          policy('diagnostics', 'DIAGNOSTIC'),
          policy('off', 'REBOOT', false),
        ])
        .execute();
      const read = createSharedRuleReads(store);
      const asked = [['REBOOT'], ['DIAGNOSTIC'], ['UPDATE_CONFIG'], ['REBOOT', 'DIAGNOSTIC']];
      const counter = countStatements();
      const shared = await Promise.all(asked.map((types) => read(types)));
      expect(counter.count).toBe(1);
      for (const [i, types] of asked.entries()) {
        const alone = await readCommandRules(store, types);
        expect(shared[i]).toEqual(alone);
      }
      // with the shipped default, which covers every type (by risk level)
      expect(shared[0]!.policies.map((p) => p.name)).toEqual([
        'any-command',
        'default-high-risk-commands',
        'reboots',
      ]);
      expect(shared[2]!.versions).toEqual([]);
    });

    it('delivers to many devices in one statement, each its own commands, oldest first', async () => {
      const made = await createCommands(2);
      const counter = countStatements();
      const delivered = await deliverToDevices(
        store,
        DEVICES.map((deviceId) => ({ deviceId, limit: 1, via: 'websocket', actor: GATEWAY })),
        now,
      );
      expect(counter.count).toBe(1);
      DEVICES.forEach((deviceId, i) => {
        expect(delivered[i]!.map((c) => c.commandId)).toEqual([made.get(deviceId)![0]]);
        expect(delivered[i]![0]!.status).toBe('DELIVERED');
      });
      expect(await auditCount('COMMAND_DELIVERED')).toBe(DEVICES.length);
      const audit = await store.cloud
        .selectFrom('command_audit_log')
        .select(['actor', 'actor_role', 'details', 'device_id'])
        .where('event_type', '=', 'COMMAND_DELIVERED')
        .execute();
      expect(audit.every((a) => a.actor === GATEWAY.actor && a.actor_role === 'system')).toBe(true);
      // what is left is the second command of each device, once
      const rest = await deliverToDevices(
        store,
        DEVICES.map((deviceId) => ({ deviceId, limit: 5, via: 'poll', actor: GATEWAY })),
        now,
      );
      DEVICES.forEach((deviceId, i) =>
        expect(rest[i]!.map((c) => c.commandId)).toEqual([made.get(deviceId)![1]]),
      );
    });

    it('groups concurrent deliveries across devices; a device asked twice at once gets each command once', async () => {
      const made = await createCommands(3);
      const groups = createCommandGroups(store, GATEWAY, 'test', () => now);
      const counter = countStatements();
      const results = await Promise.all([
        ...DEVICES.map((deviceId) => groups.deliver(deviceId, 2)),
        groups.deliver(DEVICES[0]!, 2), // waits for the next group
      ]);
      // one group of every device, then one for the repeated device
      expect(counter.count).toBe(2);
      DEVICES.forEach((deviceId, i) =>
        expect(results[i]!.map((c) => c.commandId)).toEqual(made.get(deviceId)!.slice(0, 2)),
      );
      expect(results.at(-1)!.map((c) => c.commandId)).toEqual(made.get(DEVICES[0]!)!.slice(2));
    });

    it('redelivers unacked commands across devices in one statement; retries used up fail, with their webhook event when subscribed', async () => {
      const made = await createCommands(2);
      await deliverToDevices(
        store,
        DEVICES.map((deviceId) => ({ deviceId, limit: 2, via: 'websocket', actor: GATEWAY })),
        now,
      );
      // the first device's second command has used its retries up
      const spent = made.get(DEVICES[0]!)![1]!;
      await store.cloud
        .updateTable('device_commands')
        .set({ retry_count: 3 })
        .where('command_id', '=', spent)
        .execute();
      const groups = createCommandGroups(store, GATEWAY, 'test', () => now);
      let counter = countStatements();
      // each device resumes; the second device already took its first command again
      const again = await Promise.all(
        DEVICES.map((d, i) => groups.redeliver(d, 5, i === 1 ? [made.get(d)![0]!] : [])),
      );
      expect(counter.count).toBe(1);
      DEVICES.forEach((d, i) => {
        const expected = i === 1 ? made.get(d)!.slice(1) : made.get(d)!;
        expect(again[i]!.map((c) => c.commandId)).toEqual(expected);
      });
      expect(again[0]!.map((c) => [c.status, c.retryCount])).toEqual([
        ['DELIVERED', 1],
        ['FAILED', 3],
      ]);
      expect(await auditCount('COMMAND_FAILED')).toBe(1);
      expect(await auditCount('COMMAND_DELIVERED')).toBe(
        2 * DEVICES.length + 2 * DEVICES.length - 2,
      );

      // with a subscriber to command.failed, a group that fails one enqueues its event
      await store.cloud
        .insertInto('webhook_registrations')
        .values({
          webhook_id: randomUUID(),
          url: 'https://example.test/hook',
          event_types: JSON.stringify(['command.failed']),
          secret_ciphertext: 'x',
        })
        .execute();
      const last = made.get(DEVICES[2]!)![0]!;
      await store.cloud
        .updateTable('device_commands')
        .set({ retry_count: 3 })
        .where('command_id', '=', last)
        .execute();
      counter = countStatements();
      const resumed = await Promise.all(DEVICES.slice(2).map((d) => groups.redeliver(d, 5, [])));
      expect(counter.count).toBeGreaterThan(1);
      expect(resumed[0]!.find((c) => c.commandId === last)!.status).toBe('FAILED');
      expect(resumed.slice(1).every((r) => r.every((c) => c.status === 'DELIVERED'))).toBe(true);
      const events = await store.cloud
        .selectFrom('webhook_deliveries')
        .select(['event_type'])
        .execute();
      expect(events.map((e) => e.event_type)).toEqual(['command.failed']);
    });

    it('records many acks in one statement, each caller its own outcome; repeats are idempotent and a bad ack fails alone', async () => {
      const made = await createCommands(2);
      await deliverToDevices(
        store,
        DEVICES.map((deviceId) => ({ deviceId, limit: 2, via: 'websocket', actor: GATEWAY })),
        now,
      );
      const first = DEVICES.map((d) => ackOf(d, made.get(d)![0]!));
      const counter = countStatements();
      const outcomes = await ackCommands(store, first);
      expect(counter.count).toBe(1);
      expect(outcomes.map((o) => o.kind)).toEqual(DEVICES.map(() => 'acked'));
      outcomes.forEach((o, i) => {
        if (o.kind !== 'acked') throw new Error('not acked');
        expect(o.command.commandId).toBe(made.get(DEVICES[i]!)![0]);
        expect(o.command.status).toBe('EXECUTED');
        expect(o.command.result).toEqual({ ok: true });
      });

      // a second group: new acks, repeats of the first, one conflicting, unknown and foreign
      // commands, and the same ack twice within the group
      const [a, b] = DEVICES;
      const mixed: AckRequest[] = [
        ...DEVICES.map((d) => ackOf(d, made.get(d)![1]!)),
        ...first.slice(2),
        ackOf(a!, made.get(a!)![0]!, { ok: false }), // disagrees with how it finished
        ackOf(a!, randomUUID()), // no such command
        ackOf(a!, made.get(b!)![0]!), // b's command, acked by a
        ackOf(b!, made.get(b!)![1]!), // twice in one group
      ];
      const before = counter.count;
      const outcomes2 = await ackCommands(store, mixed);
      // one statement for the distinct commands, one for the command acked twice
      expect(counter.count - before).toBe(2);
      const kinds = outcomes2.map((o) => o.kind);
      expect(kinds.slice(0, DEVICES.length)).toEqual(DEVICES.map(() => 'acked'));
      expect(kinds.slice(DEVICES.length, DEVICES.length + first.length - 2)).toEqual(
        first.slice(2).map(() => 'repeated'),
      );
      expect(kinds.slice(-4)).toEqual(['conflict', 'not_found', 'not_found', 'repeated']);
      // each command finished once
      expect(await auditCount('COMMAND_EXECUTED')).toBe(2 * DEVICES.length);
      const audit = await store.cloud
        .selectFrom('command_audit_log')
        .select(['actor', 'device_id', 'source_ip'])
        .where('event_type', '=', 'COMMAND_EXECUTED')
        .execute();
      expect(audit.every((r) => r.actor === r.device_id && r.source_ip === '10.0.0.1')).toBe(true);
    });

    it('keeps one statement per kind whatever the group size when a webhook subscribes', async () => {
      const made = await createCommands(3);
      await store.cloud
        .insertInto('webhook_registrations')
        .values({
          webhook_id: randomUUID(),
          url: 'https://example.test/hook',
          event_types: JSON.stringify(['command.executed']),
          secret_ciphertext: 'x',
        })
        .execute();
      const counts: number[] = [];
      for (const [k, size] of [
        [0, 2],
        [1, DEVICES.length],
      ] as const) {
        const counter = countStatements();
        const outcomes = await ackCommands(
          store,
          DEVICES.slice(0, size).map((d) => ackOf(d, made.get(d)![k]!)),
        );
        counts.push(counter.count);
        expect(outcomes.every((o) => o.kind === 'acked')).toBe(true);
      }
      expect(counts[1]).toBe(counts[0]);
      const deliveries = await store.cloud
        .selectFrom('webhook_deliveries')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow();
      expect(Number(deliveries.n)).toBe(2 + DEVICES.length);
      expect(await auditCount('COMMAND_EXECUTED')).toBe(2 + DEVICES.length);
      // a FAILED ack has no subscriber: the common statement alone
      const counter = countStatements();
      const [failed] = await ackCommands(store, [
        {
          ...ackOf(DEVICES[0]!, made.get(DEVICES[0]!)![2]!),
          ack: {
            deviceId: DEVICES[0]!,
            commandId: made.get(DEVICES[0]!)![2]!,
            status: 'FAILED',
            error: 'paper out',
          },
        },
      ]);
      expect(counter.count).toBe(1);
      expect(failed!.kind).toBe('acked');
    });

    it('groups concurrent acks; an ack the database refuses fails alone', async () => {
      const made = await createCommands(1);
      const groups = createCommandGroups(store, GATEWAY, 'test', () => now);
      const counter = countStatements();
      const settled = await Promise.allSettled([
        ...DEVICES.map((d) => groups.ack(ackOf(d, made.get(d)![0]!))),
        groups.ack(ackOf(DEVICES[0]!, 'not-a-uuid')),
      ]);
      const statements = counter.count;
      expect(settled.slice(0, -1).map((s) => s.status === 'fulfilled' && s.value.kind)).toEqual(
        DEVICES.map(() => 'acked'),
      );
      expect(settled.at(-1)!.status).toBe('rejected');
      // the refused group, then each of its acks alone
      expect(statements).toBe(1 + DEVICES.length + 1);
      expect(await auditCount('COMMAND_EXECUTED')).toBe(DEVICES.length);
    });

    it('groups acks that arrive together from many callers into one statement', async () => {
      const made = await createCommands(1);
      const sizes: [string, number][] = [];
      const groups = createCommandGroups(store, GATEWAY, 'test', () => now, {
        onGroup: (kind, size) => sizes.push([kind, size]),
      });
      const counter = countStatements();
      const outcomes = await Promise.all(
        DEVICES.map((d) => groups.ack(ackOf(d, made.get(d)![0]!))),
      );
      expect(counter.count).toBe(1);
      expect(outcomes.map((o) => o.kind)).toEqual(DEVICES.map(() => 'acked'));
      expect(sizes).toEqual([['ack', DEVICES.length]]);
      const again = await groups.ack(ackOf(DEVICES[3]!, made.get(DEVICES[3]!)![0]!));
      expect(again.kind).toBe('repeated');
    });

    // PGlite has one connection: a lock held by the test would hold every statement
    if (dialect.name === 'postgres')
      it('writes one creation group and one ack group at a time: what arrives meanwhile goes into the next', async () => {
        const sizes: [string, number][] = [];
        const groups = createCommandGroups(store, GATEWAY, 'test', () => now, {
          onGroup: (kind, size) => sizes.push([kind, size]),
        });
        const pause = () => new Promise((resolve) => setTimeout(resolve, 50));
        /**
         * While another transaction holds the row `lock` selects FOR UPDATE, `first` goes (its
         * group waits for the row), then each of `later` 50 ms apart; only `first`'s group is
         * written meanwhile. Resolves with every outcome once the row is free.
         */
        const whileLocked = async <R>(
          kind: string,
          lock: string,
          first: () => Promise<R>,
          later: (() => Promise<R>)[],
        ) => {
          const arrived: Promise<R>[] = [];
          await store.cloud.transaction().execute(async (trx) => {
            await sql.raw(`${lock} FOR UPDATE`).execute(trx);
            arrived.push(first());
            for (const item of later) {
              await pause();
              arrived.push(item());
            }
            await pause();
            expect(sizes).toEqual([[kind, 1]]);
          });
          return Promise.all(arrived);
        };
        const command = (deviceId: string) => () =>
          groups.create({
            command: {
              commandId: randomUUID(),
              deviceId,
              commandType: 'DIAGNOSTIC',
              payload: {},
              maxRetries: 2,
              expiresAt: null,
            },
            actor: OPERATOR,
          });
        const created = await whileLocked(
          'create',
          "SELECT 1 FROM edge_devices WHERE device_id = 'pos-0'",
          command('pos-0'),
          [command('pos-1'), command('pos-2')],
        );
        expect(created.every(Boolean)).toBe(true);
        expect(sizes).toEqual([
          ['create', 1],
          ['create', 2],
        ]);
        // the same for acks, the first waiting for its command's row
        const made = await createCommands(1);
        sizes.length = 0;
        const ack = (d: string) => () => groups.ack(ackOf(d, made.get(d)![0]!));
        const acked = await whileLocked(
          'ack',
          `SELECT 1 FROM device_commands WHERE command_id = '${made.get('pos-0')![0]!}'`,
          ack('pos-0'),
          [ack('pos-1'), ack('pos-2')],
        );
        expect(acked.map((o) => o.kind)).toEqual(['acked', 'acked', 'acked']);
        expect(sizes).toEqual([
          ['ack', 1],
          ['ack', 2],
        ]);
      });
  });
}
