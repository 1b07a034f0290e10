/**
 * A terminal trusts only what it can verify: a real gateway and real edge agents (in this
 * process, and `saffron edge run` as a process), with a small HTTP proxy standing for a
 * network path that is not trusted. Each attack below worked before commands and definitions
 * were signed: the agent ran whatever its channel handed it.
 *
 * - a workflow definition written into the database rather than through the API (a command
 *   row, a configuration layer) is refused: DEFINITION_SIGNATURE_INVALID, nothing installed;
 * - a command altered in flight, stripped of its signature, or signed for another device is
 *   not run: acked FAILED with COMMAND_SIGNATURE_INVALID;
 * - a definition held for approval is signed when accepted, so it installs once released;
 * - with a wrong provisioned cloud key the agent refuses the cloud's configuration and
 *   commands; with the right one (in the form the cloud publishes it) it takes them; a key
 *   pinned blind that differs from the provisioned one stops the agent from starting;
 * - `saffron edge run` refuses a plain-HTTP cloud URL to a host that is not loopback.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createEdgeAgent,
  isLoopbackHost,
  parseCloudPublicKey,
  type AgentLogEntry,
  type EdgeAgent,
  type EdgeAgentOptions,
} from '../../edge/index.js';
import { ephemeralKeyring } from '../../gateway/index.js';
import { runCli } from '../support/cli.js';
import { startSaffron, stopSaffron, waitFor } from '../support/edgeProcesses.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

type Json = Record<string, unknown>;

const noteYaml = (version: string) =>
  `workflow_type: note\nworkflow_version: '${version}'\nsteps:\n  - name: note\n    type: STANDARD\n    function: extra.note\n`;

/** A folder with the `note` workflow (version 1) and its step module. */
function workflowsFolder(dir: string): string {
  const folder = join(dir, 'workflows');
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'extra.js'), 'export function note() { return { noted: true }; }\n');
  writeFileSync(join(folder, 'note.yaml'), noteYaml('1'));
  return folder;
}

/** An agent's log entries, and a way to wait for one. */
interface AgentLog {
  entries: AgentLogEntry[];
  push(entry: AgentLogEntry): void;
  /** The first entry (past or future) of `event` that `match` accepts. */
  next(event: string, match?: (entry: AgentLogEntry) => boolean): Promise<AgentLogEntry>;
}

function agentLog(): AgentLog {
  const entries: AgentLogEntry[] = [];
  const waiters: { accepts(e: AgentLogEntry): boolean; resolve(e: AgentLogEntry): void }[] = [];
  return {
    entries,
    push(entry) {
      entries.push(entry);
      for (const waiter of [...waiters])
        if (waiter.accepts(entry)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(entry);
        }
    },
    next(event, match = () => true) {
      const accepts = (e: AgentLogEntry) => e.event === event && match(e);
      const found = entries.find(accepts);
      if (found) return Promise.resolve(found);
      return new Promise((resolve) => waiters.push({ accepts, resolve }));
    },
  };
}

/**
 * A network path between an agent and its cloud that is not trusted: it forwards HTTP
 * requests as they are, refuses socket upgrades (so commands come by polling, through it),
 * and may rewrite the commands of a poll answer on their way to the device.
 */
interface RewritingProxy {
  url: string;
  /** Applied to the `commands` of every poll answer while set. */
  rewrite: ((commands: Json[]) => Json[]) | undefined;
  close(): Promise<void>;
}

const POLL_PATH = /^\/api\/v1\/devices\/[^/]+\/commands$/;

async function startRewritingProxy(target: string): Promise<RewritingProxy> {
  const sockets = new Set<Socket>();
  const proxy: RewritingProxy = { url: '', rewrite: undefined, close: () => Promise.resolve() };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers))
        if (typeof value === 'string' && !['host', 'connection', 'content-length'].includes(name))
          headers[name] = value;
      const body = Buffer.concat(chunks);
      void fetch(`${target}${req.url ?? '/'}`, {
        method: req.method ?? 'GET',
        headers,
        ...(body.length > 0 ? { body } : {}),
      })
        .then(async (upstream) => {
          let out = Buffer.from(await upstream.arrayBuffer());
          const path = (req.url ?? '/').split('?')[0]!;
          if (proxy.rewrite && req.method === 'GET' && POLL_PATH.test(path) && upstream.ok) {
            const answer = JSON.parse(out.toString('utf8')) as { commands: Json[] };
            out = Buffer.from(JSON.stringify({ commands: proxy.rewrite(answer.commands) }));
          }
          const headersOut: Record<string, string> = {};
          upstream.headers.forEach((value, name) => {
            if (!['content-length', 'content-encoding', 'transfer-encoding'].includes(name))
              headersOut[name] = value;
          });
          res.writeHead(upstream.status, headersOut);
          res.end(out);
        })
        .catch(() => res.destroy());
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('upgrade', (_req, socket: Socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  proxy.url = `http://127.0.0.1:${port}`;
  proxy.close = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  };
  return proxy;
}

