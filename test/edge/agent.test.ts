/**
 * The edge agent in-process, over a real SQLite file and its local API on loopback:
 *
 * - offline (its cloud URL points at a port nothing listens on): the local API's token file,
 *   authentication and problem+json codes; payments driven until they are no longer ACTIVE
 *   and decided by the floor limit, each offline completion queued as a SAF record in the
 *   same commit; idempotency keys; a cashier review that waits and resumes;
 * - with a cloud (an in-process gateway): workflow definitions carried by the signed
 *   configuration are hot-deployed, a configuration whose workflow does not load is refused
 *   while the last good one stays, a hot-deployed definition survives a restart and wins
 *   over the installed file without being undone by the configuration applied again at
 *   start, REBOOT runs the restart hook only once the cloud has the ack, and SYNC_TRANSACTIONS
 *   hands `since_sequence` and `max_records` to the uploader and acks what it sent.
 *
 * Waits are on the agent's log events and on what the cloud records, never on time.
 */
import { createServer } from 'node:net';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../actors/index.js';
import {
  createEdgeAgent,
  createLocalApi,
  createSafRecorder,
  loadLocalToken,
  type AgentLogEntry,
  type EdgeAgent,
  type EdgeAgentOptions,
  type LocalApi,
  type RestartRequest,
} from '../../edge/index.js';
import { ephemeralKeyring } from '../../gateway/index.js';
import { cacheWasmBinary, ensureEdgeSchema, openStore } from '../../runtime/index.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CLOUD_DIALECTS } from '../support/stores.js';
import { definition, ENGINE_STEPS } from '../support/engine.js';
import { compileWat } from '../support/wasmGuests.js';

const examples = fileURLToPath(new URL('../../examples/pos/', import.meta.url));
type Json = Record<string, unknown>;

/** The agent's log entries, with waits for the ones to come. */
interface AgentEvents {
  /** The first entry (seen or to come) named `event` that `match` accepts. */
  next(event: string, match?: (entry: AgentLogEntry) => boolean): Promise<AgentLogEntry>;
  push(entry: AgentLogEntry): void;
}

function agentEvents(): AgentEvents {
  const seen: AgentLogEntry[] = [];
  const waiters: { test: (e: AgentLogEntry) => boolean; resolve: (e: AgentLogEntry) => void }[] =
    [];
  return {
    push(entry) {
      seen.push(entry);
      for (const waiter of [...waiters])
        if (waiter.test(entry)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(entry);
        }
    },
    next(event, match = () => true) {
      const test = (e: AgentLogEntry) => e.event === event && match(e);
      const found = seen.find(test);
      if (found) return Promise.resolve(found);
      return new Promise((resolve) => waiters.push({ test, resolve }));
    },
  };
}

/** A port on loopback that nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A workflows folder: the POS example and a one-step `note` workflow. */
function workflowsFolder(dir: string): string {
  const folder = join(dir, 'workflows');
  mkdirSync(folder, { recursive: true });
  for (const file of ['pos_payment.yaml', 'pos.js'])
    copyFileSync(join(examples, file), join(folder, file));
  writeFileSync(
    join(folder, 'extra.js'),
    'export function note(state) { return { noted: true }; }\n',
  );
  writeFileSync(
    join(folder, 'note.yaml'),
    "workflow_type: note\nworkflow_version: '1'\nsteps:\n  - name: note\n    type: STANDARD\n    function: extra.note\n",
  );
  return folder;
}

/** The POS example's fraud-rules binary in a fresh edge database (as if fetched online earlier). */
async function seedDatabase(dbPath: string): Promise<void> {
  const guest = await compileWat(readFileSync(join(examples, 'fraud_rules.wat'), 'utf8'));
  const store = await openStore(dbPath);
  await ensureEdgeSchema(store);
  await cacheWasmBinary(store, guest.bytes, new Date());
  await store.close();
}

/** `n` payments completed offline in the edge database at `dbPath`, queued as SAF records. */
async function queueOfflineRecords(
  dbPath: string,
  device: { deviceId: string; deviceSecret: string },
  n: number,
): Promise<void> {
  const payment = await definition(
    "workflow_type: card_payment\nworkflow_version: '1'\nautomate_next: true\nsteps:\n  - { name: approve, type: STANDARD, function: steps.noop }\n",
  );
  const store = await openStore(dbPath);
  const recorder = createSafRecorder({
    ...device,
    isOnline: () => false,
    cardKey: Buffer.alloc(32, 6),
  });
  const runtime = createRuntime({ store, stepsRoot: ENGINE_STEPS, onSettled: recorder.onSettled });
  try {
    for (let i = 1; i <= n; i++)
      expect(
        (await runtime.start(payment, { amount_minor: 100 * i, currency: 'EUR' })).status,
      ).toBe('COMPLETED');
  } finally {
    await runtime.close();
    await store.close();
  }
}

