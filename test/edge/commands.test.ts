/**
 * The command channel against a real gateway on loopback and a real SQLite edge store: a
 * pushed command runs once and is acked with its result; after a dropped connection with
 * the ack lost, the redelivered command is acked again from the ledger without running
 * again; a command cut short by a crash is acked FAILED without running; unknown types and
 * failing handlers are acked FAILED; heartbeats keep the session; with the socket refused
 * the channel polls over REST, and returns to the socket when it can; UPDATE_CONFIG runs
 * the config sync. Timers are the real ones only where the gateway's own clock is in play;
 * elsewhere the test fires them.
 */
import { createServer } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  createCloudClient,
  createCommandChannel,
  createConfigSync,
  defaultCommandHandlers,
  readCommandEntry,
  writeSyncState,
  type CloudClient,
  type CommandChannel,
  type CommandChannelDeps,
  type CommandChannelEvent,
  type CommandHandlers,
} from '../../edge/index.js';
import { contentChecksum } from '../../runtime/index.js';
import { commandRoutes } from '../../gateway/routes/commands.js';
import { registerConfigRoutes } from '../../gateway/config/routes.js';
import {
  eventLog,
  manualTimers,
  openEdgeStore,
  type EdgeStoreHandle,
  type EventLog,
} from '../support/edgeComponents.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

type Json = Record<string, unknown>;

const HEARTBEAT_MS = 200;

