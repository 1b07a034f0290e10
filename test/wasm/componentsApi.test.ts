/**
 * Components through the HTTP API on every cloud dialect: binaries uploaded to the registry,
 * definitions registered, workflows started and read over real HTTP on loopback. The same
 * guest as a preview1 module and as a `wasi:cli/run` component produces the same workflow
 * state; a typed `execute` component runs as a step; a component changed on disk after its
 * registration is refused by hash; a spinning component fails its step at `timeout_ms`; and a
 * component importing sockets is refused at upload with nothing stored.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CLOUD_DIALECTS } from '../support/stores.js';
import { compileWatGuests, wasmFlow, type Guest } from '../support/wasmGuests.js';
import { commandComponent, socketComponent, typedComponent } from './componentGuests.js';

type Json = Record<string, unknown>;

let echoModule: Guest;
let echoComponent: Guest;
let otherComponent: Guest;
let loopComponent: Guest;
let typed: Guest;
let socket: Guest;

beforeAll(async () => {
  const guests = await compileWatGuests();
  echoModule = guests.echo;
  echoComponent = await commandComponent(guests.echo);
  otherComponent = await commandComponent(guests.both);
  loopComponent = await commandComponent(guests.loop);
  typed = await typedComponent();
  socket = await socketComponent();
}, 60_000);

for (const dialect of CLOUD_DIALECTS) {
  describe(`WASM components through the API on ${dialect.name}`, () => {
    let gw: TestGateway;
    let storageDir: string;
    const previousDir = process.env.WASM_STORAGE_DIR;

    beforeAll(async () => {
      // the gateway's own runtime resolves binaries under WASM_STORAGE_DIR
      storageDir = mkdtempSync(join(tmpdir(), 'saffron-components-'));
      process.env.WASM_STORAGE_DIR = storageDir;
      gw = await startTestGateway(dialect, { wasmStorageDir: storageDir });
    });
    afterAll(async () => {
      await gw?.close();
      if (previousDir === undefined) delete process.env.WASM_STORAGE_DIR;
      else process.env.WASM_STORAGE_DIR = previousDir;
      rmSync(storageDir, { recursive: true, force: true });
    });

    const post = (path: string, body: unknown) =>
      gw.asUser(gw.adminToken, path, { method: 'POST', body: JSON.stringify(body) });
    const upload = (guest: Guest, name: string) =>
      gw.asUser(gw.adminToken, `/api/v1/wasm-components?name=${name}&version_tag=1.0.0`, {
        method: 'POST',
        body: Buffer.from(guest.bytes),
        headers: { 'content-type': 'application/wasm' },
      });
    async function register(guest: Guest, name: string): Promise<void> {
      const res = await upload(guest, name);
      expect([200, 201], await res.clone().text()).toContain(res.status);
    }
    async function runFlow(yaml: string, type: string, data: Json): Promise<Json> {
      const defined = await post('/api/v1/workflow-definitions', { yaml });
      expect([200, 201], await defined.clone().text()).toContain(defined.status);
      const started = await post('/api/v1/workflows', { workflow_type: type, data });
      expect(started.status, await started.clone().text()).toBe(201);
      const { id } = (await started.json()) as { id: string };
      return (await (await gw.asUser(gw.adminToken, `/api/v1/workflows/${id}`)).json()) as Json;
    }
    async function stepError(workflow: Json): Promise<Json> {
      const audit = (await (
        await gw.asUser(gw.adminToken, `/api/v1/workflows/${String(workflow.id)}/audit`)
      ).json()) as { events: { event_type: string; data: Json }[] };
      const failed = audit.events.find((e) => e.event_type === 'STEP_FAILED');
      return failed?.data.error as Json;
    }

    it('runs the same guest as a module and as a component to the same workflow state', async () => {
      await register(echoModule, 'echo-module');
      await register(echoComponent, 'echo-component');
      const data = { amount_minor: 1250, card: { last4: '4242' }, tags: ['a', 'b'] };
      const asModule = await runFlow(wasmFlow('echo_module', echoModule.hash), 'echo_module', data);
      const asComponent = await runFlow(
        wasmFlow('echo_component', echoComponent.hash),
        'echo_component',
        data,
      );
      expect(asModule).toMatchObject({
        status: 'COMPLETED',
        state: { ...data, echo: data, guest: 'wat' },
      });
      expect(asComponent.status).toBe('COMPLETED');
      expect(asComponent.state).toEqual(asModule.state);
    });

    it('runs a typed execute component as a step', async () => {
      await register(typed, 'typed');
      const wf = await runFlow(wasmFlow('typed_step', typed.hash), 'typed_step', { amount: 3 });
      expect(wf).toMatchObject({
        status: 'COMPLETED',
        state: { amount: 3, typed: { amount: 3 } },
      });
    });

    it('refuses a component whose file changed after registration, by hash', async () => {
      const changed = otherComponent;
      await register(changed, 'to-change');
      const intact = await runFlow(
        wasmFlow('intact_component', changed.hash),
        'intact_component',
        {},
      );
      expect(intact).toMatchObject({ status: 'COMPLETED', state: { ran: '_start' } });
      const bytes = changed.bytes.slice();
      bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0x01;
      writeFileSync(join(storageDir, `${changed.hash}.wasm`), bytes);
      const wf = await runFlow(
        wasmFlow('changed_component', changed.hash),
        'changed_component',
        {},
      );
      expect(wf.status).toBe('FAILED');
      expect(await stepError(wf)).toMatchObject({ code: 'WASM_HASH_MISMATCH', step: 'score' });
    });

    it('fails the step of a spinning component at timeout_ms', async () => {
      await register(loopComponent, 'spinner');
      const wf = await runFlow(
        wasmFlow('spinning_component', loopComponent.hash, 'timeout_ms: 300'),
        'spinning_component',
        {},
      );
      expect(wf.status).toBe('FAILED');
      expect(await stepError(wf)).toMatchObject({ code: 'WASM_TIMEOUT' });
    });

    it('refuses a component importing sockets at upload, storing nothing', async () => {
      const before = readdirSync(storageDir).length;
      const res = await upload(socket, 'sockets');
      expect(res.status).toBe(422);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      const problem = (await res.json()) as Json;
      expect(problem.code).toBe('WASM_LINK_FAILED');
      expect(String(problem.detail ?? problem.message ?? problem.title)).toContain(
        'wasi:sockets/tcp-create-socket',
      );
      expect(readdirSync(storageDir)).toHaveLength(before);
    });
  });
}