interface Harness {
  agent: EdgeAgent;
  log: AgentEvents;
}

function startAgent(options: Omit<EdgeAgentOptions, 'log'>): Harness {
  const log = agentEvents();
  const agent = createEdgeAgent({ ...options, log: (entry) => log.push(entry) });
  return { agent, log };
}

describe('edge agent offline, through its local API', () => {
  const dir = mkdtempSync(join(tmpdir(), 'saffron-agent-'));
  const tokenFile = join(dir, 'local-token');
  let harness: Harness;
  let api: LocalApi;
  let url = '';
  let token = '';

  const call = async (path: string, init: RequestInit & { token?: string | null } = {}) => {
    const auth: Record<string, string> =
      init.token === null ? {} : { authorization: `Bearer ${init.token ?? token}` };
    const res = await fetch(`${url}${path}`, {
      ...init,
      headers: {
        ...auth,
        ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
    });
    return {
      status: res.status,
      type: res.headers.get('content-type'),
      headers: res.headers,
      body: (await res.json()) as Json,
    };
  };
  const run = (body: Json) =>
    call('/local/v1/workflows', { method: 'POST', body: JSON.stringify(body) });
  const payment = (amount: number, extra: Json = {}) => ({
    workflow_type: 'pos_payment',
    data: {
      amount_minor: amount,
      currency: 'EUR',
      card: { token: `tok_${amount}`, last4: '4242' },
      ...extra,
    },
  });

  beforeAll(async () => {
    const folder = workflowsFolder(dir);
    const dbPath = join(dir, 'edge.db');
    await seedDatabase(dbPath);
    const loaded = loadLocalToken(tokenFile);
    expect(loaded).toMatchObject({ created: true, exposed: false });
    token = loaded.token;
    harness = startAgent({
      deviceId: 'pos-agent-1',
      deviceSecret: 'agent-test-secret-0123456789abcdef',
      cloudUrl: `http://127.0.0.1:${await closedPort()}`,
      dbPath,
      cardKey: Buffer.alloc(32, 3),
      stepsRoot: folder,
      workflowDirs: [folder],
      cloudPublicKeyPem: ephemeralKeyring().publicKeyPem,
      walIdleCheckMs: 50,
    });
    await harness.agent.start();
    api = createLocalApi({ agent: harness.agent, token });
    url = await api.listen(0);
  }, 60_000);

  afterAll(async () => {
    await api?.close();
    await harness?.agent.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps its token in an owner-only file and refuses requests without it', async () => {
    expect(statSync(tokenFile).mode & 0o077).toBe(0);
    expect(loadLocalToken(tokenFile)).toMatchObject({ token, created: false }); // reused
    for (const bad of [null, 'wrong-token-0123456789', `${token}x`]) {
      const answer = await call('/local/v1/status', { token: bad });
      expect(answer.status).toBe(401);
      expect(answer.type).toContain('application/problem+json');
      expect(answer.headers.get('www-authenticate')).toBe('Bearer');
      expect(answer.body).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
    }
    const status = await call('/local/v1/status');
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ device_id: 'pos-agent-1', online: false, running: true });
  });

  it('decides payments by the floor limit offline, each queued as a SAF record with its completion', async () => {
    const before = (await call('/local/v1/status')).body.saf as { pending_count: number };
    const approved = await run(payment(5000));
    expect(approved.status).toBe(201);
    expect(approved.body).toMatchObject({ status: 'COMPLETED', workflow_type: 'pos_payment' });
    const state = approved.body.state as Json;
    expect(state.decision).toMatchObject({ status: 'APPROVED', mode: 'OFFLINE' });
    expect(state.edge).toEqual({ online: false, device_id: 'pos-agent-1' });
    const declined = await run(payment(5001));
    expect((declined.body.state as Json).decision).toMatchObject({
      status: 'DECLINED',
      reason: 'OVER_FLOOR_LIMIT',
    });
    const after = (await call('/local/v1/status')).body.saf as {
      pending_count: number;
      pending_amount_minor: number;
    };
    expect(after.pending_count).toBe(before.pending_count + 2);
    const read = await call(`/local/v1/workflows/${approved.body.id as string}`);
    expect(read.body).toMatchObject({ id: approved.body.id, status: 'COMPLETED' });
  });

  it('checkpoints its database log once idle', async () => {
    const paid = await run(payment(700));
    expect(paid.body).toMatchObject({ status: 'COMPLETED' });
    // the payment's pages are copied over once a whole look period went by without a write
    const done = await harness.log.next('edge.wal.checkpointed', (e) =>
      /: [1-9]\d* of [1-9]\d* page\(s\)$/.test(e.msg),
    );
    expect(done.level).toBe('debug');
  });

  it('answers a repeated idempotency key with the first workflow, and refuses it for another type', async () => {
    const first = await run({ ...payment(1200), idempotency_key: 'till-1-0001' });
    expect(first.status).toBe(201);
    const again = await run({ ...payment(1200), idempotency_key: 'till-1-0001' });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.body.id);
    const other = await run({ workflow_type: 'note', data: {}, idempotency_key: 'till-1-0001' });
    expect(other.status).toBe(409);
    expect(other.body.code).toBe('IDEMPOTENCY_CONFLICT');
  });

  it('refuses bad requests with stable problem codes, never echoing card data', async () => {
    const missing = await run({ data: {} });
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ code: 'INVALID_REQUEST' });
    expect(missing.body.errors).toContainEqual(
      expect.objectContaining({ path: 'body.workflow_type' }),
    );
    const unknownKey = await run({ workflow_type: 'note', datta: {} });
    expect(unknownKey.body.code).toBe('INVALID_REQUEST');
    const malformed = await call('/local/v1/workflows', {
      method: 'POST',
      body: '{"workflow_type":',
    });
    expect(malformed).toMatchObject({ status: 400, body: { code: 'MALFORMED_JSON' } });
    expect((await run({ workflow_type: 'nope', data: {} })).body).toMatchObject({
      status: 404,
      code: 'WORKFLOW_TYPE_UNKNOWN',
    });
    expect((await run(payment(100, { edge: { online: true } }))).body).toMatchObject({
      status: 422,
      code: 'RESERVED_DATA_KEY',
    });
    const pan = '4111111111111111';
    const clear = await run({
      workflow_type: 'pos_payment',
      data: { amount_minor: 100, card: { number: pan } },
    });
    expect(clear.body).toMatchObject({ status: 422, code: 'CARD_DATA_IN_CLEAR' });
    expect(JSON.stringify(clear.body)).not.toContain(pan);
    expect(JSON.stringify(clear.body)).toContain('data.card.number');
    const unknownId = await call('/local/v1/workflows/5f0c8a4e-1b7d-4b52-9e57-2f0f4e0d3c11');
    expect(unknownId.body).toMatchObject({ status: 404, code: 'WORKFLOW_NOT_FOUND' });
    expect((await call('/local/v1/workflows/not-a-uuid')).status).toBe(404);
    const done = await run({ workflow_type: 'note', data: {} });
    const notWaiting = await call(`/local/v1/workflows/${done.body.id as string}/resume`, {
      method: 'POST',
      body: JSON.stringify({ input: {} }),
    });
    expect(notWaiting.body).toMatchObject({ status: 409, code: 'WORKFLOW_NOT_WAITING' });
    expect((await call('/local/v1/nothing')).body).toMatchObject({
      status: 404,
      code: 'NOT_FOUND',
    });
  });

  it('waits for the cashier on a fraud review and runs on when resumed', async () => {
    const waiting = await run(payment(3000, { attempts_last_hour: 3 }));
    expect(waiting.body).toMatchObject({
      status: 'WAITING_HUMAN_INPUT',
      current_step: 'cashier_review',
    });
    expect((waiting.body.state as Json).fraud_decision).toBe('review');
    const resumed = await call(`/local/v1/workflows/${waiting.body.id as string}/resume`, {
      method: 'POST',
      body: JSON.stringify({ input: { approved: true } }),
    });
    expect(resumed.status).toBe(200);
    expect(resumed.body.status).toBe('COMPLETED');
    expect((resumed.body.state as Json).decision).toMatchObject({
      status: 'APPROVED',
      mode: 'OFFLINE',
    });
    const declinedByRules = await run(payment(150_000, { attempts_last_hour: 3 }));
    expect((declinedByRules.body.state as Json).decision).toMatchObject({
      status: 'DECLINED',
      mode: 'FRAUD_RULES',
    });
  });
});