describe('a terminal trusts only what it can verify', () => {
  const dir = mkdtempSync(join(tmpdir(), 'saffron-trusted-'));
  const folder = workflowsFolder(dir);
  let gw: TestGateway;
  let proxy: RewritingProxy;
  const running = new Set<EdgeAgent>();

  const startAgent = async (
    deviceId: string,
    secret: string,
    { provisioned = true, ...extra }: Partial<EdgeAgentOptions> & { provisioned?: boolean } = {},
  ): Promise<{ agent: EdgeAgent; log: AgentLog }> => {
    const log = agentLog();
    const agent = createEdgeAgent({
      deviceId,
      deviceSecret: secret,
      cloudUrl: proxy.url,
      dbPath: join(dir, `${deviceId}.db`),
      cardKey: Buffer.alloc(32, 9),
      stepsRoot: folder,
      workflowDirs: [folder],
      ...(provisioned ? { cloudPublicKeyPem: gw.keys.publicKeyPem } : {}),
      commandPollIntervalMs: 100,
      maxBackoffMs: 2_000,
      log: (entry) => log.push(entry),
      ...extra,
    });
    await agent.start();
    running.add(agent);
    return { agent, log };
  };
  const stopAgent = async (agent: EdgeAgent) => {
    running.delete(agent);
    await agent.stop();
  };
  const send = async (deviceId: string, command_type: string, payload: Json = {}) => {
    const res = await gw.asUser(gw.adminToken, `/api/v1/devices/${deviceId}/commands`, {
      method: 'POST',
      body: JSON.stringify({ command_type, payload }),
    });
    expect(res.status, await res.clone().text()).toBe(201);
    return ((await res.json()) as { command_id: string }).command_id;
  };
  /** The outcome the agent logged for `commandId`, once the cloud has its ack. */
  const outcome = async (log: AgentLog, commandId: string) => {
    const executed = await log.next('edge.commands.executed', (e) => e.command_id === commandId);
    await Promise.race([
      log.next('edge.commands.acked', (e) => e.command_id === commandId),
      log.next('edge.commands.ack_refused', (e) => e.msg.includes(commandId)),
    ]);
    return { status: executed.status, msg: executed.msg };
  };
  const noteVersion = async (agent: EdgeAgent) =>
    (await agent.status()).workflows.find((w) => w.workflow_type === 'note')?.workflow_version;
  const cloudCommand = (commandId: string) =>
    gw.handle.store.cloud
      .selectFrom('device_commands')
      .select(['status', 'result'])
      .where('command_id', '=', commandId)
      .executeTakeFirstOrThrow();

  beforeAll(async () => {
    gw = await startTestGateway(CLOUD_DIALECTS[0]!);
    proxy = await startRewritingProxy(gw.url);
  }, 60_000);
  afterAll(async () => {
    for (const agent of running) await agent.stop();
    await proxy?.close();
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a definition written into the database instead of sent through the API, and installs the same one sent through the API', async () => {
    const deviceId = 'trusted-db-row';
    const secret = await gw.insertDevice(deviceId);
    const { agent, log } = await startAgent(deviceId, secret);

    // "an operator deploys new code paths" without the API: the delivery is signed, the
    // definition is not
    const commandId = randomUUID();
    await gw.handle.store.cloud
      .insertInto('device_commands')
      .values({
        command_id: commandId,
        device_id: deviceId,
        command_type: 'update_workflow',
        payload: JSON.stringify({ workflow_type: 'note', definition_yaml: noteYaml('9') }),
      })
      .execute();
    const refused = await outcome(log, commandId);
    expect(refused.status).toBe('FAILED');
    expect(refused.msg).toContain('DEFINITION_SIGNATURE_INVALID');
    expect(await noteVersion(agent)).toBe('1');
    expect(await cloudCommand(commandId)).toMatchObject({
      status: 'FAILED',
      result: { code: 'DEFINITION_SIGNATURE_INVALID' },
    });

    // the same definition through the API is signed when accepted, and installed
    const sent = await send(deviceId, 'update_workflow', {
      workflow_type: 'note',
      definition_yaml: noteYaml('9'),
    });
    expect((await outcome(log, sent)).status).toBe('EXECUTED');
    expect(await noteVersion(agent)).toBe('9');
    await stopAgent(agent);
  }, 60_000);

  it('does not run a command altered in flight, stripped of its signature, or signed for another device', async () => {
    const deviceId = 'trusted-in-flight';
    const secret = await gw.insertDevice(deviceId);
    const { agent, log } = await startAgent(deviceId, secret);
    try {
      // the attacker swaps the definition and keeps every signature
      proxy.rewrite = (commands) =>
        commands.map((c) => ({
          ...c,
          payload: { ...(c.payload as Json), definition_yaml: noteYaml('66') },
        }));
      const altered = await send(deviceId, 'update_workflow', {
        workflow_type: 'note',
        definition_yaml: noteYaml('2'),
      });
      const alteredOutcome = await outcome(log, altered);
      expect(alteredOutcome.status).toBe('FAILED');
      expect(alteredOutcome.msg).toContain('COMMAND_SIGNATURE_INVALID');

      // no signature at all (what an agent saw before commands were signed)
      proxy.rewrite = (commands) => commands.map(({ signature: _signature, ...c }) => c);
      const stripped = await send(deviceId, 'DIAGNOSTIC', { checks: ['metrics'] });
      const strippedOutcome = await outcome(log, stripped);
      expect(strippedOutcome.status).toBe('FAILED');
      expect(strippedOutcome.msg).toContain('COMMAND_SIGNATURE_INVALID');
      expect(await cloudCommand(stripped)).toMatchObject({
        status: 'FAILED',
        result: { code: 'COMMAND_SIGNATURE_INVALID' },
      });

      // a command the cloud really signed, for another device, replayed to this one
      const otherId = 'trusted-other';
      const otherSecret = await gw.insertDevice(otherId);
      const forOther = await send(otherId, 'update_workflow', {
        workflow_type: 'note',
        definition_yaml: noteYaml('77'),
      });
      const taken = (await (
        await gw.asDevice(otherId, otherSecret, `/api/v1/devices/${otherId}/commands`)
      ).json()) as { commands: Json[] };
      const captured = taken.commands.find((c) => c.command_id === forOther)!;
      expect(typeof captured.signature).toBe('string');
      let injected = false;
      proxy.rewrite = (commands) => {
        if (injected) return commands;
        injected = true;
        return [...commands, { ...captured, device_id: deviceId }];
      };
      const replayed = await outcome(log, forOther);
      expect(replayed.status).toBe('FAILED');
      expect(replayed.msg).toContain('COMMAND_SIGNATURE_INVALID');

      expect(await noteVersion(agent)).toBe('1');
      expect(
        log.entries.some((e) => e.event === 'edge.commands.executed' && e.status === 'EXECUTED'),
      ).toBe(false);
    } finally {
      proxy.rewrite = undefined;
      await stopAgent(agent);
    }
  }, 60_000);

  it('refuses a configuration whose definition was written into the database', async () => {
    const deviceId = 'trusted-config-row';
    const secret = await gw.insertDevice(deviceId);
    const res = await gw.asUser(gw.adminToken, `/api/v1/config/device/${deviceId}`, {
      method: 'PUT',
      body: JSON.stringify({ workflows: { note: { definition_yaml: noteYaml('5') } } }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(
      ((await res.json()) as { config: { workflows: { note: Json } } }).config.workflows.note,
    ).toHaveProperty('definition_signature');
    // the stored layer edited behind the API: another definition under the same signature
    const layer = await gw.handle.store.cloud
      .selectFrom('device_configs')
      .select(['config_id', 'config'])
      .where('scope', '=', 'device')
      .where('scope_key', '=', deviceId)
      .executeTakeFirstOrThrow();
    const config = (typeof layer.config === 'string' ? JSON.parse(layer.config) : layer.config) as {
      workflows: { note: Json };
    };
    config.workflows.note.definition_yaml = noteYaml('55');
    await gw.handle.store.cloud
      .updateTable('device_configs')
      .set({ config: JSON.stringify(config) })
      .where('config_id', '=', layer.config_id)
      .execute();

    const { agent, log } = await startAgent(deviceId, secret);
    const rejected = await log.next('edge.config.rejected');
    expect(rejected.code).toBe('DEFINITION_SIGNATURE_INVALID');
    expect(await noteVersion(agent)).toBe('1');
    await stopAgent(agent);
  }, 60_000);

  it('with a wrong provisioned key refuses the cloud configuration and commands; with the published key it takes them', async () => {
    const deviceId = 'trusted-wrong-key';
    const secret = await gw.insertDevice(deviceId);
    const publish = await gw.asUser(gw.adminToken, `/api/v1/config/device/${deviceId}`, {
      method: 'PUT',
      body: JSON.stringify({ workflows: { note: { definition_yaml: noteYaml('7') } } }),
    });
    expect(publish.status).toBe(200);

    const wrong = await startAgent(deviceId, secret, {
      cloudPublicKeyPem: ephemeralKeyring().publicKeyPem,
    });
    expect((await wrong.log.next('edge.config.rejected')).code).toBe('CONFIG_TAMPERED');
    const refused = await send(deviceId, 'DIAGNOSTIC', { checks: ['metrics'] });
    const refusedOutcome = await outcome(wrong.log, refused);
    expect(refusedOutcome.status).toBe('FAILED');
    expect(refusedOutcome.msg).toContain('COMMAND_SIGNATURE_INVALID');
    expect(await noteVersion(wrong.agent)).toBe('1');
    await stopAgent(wrong.agent);

    // the key as the cloud publishes it (what an installer downloads and provisions)
    const published = await (
      await gw.asDevice(deviceId, secret, '/api/v1/config/public-key')
    ).text();
    const right = await startAgent(deviceId, secret, {
      cloudPublicKeyPem: parseCloudPublicKey(published),
    });
    await right.log.next('edge.workflow.deployed');
    expect(await noteVersion(right.agent)).toBe('7');
    const taken = await send(deviceId, 'DIAGNOSTIC', { checks: ['metrics'] });
    expect((await outcome(right.log, taken)).status).toBe('EXECUTED');
    await stopAgent(right.agent);
  }, 60_000);

  it('pins blind only without a provisioned key (with a warning), and will not start when the provisioned key differs from the pinned one', async () => {
    const deviceId = 'trusted-pinned';
    const secret = await gw.insertDevice(deviceId);
    const blind = await startAgent(deviceId, secret, { provisioned: false });
    expect(
      blind.log.entries.filter((e) => e.event === 'edge.config.key_not_provisioned'),
    ).toHaveLength(1);
    await stopAgent(blind.agent);

    const log = agentLog();
    const agent = createEdgeAgent({
      deviceId,
      deviceSecret: secret,
      cloudUrl: proxy.url,
      dbPath: join(dir, `${deviceId}.db`),
      cardKey: Buffer.alloc(32, 9),
      stepsRoot: folder,
      workflowDirs: [folder],
      cloudPublicKeyPem: ephemeralKeyring().publicKeyPem,
      log: (entry) => log.push(entry),
    });
    const failure = await agent.start().then(
      () => undefined,
      (error: unknown) => error as { code?: string; message: string; cause?: { code?: string } },
    );
    expect(failure?.code).toBe('AGENT_START_FAILED');
    expect(failure?.cause?.code).toBe('CONFIG_PUBLIC_KEY_MISMATCH');
    expect(failure?.message).toContain('not the key this device pinned');
  }, 60_000);

  it('installs a definition held for approval and released: it was signed when the cloud accepted it', async () => {
    const deviceId = 'trusted-approved';
    const secret = await gw.insertDevice(deviceId);
    const { agent, log } = await startAgent(deviceId, secret);
    const operator = await gw.token('operator');
    const policy = await gw.asUser(gw.adminToken, '/api/v1/authorization-policies', {
      method: 'POST',
      body: JSON.stringify({
        name: 'workflow-updates-need-an-admin',
        command_type: 'UPDATE_WORKFLOW',
        requires_approval: true,
        min_approvals: 1,
        approver_roles: ['admin'],
        approval_ttl_seconds: 3600,
      }),
    });
    expect(policy.status, await policy.clone().text()).toBe(201);
    try {
      const held = await gw.asUser(operator, `/api/v1/devices/${deviceId}/commands`, {
        method: 'POST',
        body: JSON.stringify({
          command_type: 'update_workflow',
          payload: { workflow_type: 'note', definition_yaml: noteYaml('8') },
        }),
      });
      expect(held.status, await held.clone().text()).toBe(202);
      const approval = (await held.json()) as { approval_id: string };
      const approved = await gw.asUser(
        gw.adminToken,
        `/api/v1/approvals/${approval.approval_id}/approve`,
        { method: 'POST', body: '{}' },
      );
      expect(approved.status, await approved.clone().text()).toBe(200);
      const released = (await approved.json()) as { command?: { command_id: string } };
      const commandId = released.command!.command_id;
      expect((await outcome(log, commandId)).status).toBe('EXECUTED');
      expect(await noteVersion(agent)).toBe('8');
    } finally {
      const { policy_id } = (await policy.json()) as { policy_id: string };
      await gw.asUser(gw.adminToken, `/api/v1/authorization-policies/${policy_id}`, {
        method: 'DELETE',
      });
      await stopAgent(agent);
    }
  }, 60_000);

  it('saffron edge run refuses a plain-HTTP cloud URL to a host that is not loopback', async () => {
    const args = (url: string, ...more: string[]) => [
      'edge',
      'run',
      '--device-id',
      'trusted-cli',
      '--cloud-url',
      url,
      '--secret-file',
      join(dir, 'no-such-secret'),
      ...more,
    ];
    const refused = await runCli(args('http://192.0.2.10:8080'));
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('plain HTTP');
    expect(refused.stderr).toContain('--insecure-cloud-url');
    expect((await runCli(args('ftp://cloud.example.com'))).code).toBe(2);
    // past the URL check, these stop at the missing secret file instead
    for (const allowed of [
      args('http://192.0.2.10:8080', '--insecure-cloud-url'),
      args('https://cloud.example.com'),
      args('http://127.0.0.1:8080'),
      args('http://localhost:8080'),
      args('http://[::1]:8080'),
    ]) {
      const run = await runCli(allowed);
      expect(run.stderr).toContain('no-such-secret');
      expect(run.stderr).not.toContain('plain HTTP');
    }
    expect(isLoopbackHost('127.3.4.5')).toBe(true);
    expect(isLoopbackHost('128.0.0.1')).toBe(false);
    expect(isLoopbackHost('127.0.0.1.example.com')).toBe(false);

    const notAKey = join(dir, 'not-a-key.pem');
    writeFileSync(notAKey, 'hello\n');
    const secretFile = join(dir, 'cli-check-secret');
    writeFileSync(secretFile, 'a-device-secret-0123456789', { mode: 0o600 });
    const badKey = await runCli([
      ...args('https://cloud.example.com').slice(0, -2),
      '--secret-file',
      secretFile,
      '--cloud-public-key',
      notAKey,
    ]);
    expect(badKey.code).toBe(2);
    expect(badKey.stderr).toContain('--cloud-public-key');
  });

  it('saffron edge run with --cloud-public-key: the wrong key refuses the cloud, the published key takes its commands', async () => {
    const deviceId = 'trusted-cli-run';
    const secret = await gw.insertDevice(deviceId);
    const secretFile = join(dir, 'cli-secret');
    writeFileSync(secretFile, secret, { mode: 0o600 });
    const run = (keyFile: string, db: string) =>
      startSaffron([
        'edge',
        'run',
        '--device-id',
        deviceId,
        '--cloud-url',
        gw.url,
        '--secret-file',
        secretFile,
        '--db',
        join(dir, db),
        '--workflows',
        folder,
        '--local-port',
        '0',
        '--cloud-public-key',
        keyFile,
      ]);

    const wrongFile = join(dir, 'wrong.pem');
    writeFileSync(wrongFile, ephemeralKeyring().publicKeyPem);
    const wrong = await run(wrongFile, 'cli-wrong.db');
    try {
      const refused = await send(deviceId, 'DIAGNOSTIC', { checks: ['metrics'] });
      const row = await waitFor(async () => {
        const r = await cloudCommand(refused);
        return r.status === 'FAILED' || r.status === 'EXECUTED' ? r : undefined;
      });
      expect(row).toMatchObject({
        status: 'FAILED',
        result: { code: 'COMMAND_SIGNATURE_INVALID' },
      });
      await waitFor(() => (wrong.stderr().includes('CONFIG_TAMPERED') ? true : undefined));
    } finally {
      await stopSaffron(wrong);
    }

    const publishedFile = join(dir, 'cloud-key.json');
    writeFileSync(
      publishedFile,
      await (await gw.asDevice(deviceId, secret, '/api/v1/config/public-key')).text(),
    );
    const right = await run(publishedFile, 'cli-right.db');
    try {
      const taken = await send(deviceId, 'DIAGNOSTIC', { checks: ['metrics'] });
      const row = await waitFor(async () => {
        const r = await cloudCommand(taken);
        return r.status === 'FAILED' || r.status === 'EXECUTED' ? r : undefined;
      });
      expect(row.status).toBe('EXECUTED');
      expect(right.stderr()).not.toContain('key_not_provisioned');
    } finally {
      await stopSaffron(right);
    }
  }, 120_000);
});
