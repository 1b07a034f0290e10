/**
 * The edge tier end to end, as real processes on loopback: a cloud (`saffron cloud serve` on
 * PostgreSQL), an edge agent (`saffron edge run` over a SQLite file, running
 * examples/pos/pos_payment.yaml with its fraud-rules WASM step), a POS client calling the
 * agent's local API, and a proxy between agent and cloud standing in for the network.
 *
 * The story of one terminal: provisioned online (the cloud key pinned, the signed config
 * applied, the fraud-rules binary prefetched); the cloud goes down; 500 payments are approved
 * or declined offline by the floor limit while the agent is SIGKILLed mid-stream and
 * restarted (the POS retries with its idempotency keys); the cloud comes back and every
 * workflow completed offline reaches `saf_transactions` exactly once with a signature that
 * verifies, and nothing else does; a configuration with a broken signature is refused while
 * the old one stays in force; `update_workflow` changes the next payments but not a running
 * one; `sync_wasm` fetches and verifies a binary; REBOOT exits for the supervisor and SIGTERM
 * stops cleanly.
 *
 * Every wait is on a condition (a status the agent reports, a command's state in the cloud,
 * a row in a database), never on time.
 */
import { createServer, type Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import {
  definitionHash,
  loadDefinition,
  openStore,
  sha256Hex,
  verifyTransactionRecord,
  type CloudStore,
  asCloud,
} from '../../runtime/index.js';
import { runCli } from '../support/cli.js';
import { startEdgeProxy, type EdgeProxy } from '../support/edgeProxy.js';
import {
  startSaffron,
  stopSaffron,
  waitFor,
  type SaffronProcess,
} from '../support/edgeProcesses.js';
import { adminQuery } from '../support/stores.js';
import { compileWat, WAT_GUESTS } from '../support/wasmGuests.js';

const databaseUrl = process.env.DATABASE_URL;
const examples = fileURLToPath(new URL('../../examples/pos/', import.meta.url));
const DEVICE = 'pos-e2e-1';
const FLOOR = 5000;
const PAYMENTS = Number(process.env.SAFFRON_E2E_PAYMENTS ?? 500);
const KILL_AFTER = Math.floor(PAYMENTS * 0.4);
const POS_CLIENTS = 8;

type Json = Record<string, unknown>;
interface Answer {
  status: number;
  body: Json;
}

describe.runIf(databaseUrl)('edge agent end to end (cloud + agent processes)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'saffron-e2e-'));
  const schema = `saffron_e2e_${process.pid}_${Date.now().toString(36)}`;
  const dbUrl = (() => {
    const url = new URL(databaseUrl ?? 'postgres://localhost/none');
    url.searchParams.set('options', `-c search_path=${schema}`);
    return url.toString();
  })();
  const cloudEnv = {
    SAFFRON_KEYS_DIR: join(dir, 'keys'),
    WASM_STORAGE_DIR: join(dir, 'wasm'),
    DATABASE_URL: '',
  };
  const paths = {
    secret: join(dir, 'device.secret'),
    db: join(dir, 'edge', 'edge.db'),
    token: join(dir, 'edge', 'local-token'),
  };
  let proxy: EdgeProxy;
  let cloud: SaffronProcess | undefined;
  let agent: SaffronProcess | undefined;
  let adminToken = '';
  let secret = '';
  let cloudStore: CloudStore;
  let acquirer: Server;
  let acquirerUrl = '';
  let fraudHash = '';
  /** Workflow ids the POS saw complete while the agent was offline. */
  const completedOffline = new Set<string>();
  /** Workflow ids completed while online (must never become SAF records). */
  const completedOnline = new Set<string>();

  const startCloud = async () => {
    cloud = await startSaffron(['cloud', 'serve', '--port', '0', '--no-worker', '--db', dbUrl], {
      env: cloudEnv,
      cwd: dir,
    });
    proxy.setTarget(cloud.url);
  };
  const stopCloud = async () => {
    proxy.setTarget(undefined);
    expect(await stopSaffron(cloud!)).toBe(0);
    cloud = undefined;
  };
  const startAgent = async () => {
    agent = await startSaffron(
      [
        'edge',
        'run',
        '--device-id',
        DEVICE,
        '--cloud-url',
        proxy.url,
        '--secret-file',
        paths.secret,
        '--db',
        paths.db,
        '--local-port',
        '0',
        '--local-token-file',
        paths.token,
        '--workflows',
        examples,
        '--max-backoff-seconds',
        '1',
        '--sync-jitter-seconds',
        '1',
        '--command-poll-seconds',
        '1',
        '--saf-batch-size',
        '100',
        '--log-level',
        'info',
      ],
      {
        env: {
          SAFFRON_SECRET_ACQUIRER_TOKEN: 'acq-test-token',
          SAFFRON_SECRET_ACQUIRER_TOKEN_HOSTS: '127.0.0.1',
        },
        cwd: dir,
      },
    );
    return agent;
  };

  const admin = async (path: string, init: RequestInit = {}): Promise<Answer> => {
    const res = await fetch(`${cloud!.url}${path}`, {
      ...init,
      headers: {
        authorization: `Bearer ${adminToken}`,
        ...(init.body !== undefined && typeof init.body === 'string'
          ? { 'content-type': 'application/json' }
          : {}),
        ...(init.headers as Record<string, string> | undefined),
      },
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Json) : {} };
  };
  const local = async (path: string, init: RequestInit = {}): Promise<Answer> => {
    const token = readFileSync(paths.token, 'utf8').trim();
    const res = await fetch(`${agent!.url}${path}`, {
      ...init,
      headers: {
        authorization: `Bearer ${token}`,
        ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
    });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const status = async () =>
    (await local('/local/v1/status')).body as {
      online: boolean;
      saf: { pending_count: number };
      config: {
        version: string | null;
        etag: string | null;
        last_rejection: { code: string } | null;
      };
      workflows: { workflow_type: string; workflow_version: string | null; source: string }[];
    };
  const untilOnline = (online: boolean) =>
    waitFor(async () => ((await status()).online === online ? true : undefined));
  const pay = (data: Json, key?: string) =>
    local('/local/v1/workflows', {
      method: 'POST',
      body: JSON.stringify({
        workflow_type: 'pos_payment',
        data,
        ...(key !== undefined ? { idempotency_key: key } : {}),
      }),
    });
  /** Send a command and wait until the cloud has its ack; returns the command. */
  const command = async (command_type: string, payload: Json = {}) => {
    const sent = await admin(`/api/v1/devices/${DEVICE}/commands`, {
      method: 'POST',
      body: JSON.stringify({ command_type, payload }),
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(201);
    const id = sent.body.command_id as string;
    return waitFor(async () => {
      for (const state of ['EXECUTED', 'FAILED']) {
        const list = await admin(`/api/v1/devices/${DEVICE}/commands?status=${state}&limit=500`);
        const found = (list.body.commands as Json[]).find((c) => c.command_id === id);
        if (found) return found;
      }
      return undefined;
    });
  };
  /** Read the agent's SQLite file (read-only, beside the running agent). */
  const edgeDb = <T>(fn: (db: Database.Database) => T): T => {
    const db = new Database(paths.db, { readonly: true, fileMustExist: true });
    try {
      return fn(db);
    } finally {
      db.close();
    }
  };
  const cloudSaf = () =>
    cloudStore.cloud
      .selectFrom('saf_transactions')
      .selectAll()
      .where('device_id', '=', DEVICE)
      .execute();
  const decisionOf = (answer: Answer) =>
    ((answer.body.state as Json).decision as Json | undefined)?.status;

  beforeAll(async () => {
    await adminQuery(`CREATE SCHEMA ${schema}`);
    proxy = await startEdgeProxy();
    acquirer = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const ok = req.headers.authorization === 'Bearer acq-test-token';
        res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify(
            ok
              ? {
                  approved: (JSON.parse(body) as Json).amount_minor !== undefined,
                  authorization_id: randomUUID(),
                }
              : { approved: false, reason: 'UNAUTHORIZED' },
          ),
        );
      });
    });
    await new Promise<void>((resolve) => acquirer.listen(0, '127.0.0.1', resolve));
    acquirerUrl = `http://127.0.0.1:${(acquirer.address() as { port: number }).port}`;
    await startCloud();
    cloudStore = asCloud(await openStore(dbUrl));
    const made = await runCli(
      ['users', 'create', '--name', 'e2e', '--role', 'admin', '--json', '--db', dbUrl],
      {
        env: cloudEnv,
        cwd: dir,
      },
    );
    expect(made.code, made.stderr).toBe(0);
    adminToken = (JSON.parse(made.stdout) as { token: string }).token;
  }, 120_000);

  afterEach((context) => {
    // what the processes said, when a step of the story failed
    if (context.task.result?.state === 'fail')
      process.stderr.write(
        `--- agent stderr (tail) ---\n${agent?.stderr().slice(-6000) ?? ''}\n--- cloud stderr (tail) ---\n${cloud?.stderr().slice(-3000) ?? ''}\n`,
      );
  });

  afterAll(async () => {
    if (agent) await stopSaffron(agent, 'SIGKILL');
    if (cloud) await stopSaffron(cloud);
    await proxy?.close();
    await new Promise((resolve) => acquirer?.close(resolve));
    await cloudStore?.close();
    await adminQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  it('provisions the device: key pinned, signed config applied, fraud-rules binary prefetched', async () => {
    const registered = await admin('/api/v1/devices/register', {
      method: 'POST',
      body: JSON.stringify({
        device_id: DEVICE,
        device_name: 'Till 1',
        device_type: 'POS',
        location: 'Store 7',
      }),
    });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    secret = registered.body.device_secret as string;
    writeFileSync(paths.secret, `${secret}\n`, { mode: 0o600 });

    const guest = await compileWat(readFileSync(join(examples, 'fraud_rules.wat'), 'utf8'));
    fraudHash = guest.hash;
    const yaml = parseYaml(readFileSync(join(examples, 'pos_payment.yaml'), 'utf8')) as {
      steps: { wasm_config?: { wasm_hash: string } }[];
    };
    // the example names the binary its WAT source builds to
    expect(yaml.steps.find((s) => s.wasm_config)?.wasm_config?.wasm_hash).toBe(fraudHash);
    const uploaded = await fetch(
      `${cloud!.url}/api/v1/wasm-components?name=fraud-rules&version_tag=1.0.0`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/wasm' },
        body: guest.bytes,
      },
    );
    expect(uploaded.status).toBe(201);
    const published = await admin(`/api/v1/config/device/${DEVICE}`, {
      method: 'PUT',
      body: JSON.stringify({
        store_and_forward: { max_records: 2000, max_unsent_amount_minor: 50_000_000 },
        config_poll_interval_seconds: 3600,
      }),
    });
    expect(published.status, JSON.stringify(published.body)).toBe(200);

    await startAgent();
    expect(statSync(paths.token).mode & 0o077).toBe(0); // created owner-only
    const unauthorized = await fetch(`${agent!.url}/local/v1/status`);
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get('content-type')).toContain('application/problem+json');
    const ready = await waitFor(async () => {
      const s = await status();
      const cached = edgeDb(
        (db) =>
          db
            .prepare('SELECT binary_data FROM device_wasm_cache WHERE binary_hash = ?')
            .get(fraudHash) as { binary_data: Buffer } | undefined,
      );
      return s.online && s.config.version !== null && cached ? { s, cached } : undefined;
    });
    expect(ready.s.config.version).toBe('f0.t0.d1');
    expect(sha256Hex(new Uint8Array(ready.cached.binary_data))).toBe(fraudHash);
    expect(ready.s.workflows).toContainEqual(
      expect.objectContaining({
        workflow_type: 'pos_payment',
        workflow_version: '1',
        source: 'file',
      }),
    );
  }, 120_000);

  it(`approves and declines ${PAYMENTS} payments offline by the floor limit, through a SIGKILL and restart`, async () => {
    await stopCloud();
    await untilOnline(false);

    const amountOf = (i: number) => ((i * 7919) % 12_000) + 1;
    const answers = new Map<number, Answer>();
    let next = 0;
    let restarted: Promise<void> | undefined;
    let kills = 0;
    let retried = 0;
    const killAndRestart = async () => {
      kills += 1;
      await stopSaffron(agent!, 'SIGKILL');
      await startAgent();
    };
    const client = async () => {
      for (;;) {
        const i = next++;
        if (i >= PAYMENTS) return;
        for (;;) {
          try {
            const answer = await pay(
              {
                amount_minor: amountOf(i),
                currency: 'EUR',
                card: { token: `tok_${i}`, last4: '4242' },
              },
              `e2e-pay-${i}`,
            );
            answers.set(i, answer);
            if (answers.size === KILL_AFTER && !restarted) restarted = killAndRestart();
            break;
          } catch {
            // the agent died under this request: retry the same key once it is back
            retried += 1;
            await waitFor(() => (restarted ? true : undefined));
            await restarted;
          }
        }
      }
    };
    await Promise.all(Array.from({ length: POS_CLIENTS }, client));
    await restarted;
    expect(kills).toBe(1);
    expect(retried).toBeGreaterThan(0); // requests were cut off by the SIGKILL and retried

    const ids = new Set<string>();
    for (let i = 0; i < PAYMENTS; i++) {
      const answer = answers.get(i)!;
      expect([200, 201], JSON.stringify(answer.body)).toContain(answer.status);
      expect(answer.body.status).toBe('COMPLETED');
      const amount = amountOf(i);
      expect(decisionOf(answer), `payment ${i} of ${amount}`).toBe(
        amount <= FLOOR ? 'APPROVED' : 'DECLINED',
      );
      expect(((answer.body.state as Json).decision as Json).mode).toBe('OFFLINE');
      ids.add(answer.body.id as string);
    }
    expect(ids.size).toBe(PAYMENTS); // one workflow per idempotency key, retries included
    for (const id of ids) completedOffline.add(id);
    const edge = edgeDb((db) => ({
      workflows: db
        .prepare(
          "SELECT COUNT(*) AS n FROM workflow_executions WHERE workflow_type = 'pos_payment'",
        )
        .get() as { n: number },
      queued: db
        .prepare(
          'SELECT sequence_number AS s FROM saf_pending_transactions ORDER BY sequence_number',
        )
        .all() as { s: number }[],
    }));
    expect(edge.workflows.n).toBe(PAYMENTS);
    // one record per completed workflow, numbered without gaps: nothing lost to the SIGKILL
    expect(edge.queued.map((r) => r.s)).toEqual(Array.from({ length: PAYMENTS }, (_, i) => i + 1));
    expect((await status()).saf.pending_count).toBe(PAYMENTS);
  }, 300_000);

  it('settles every offline workflow exactly once with a verified signature when the cloud returns', async () => {
    await startCloud();
    await untilOnline(true);
    // online now: a payment goes to the acquirer and completes online (no SAF record)
    const online = await pay({
      amount_minor: 9000,
      currency: 'EUR',
      card: { token: 'tok_online', last4: '1111' },
      acquirer_url: acquirerUrl,
    });
    expect(online.status).toBe(201);
    expect(online.body.status).toBe('COMPLETED');
    expect((online.body.state as Json).decision).toMatchObject({
      status: 'APPROVED',
      mode: 'ONLINE',
    });
    completedOnline.add(online.body.id as string);

    await waitFor(async () => ((await status()).saf.pending_count === 0 ? true : undefined));
    const rows = await cloudSaf();
    expect(rows.length).toBe(completedOffline.size);
    expect(new Set(rows.map((r) => r.idempotency_key))).toEqual(completedOffline);
    for (const row of rows) {
      const record = (typeof row.record === 'string' ? JSON.parse(row.record) : row.record) as Json;
      expect(verifyTransactionRecord([secret], { ...record, signature: row.signature })).toBe(true);
      expect(JSON.stringify(record)).not.toContain(secret);
    }
    for (const id of completedOnline)
      expect(rows.some((r) => r.idempotency_key === id)).toBe(false);
    const synced = edgeDb(
      (db) =>
        db
          .prepare("SELECT COUNT(*) AS n FROM saf_pending_transactions WHERE status = 'SYNCED'")
          .get() as { n: number },
    );
    expect(synced.n).toBe(completedOffline.size);

    // and operators see every workflow the terminal ended, online or offline, once each
    const ended = new Set([...completedOffline, ...completedOnline]);
    const summaries = await waitFor(async () => {
      const held = await cloudStore.db
        .selectFrom('workflow_executions')
        .select(['id', 'status', 'state', 'metadata'])
        .where('owner_id', '=', DEVICE)
        .execute();
      return [...ended].every((id) => held.some((w) => w.id === id)) ? held : undefined;
    });
    for (const row of summaries.filter((w) => ended.has(w.id))) {
      expect(row.status).toBe('COMPLETED');
      expect(cloudStore.codec.parseJson(row.metadata)).toMatchObject({
        source: 'edge',
        device_id: DEVICE,
      });
      expect(cloudStore.codec.parseJson(row.state)).not.toHaveProperty('card');
    }
  }, 120_000);

  it('refuses a configuration with a broken signature and keeps the old one in force', async () => {
    const before = await status();
    proxy.tamperConfig = true;
    // the refused configuration would stop offline payments over 1 minor unit
    const published = await admin(`/api/v1/config/device/${DEVICE}`, {
      method: 'PUT',
      body: JSON.stringify({
        store_and_forward: { max_records: 2000, max_unsent_amount_minor: 1 },
        config_poll_interval_seconds: 3600,
      }),
    });
    expect(published.status).toBe(200);
    const refused = await command('UPDATE_CONFIG');
    expect(refused.status).toBe('FAILED');
    expect(refused.error).toContain('CONFIG_TAMPERED');
    const after = await status();
    expect(after.config.version).toBe(before.config.version);
    expect(after.config.etag).toBe(before.config.etag);
    expect(after.config.last_rejection?.code).toBe('CONFIG_TAMPERED');

    // offline, the old limits still apply: a payment is approved, not declined by the new ones
    proxy.cut();
    await untilOnline(false);
    const paid = await pay({
      amount_minor: 1000,
      currency: 'EUR',
      card: { token: 'tok_c', last4: '2222' },
    });
    expect(paid.status).toBe(201);
    expect(decisionOf(paid)).toBe('APPROVED');
    completedOffline.add(paid.body.id as string);
    proxy.restore();
    await untilOnline(true);

    // untampered, the same configuration is applied, and its limits then decline offline
    proxy.tamperConfig = false;
    expect((await command('UPDATE_CONFIG')).status).toBe('EXECUTED');
    expect((await status()).config.version).toBe('f0.t0.d2');
    proxy.cut();
    await untilOnline(false);
    const declined = await pay({
      amount_minor: 1000,
      currency: 'EUR',
      card: { token: 'tok_d', last4: '3333' },
    });
    expect(declined.status).toBe(409);
    expect(declined.body).toMatchObject({
      code: 'SAF_AMOUNT_LIMIT',
      decision: 'DECLINED',
      status: 409,
    });
    proxy.restore();
    await untilOnline(true);
    await admin(`/api/v1/config/device/${DEVICE}`, {
      method: 'PUT',
      body: JSON.stringify({
        store_and_forward: { max_records: 2000, max_unsent_amount_minor: 50_000_000 },
        config_poll_interval_seconds: 3600,
      }),
    });
    expect((await command('UPDATE_CONFIG')).status).toBe('EXECUTED');
  }, 120_000);

  it('an update_workflow command changes the next payments but not a running one', async () => {
    // a payment the fraud rules send to the cashier waits, on version 1
    const waiting = await pay({
      amount_minor: 3000,
      currency: 'EUR',
      card: { token: 'tok_w', last4: '4444' },
      attempts_last_hour: 3,
    });
    expect(waiting.status).toBe(201);
    expect(waiting.body.status).toBe('WAITING_HUMAN_INPUT');
    expect(waiting.body.workflow_version).toBe('1');

    const v2Yaml = readFileSync(join(examples, 'pos_payment.yaml'), 'utf8')
      .replace("workflow_version: '1'", "workflow_version: '2'")
      .replace('floor_limit_minor: 5000', 'floor_limit_minor: 1000');
    const v2 = await loadDefinition(v2Yaml, { stepsRoot: examples });
    const deployed = await command('update_workflow', {
      workflow_type: 'pos_payment',
      definition_yaml: v2Yaml,
      definition_hash: definitionHash(v2.definition),
    });
    expect(deployed.status, String(deployed.error)).toBe('EXECUTED');
    expect(deployed.result).toMatchObject({ workflow_version: '2', changed: true });
    expect((await status()).workflows).toContainEqual(
      expect.objectContaining({
        workflow_type: 'pos_payment',
        workflow_version: '2',
        source: 'command',
      }),
    );

    proxy.cut();
    await untilOnline(false);
    const next = await pay({
      amount_minor: 3000,
      currency: 'EUR',
      card: { token: 'tok_n', last4: '5555' },
    });
    expect(next.body.workflow_version).toBe('2');
    expect((next.body.state as Json).decision).toMatchObject({
      status: 'DECLINED',
      reason: 'OVER_FLOOR_LIMIT',
    });
    completedOffline.add(next.body.id as string);

    const resumed = await local(`/local/v1/workflows/${waiting.body.id as string}/resume`, {
      method: 'POST',
      body: JSON.stringify({ input: { approved: true } }),
    });
    expect(resumed.status).toBe(200);
    expect(resumed.body.workflow_version).toBe('1');
    expect((resumed.body.state as Json).decision).toMatchObject({
      status: 'APPROVED',
      mode: 'OFFLINE',
    });
    completedOffline.add(resumed.body.id as string);
    const read = await local(`/local/v1/workflows/${waiting.body.id as string}`);
    expect(read.body.status).toBe('COMPLETED');

    proxy.restore();
    await untilOnline(true);
    await waitFor(async () => ((await status()).saf.pending_count === 0 ? true : undefined));
  }, 120_000);

  it('a sync_wasm command fetches and verifies a binary', async () => {
    const guest = await compileWat(WAT_GUESTS.echo);
    const uploaded = await fetch(
      `${cloud!.url}/api/v1/wasm-components?name=echo&version_tag=0.1.0`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/wasm' },
        body: guest.bytes,
      },
    );
    expect(uploaded.status).toBe(201);
    const cachedRow = () =>
      edgeDb(
        (db) =>
          db
            .prepare('SELECT binary_data FROM device_wasm_cache WHERE binary_hash = ?')
            .get(guest.hash) as { binary_data: Buffer } | undefined,
      );

    proxy.corruptWasm = true; // a flipped byte on the way: the hash check refuses it
    const refused = await command('sync_wasm', { binary_hash: guest.hash });
    expect(refused.status).toBe('FAILED');
    expect(cachedRow()).toBeUndefined();
    proxy.corruptWasm = false;

    const fetched = await command('sync_wasm', { binary_hash: guest.hash });
    expect(fetched.status).toBe('EXECUTED');
    expect(fetched.result).toMatchObject({ binary_hash: guest.hash, outcome: 'downloaded' });
    expect(sha256Hex(new Uint8Array(cachedRow()!.binary_data))).toBe(guest.hash);
    const again = await command('sync_wasm', { binary_hash: guest.hash });
    expect(again.result).toMatchObject({ outcome: 'cached' });

    const diagnostic = await command('DIAGNOSTIC', { checks: ['config'] });
    expect(diagnostic.status).toBe('EXECUTED');
    expect(diagnostic.result).toMatchObject({
      metrics: { pending_transactions: 0, network_available: true },
    });
  }, 120_000);

  it('settles exactly the workflows completed offline, then REBOOT exits for the supervisor and SIGTERM stops cleanly', async () => {
    const rows = await cloudSaf();
    expect(new Set(rows.map((r) => r.idempotency_key))).toEqual(completedOffline);
    expect(rows.length).toBe(completedOffline.size);

    const reboot = await command('REBOOT', { reason: 'e2e' });
    expect(reboot.status).toBe('EXECUTED');
    expect(await agent!.exited).toBe(75);
    await startAgent();
    await untilOnline(true);
    expect(await stopSaffron(agent!)).toBe(0);
    agent = undefined;
  }, 120_000);
});