describe('edge agent with the threads executor', () => {
  it('runs the POS payment with step functions on worker threads', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'saffron-agent-threads-'));
    const folder = workflowsFolder(dir);
    const dbPath = join(dir, 'edge.db');
    await seedDatabase(dbPath);
    const { agent } = startAgent({
      deviceId: 'pos-agent-threads',
      deviceSecret: 'agent-test-secret-0123456789abcdef',
      cloudUrl: `http://127.0.0.1:${await closedPort()}`,
      dbPath,
      cardKey: Buffer.alloc(32, 4),
      stepsRoot: folder,
      workflowDirs: [folder],
      executor: 'threads',
      cloudPublicKeyPem: ephemeralKeyring().publicKeyPem,
    });
    await agent.start();
    try {
      const outcome = await agent.runWorkflow({
        workflowType: 'pos_payment',
        data: { amount_minor: 700, currency: 'EUR', card: { token: 'tok_t', last4: '4242' } },
      });
      expect(outcome).toMatchObject({
        kind: 'ran',
        created: true,
        record: { status: 'COMPLETED' },
      });
      if (outcome.kind === 'ran')
        expect(outcome.record.state.decision).toMatchObject({
          status: 'APPROVED',
          mode: 'OFFLINE',
        });
      expect((await agent.status()).saf.pending_count).toBe(1);
    } finally {
      await agent.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('edge agent with a cloud: hot-deployed definitions and REBOOT', () => {
  const dir = mkdtempSync(join(tmpdir(), 'saffron-agent-cloud-'));
  let gw: TestGateway;
  let secret = '';
  const deviceId = 'pos-agent-cloud-1';
  const dbPath = join(dir, 'edge.db');
  let folder = '';
  const noteYaml = (version: string) =>
    `workflow_type: note\nworkflow_version: '${version}'\nsteps:\n  - name: note\n    type: STANDARD\n    function: extra.note\n`;
  const publish = async (config: Json) => {
    const res = await gw.asUser(gw.adminToken, `/api/v1/config/device/${deviceId}`, {
      method: 'PUT',
      body: JSON.stringify(config),
    });
    expect(res.status, await res.clone().text()).toBe(200);
  };
  const send = async (command_type: string, payload: Json = {}, device = deviceId) => {
    const res = await gw.asUser(gw.adminToken, `/api/v1/devices/${device}/commands`, {
      method: 'POST',
      body: JSON.stringify({ command_type, payload }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { command_id: string }).command_id;
  };
  const options = (extra: Partial<EdgeAgentOptions> = {}) => ({
    deviceId,
    deviceSecret: secret,
    cloudUrl: gw.url,
    dbPath,
    cardKey: Buffer.alloc(32, 5),
    stepsRoot: folder,
    workflowDirs: [folder],
    cloudPublicKeyPem: gw.keys.publicKeyPem,
    maxBackoffMs: 1_000,
    ...extra,
  });
  const noteVersion = async (agent: EdgeAgent) =>
    (await agent.status()).workflows.find((w) => w.workflow_type === 'note');

  beforeAll(async () => {
    gw = await startTestGateway(CLOUD_DIALECTS[0]!);
    secret = await gw.insertDevice(deviceId);
    folder = workflowsFolder(dir);
    await seedDatabase(dbPath);
  }, 60_000);
  afterAll(async () => {
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('deploys definitions from the signed configuration, refuses one that does not load, and keeps a newer update_workflow across restarts', async () => {
    await publish({ workflows: { note: { definition_yaml: noteYaml('2') } } });
    const first = startAgent(options());
    await first.agent.start();
    await first.log.next('edge.workflow.deployed');
    expect(await noteVersion(first.agent)).toMatchObject({
      workflow_version: '2',
      source: 'config',
    });
    const v2 = await first.agent.runWorkflow({ workflowType: 'note', data: {} });
    expect(v2).toMatchObject({
      kind: 'ran',
      record: { workflowVersion: '2', status: 'COMPLETED' },
    });

    // a configuration whose workflow names a function that does not exist is refused whole
    await publish({
      workflows: {
        note: { definition_yaml: noteYaml('3').replace('extra.note', 'extra.missing') },
      },
      config_poll_interval_seconds: 600,
    });
    const refusedId = await send('UPDATE_CONFIG');
    const refused = await first.log.next(
      'edge.commands.executed',
      (e) => e.command_id === refusedId,
    );
    expect(refused.status).toBe('FAILED');
    const status = await first.agent.status();
    expect(status.config.last_rejection).toMatchObject({
      code: 'CONFIG_SCHEMA_INVALID',
      config_name: 'device',
    });
    expect(await noteVersion(first.agent)).toMatchObject({ workflow_version: '2' });

    // update_workflow deploys version 4; a hash that does not match is refused
    const badHash = await send('update_workflow', {
      workflow_type: 'note',
      definition_yaml: noteYaml('4'),
      definition_hash: '0'.repeat(64),
    });
    expect(
      (await first.log.next('edge.commands.executed', (e) => e.command_id === badHash)).status,
    ).toBe('FAILED');
    const deployId = await send('update_workflow', {
      workflow_type: 'note',
      definition_yaml: noteYaml('4'),
    });
    expect(
      (await first.log.next('edge.commands.executed', (e) => e.command_id === deployId)).status,
    ).toBe('EXECUTED');
    expect(await noteVersion(first.agent)).toMatchObject({
      workflow_version: '4',
      source: 'command',
    });
    await first.agent.stop();

    // restarted: the configuration (still version 2 of note) is applied again from the cache
    // and from the cloud, but version 4 stays: the configuration did not change the workflow
    await publish({
      workflows: { note: { definition_yaml: noteYaml('2') } },
      config_poll_interval_seconds: 600,
    });
    const second = startAgent(options());
    await second.agent.start();
    await second.log.next('edge.config.applied', (e) => e.name === 'device');
    expect(await noteVersion(second.agent)).toMatchObject({
      workflow_version: '4',
      source: 'command',
    });
    const v4 = await second.agent.runWorkflow({ workflowType: 'note', data: {} });
    expect(v4).toMatchObject({ kind: 'ran', record: { workflowVersion: '4' } });

    // a configuration that changes the definition does replace it
    await publish({
      workflows: { note: { definition_yaml: noteYaml('5') } },
      config_poll_interval_seconds: 600,
    });
    const applyId = await send('UPDATE_CONFIG');
    expect(
      (await second.log.next('edge.commands.executed', (e) => e.command_id === applyId)).status,
    ).toBe('EXECUTED');
    expect(await noteVersion(second.agent)).toMatchObject({
      workflow_version: '5',
      source: 'config',
    });
    await second.agent.stop();
  }, 60_000);

  it('REBOOT runs the restart hook only after the cloud has the ack', async () => {
    let restart: (request: RestartRequest) => void = () => undefined;
    const requested = new Promise<RestartRequest>((resolve) => (restart = resolve));
    const harness = startAgent(options({ onRestart: (request) => restart(request) }));
    await harness.agent.start();
    try {
      const id = await send('REBOOT', { reason: 'test' });
      const request = await requested;
      expect(request).toEqual({ commandId: id, reason: 'test', delaySeconds: 0 });
      const row = await gw.handle.store.cloud
        .selectFrom('device_commands')
        .select(['status'])
        .where('command_id', '=', id)
        .executeTakeFirstOrThrow();
      expect(row.status).toBe('EXECUTED');
    } finally {
      await harness.agent.stop();
    }
  }, 60_000);

  it('SYNC_TRANSACTIONS hands since_sequence and max_records to the uploader and acks what it sent', async () => {
    const device = { deviceId: 'pos-agent-cloud-sync', deviceSecret: '' };
    device.deviceSecret = await gw.insertDevice(device.deviceId);
    const syncDb = join(dir, 'sync.db');
    await seedDatabase(syncDb);
    await queueOfflineRecords(syncDb, device, 3);
    const harness = startAgent(options({ ...device, dbPath: syncDb }));
    await harness.agent.start();
    try {
      await harness.log.next('edge.sync.ack'); // the start-up round uploads all three
      expect((await harness.agent.status()).saf.pending_count).toBe(0);
      const id = await send(
        'SYNC_TRANSACTIONS',
        { since_sequence: 2, max_records: 1 },
        device.deviceId,
      );
      await harness.log.next('edge.commands.acked', (e) => e.command_id === id);
      const row = await gw.handle.store.cloud
        .selectFrom('device_commands')
        .select(['status', 'result'])
        .where('command_id', '=', id)
        .executeTakeFirstOrThrow();
      expect(row.status).toBe('EXECUTED');
      expect(gw.handle.store.codec.parseJson(row.result)).toEqual({
        uploaded: 1,
        synced: 1,
        duplicates: 1,
        rejected: 0,
        remaining: 0,
        from_sequence: 2,
        highest_sequence_sent: 2,
        skipped_rejected: 0,
        lowest_held_sequence: 1,
        highest_held_sequence: 3,
      });
    } finally {
      await harness.agent.stop();
    }
  }, 60_000);
});