/** A port nothing listens on: connections to it are refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('edge command channel', () => {
  let gw: TestGateway;
  /** Sends the commands: an admin, as high-risk commands by an operator wait for approval. */
  let sender: string;
  let edge: EdgeStoreHandle;
  let deviceId: string;
  let secret: string;
  let counter = 0;
  let channel: CommandChannel | undefined;
  let log: EventLog<CommandChannelEvent>;
  /** Sockets the agent opened, newest last. */
  let sockets: WebSocket[];
  /** When set, REST acks fail as if the network dropped them. */
  let dropRestAcks: boolean;
  /** When set, the agent's socket goes here instead of the gateway. */
  let socketUrl: string | undefined;

  const interposed: typeof fetch = (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (dropRestAcks && init?.method === 'POST' && url.endsWith('/ack'))
      return Promise.reject(new TypeError('fetch failed'));
    return fetch(input, init);
  };
  const client = (): CloudClient => {
    const base = createCloudClient({ baseUrl: gw.url, deviceId, secret, fetch: interposed });
    return {
      ...base,
      openSocket() {
        const ws = socketUrl ? new WebSocket(socketUrl) : base.openSocket();
        sockets.push(ws);
        return ws;
      },
    };
  };
  const startChannel = async (
    handlers: CommandHandlers,
    options: Partial<CommandChannelDeps> = {},
  ) => {
    channel = createCommandChannel({
      store: edge.store,
      cloud: client(),
      handlers,
      cloudPublicKey: () => gw.keys.publicKeyPem,
      reconnect: { baseMs: 20, maxMs: 200 },
      onEvent: log.push,
      ...options,
    });
    await channel.start();
    return channel;
  };
  const create = async (body: Json): Promise<{ command_id: string }> => {
    const res = await gw.asUser(sender, `/api/v1/devices/${deviceId}/commands`, {
      method: 'POST',
      body: JSON.stringify(body),
    });
    expect(res.status, await res.clone().text()).toBe(201);
    return (await res.json()) as { command_id: string };
  };
  const commandRow = (commandId: string) =>
    gw.handle.store.cloud
      .selectFrom('device_commands')
      .selectAll()
      .where('command_id', '=', commandId)
      .executeTakeFirstOrThrow();
  const trail = async (commandId: string) =>
    (
      await gw.handle.store.cloud
        .selectFrom('command_audit_log')
        .select('event_type')
        .where('command_id', '=', commandId)
        .orderBy('id')
        .execute()
    ).map((r) => r.event_type);

  beforeAll(async () => {
    gw = await startTestGateway(CLOUD_DIALECTS[0]!, {
      routes: [
        registerConfigRoutes,
        commandRoutes({
          heartbeatIntervalMs: HEARTBEAT_MS,
          missedHeartbeats: 3,
          sweepIntervalMs: 3_600_000,
          ackTimeoutMs: 3_600_000,
        }),
      ],
    });
    sender = gw.adminToken;
  });
  afterAll(async () => {
    await gw.close();
  });
  beforeEach(async (context) => {
    deviceId = `edge-cmd-${++counter}`;
    secret = await gw.insertDevice(deviceId);
    edge = await openEdgeStore();
    log = eventLog<CommandChannelEvent>();
    sockets = [];
    dropRestAcks = false;
    socketUrl = undefined;
    channel = undefined;
    context.onTestFinished(async () => {
      await channel?.stop();
      await edge.close();
    });
  });

  it('runs a pushed command once and acks it with its result over the socket', async () => {
    const runs: unknown[] = [];
    let afterAck = false;
    await startChannel({
      REBOOT: (payload, command, context) => {
        runs.push({ payload, type: command.command_type });
        context.afterAck(() => (afterAck = true));
        return { rebooting_in_s: 5 };
      },
    });
    await log.next('edge.commands.connected');
    expect(channel!.status()).toMatchObject({ transport: 'websocket', running: true });
    const created = await create({ command_type: 'REBOOT', payload: { delay_seconds: 5 } });
    const acked = await log.next('edge.commands.acked', (e) => e.commandId === created.command_id);
    expect(acked).toMatchObject({ status: 'EXECUTED', via: 'websocket', repeated: false });
    expect(runs).toEqual([{ payload: { delay_seconds: 5 }, type: 'REBOOT' }]);
    expect(afterAck).toBe(true);
    expect(await commandRow(created.command_id)).toMatchObject({
      status: 'EXECUTED',
      result: { rebooting_in_s: 5 },
      error: null,
    });
    const entry = await readCommandEntry(edge.store, created.command_id);
    expect(entry).toMatchObject({
      state: 'DONE',
      status: 'EXECUTED',
      result: { rebooting_in_s: 5 },
    });
    expect(entry?.acked_at).toEqual(expect.any(String));
  });

  it('acks a redelivery after a dropped connection from the ledger, without running it again', async () => {
    let runs = 0;
    await startChannel({
      REBOOT: async () => {
        runs += 1;
        // the network drops while the command runs: the socket dies, REST acks are lost
        dropRestAcks = true;
        const down = log.upcoming('edge.commands.disconnected');
        sockets.at(-1)!.terminate();
        await down;
        return { run: runs };
      },
    });
    await log.next('edge.commands.connected');
    const created = await create({ command_type: 'REBOOT', payload: {} });
    const id = created.command_id;
    const executed = await log.next('edge.commands.executed', (e) => e.commandId === id);
    expect(executed.status).toBe('EXECUTED');
    // the network is back; the cloud pushes the unacked command again on the next hello
    dropRestAcks = false;
    const replayed = await log.next('edge.commands.replayed', (e) => e.commandId === id);
    expect(replayed.status).toBe('EXECUTED');
    await expect
      .poll(async () => (await commandRow(id)).status, { timeout: 10_000 })
      .toBe('EXECUTED');
    expect(runs).toBe(1);
    expect((await commandRow(id)).result).toEqual({ run: 1 });
    expect((await trail(id)).filter((e) => e === 'COMMAND_EXECUTED')).toHaveLength(1);
    expect(await trail(id)).toContain('COMMAND_DELIVERED');
    // every ack the agent sent for it carried the same result: none was refused as a conflict
    expect(log.all('edge.commands.ack_refused')).toEqual([]);
    expect(channel!.status()).toMatchObject({ executed: 1, replayed: 1 });
  });

  it('acks FAILED, without running it, a command a crash cut short', async () => {
    let runs = 0;
    const created = await create({ command_type: 'REBOOT', payload: {} });
    // the previous process recorded the command RUNNING and died
    await writeSyncState(
      edge.store,
      `command:${created.command_id}`,
      { command_type: 'REBOOT', state: 'RUNNING', started_at: new Date().toISOString() },
      new Date(),
    );
    await startChannel({ REBOOT: () => void (runs += 1) });
    const acked = await log.next('edge.commands.acked', (e) => e.commandId === created.command_id);
    expect(acked.status).toBe('FAILED');
    expect(runs).toBe(0);
    expect(await commandRow(created.command_id)).toMatchObject({
      status: 'FAILED',
      result: { code: 'COMMAND_INTERRUPTED' },
      error: expect.stringMatching(/^COMMAND_INTERRUPTED: /) as unknown,
    });
  });

  it('acks FAILED a type without a handler and a handler that throws', async () => {
    await startChannel({
      REBOOT: () => {
        throw new Error('the printer is jammed');
      },
    });
    await log.next('edge.commands.connected');
    const unknown = await create({ command_type: 'DIAGNOSTIC', payload: {} });
    const failing = await create({ command_type: 'REBOOT', payload: {} });
    for (const id of [unknown.command_id, failing.command_id])
      await log.next('edge.commands.acked', (e) => e.commandId === id);
    expect(await commandRow(unknown.command_id)).toMatchObject({
      status: 'FAILED',
      result: { code: 'COMMAND_UNKNOWN_TYPE' },
      error: 'COMMAND_UNKNOWN_TYPE: this agent has no handler for DIAGNOSTIC',
    });
    expect(await commandRow(failing.command_id)).toMatchObject({
      status: 'FAILED',
      error: 'COMMAND_FAILED: the printer is jammed',
    });
  });

  it('answers heartbeats: the session outlives many heartbeat intervals', async () => {
    await startChannel({});
    await log.next('edge.commands.connected');
    const ws = sockets.at(-1)!;
    const sent: string[] = [];
    const send = ws.send.bind(ws);
    ws.send = ((data: string, ...rest: never[]) => {
      sent.push((JSON.parse(data) as Json).type as string);
      return send(data, ...rest);
    }) as typeof ws.send;
    let heard = 0;
    // the server closes a session silent for 3 intervals; wait for 6 of its heartbeats
    await new Promise<void>((resolve, reject) => {
      ws.on('message', (data: Buffer) => {
        if ((JSON.parse(data.toString('utf8')) as Json).type === 'heartbeat' && ++heard === 6)
          resolve();
      });
      ws.on('close', (code) => reject(new Error(`the session closed with ${code}`)));
    });
    expect(sent.filter((t) => t === 'heartbeat').length).toBeGreaterThanOrEqual(6);
    expect(log.all('edge.commands.disconnected')).toEqual([]);
    expect(ws.readyState).toBe(WebSocket.OPEN);
  });

  it('polls over REST while the socket is refused, and goes back to the socket when it can', async () => {
    socketUrl = `ws://127.0.0.1:${await closedPort()}/api/v1/devices/x/ws`;
    const timers = manualTimers();
    const runs: string[] = [];
    await startChannel(
      { REBOOT: (_payload, command) => void runs.push(command.command_id) },
      { timers, pollIntervalMs: 45_000, reconnect: { baseMs: 1_000, maxMs: 8_000 } },
    );
    const down = await log.next('edge.commands.disconnected');
    expect(down.code).toBe(1006);
    expect(await log.next('edge.commands.polled')).toMatchObject({ count: 0 });
    expect(channel!.status().transport).toBe('polling');

    const created = await create({ command_type: 'REBOOT', payload: {} });
    expect((await commandRow(created.command_id)).status).toBe('PENDING');
    const acked = log.next('edge.commands.acked', (e) => e.commandId === created.command_id);
    expect(timers.fire((t) => t.ms === 45_000)).toBe(1);
    expect(await acked).toMatchObject({ status: 'EXECUTED', via: 'rest' });
    expect(runs).toEqual([created.command_id]);
    expect((await commandRow(created.command_id)).status).toBe('EXECUTED');
    expect(await trail(created.command_id)).toEqual([
      'COMMAND_CREATED',
      'COMMAND_DELIVERED',
      'COMMAND_EXECUTED',
    ]);

    // the gateway is reachable again: the next reconnect attempt gets through, polling stops
    socketUrl = undefined;
    const up = log.next('edge.commands.connected');
    expect(timers.fire((t) => t.ms !== 45_000)).toBeGreaterThanOrEqual(1);
    await up;
    expect(channel!.status().transport).toBe('websocket');
    expect(timers.pending().some((t) => t.ms === 45_000)).toBe(false);
    await channel!.stop();
    expect(timers.pending()).toEqual([]);
    expect(sockets.at(-1)!.readyState).toBe(WebSocket.CLOSED);
  });

  it('UPDATE_CONFIG polls the configuration now; a tampered one fails the command', async () => {
    let tamper = false;
    const tampering: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      const url = input instanceof Request ? input.url : String(input);
      if (!tamper || response.status !== 200 || !url.endsWith('/config')) return response;
      const doc = (await response.json()) as Json;
      const config = { ...(doc.config as Json), currency: 'XXX' };
      return Response.json({ ...doc, config, checksum: contentChecksum(config) });
    };
    const config = createConfigSync({
      store: edge.store,
      cloud: createCloudClient({ baseUrl: gw.url, deviceId, secret, fetch: tampering }),
      publicKeyPem: gw.keys.publicKeyPem,
      timers: manualTimers(),
    });
    await startChannel(defaultCommandHandlers({ config }));
    await log.next('edge.commands.connected');
    const publish = (body: Json) =>
      gw.asUser(gw.adminToken, `/api/v1/config/device/${deviceId}`, {
        method: 'PUT',
        body: JSON.stringify(body),
      });
    await publish({ currency: 'EUR' });
    const first = await create({ command_type: 'UPDATE_CONFIG', payload: { reason: 'new fees' } });
    await log.next('edge.commands.acked', (e) => e.commandId === first.command_id);
    expect(await commandRow(first.command_id)).toMatchObject({
      status: 'EXECUTED',
      result: {
        documents: [
          { name: 'device', outcome: 'applied', etag: expect.any(String) as unknown },
          { name: 'fraud_rules', outcome: 'applied', etag: expect.any(String) as unknown },
        ],
      },
    });
    expect(config.current('device')?.content).toEqual({ currency: 'EUR' });

    await publish({ currency: 'GBP' });
    tamper = true;
    const second = await create({ command_type: 'UPDATE_CONFIG', payload: {} });
    await log.next('edge.commands.acked', (e) => e.commandId === second.command_id);
    const row = await commandRow(second.command_id);
    expect(row.status).toBe('FAILED');
    expect(row.error).toContain('device rejected (CONFIG_TAMPERED)');
    expect(config.current('device')?.content).toEqual({ currency: 'EUR' });
    await config.stop();
  });
});
