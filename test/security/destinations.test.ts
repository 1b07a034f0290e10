/**
 * Outbound requests cannot be turned against the machine or the network behind it, and a
 * secret only goes where it is declared for. Against a real gateway (webhook registration
 * and delivery over HTTP) and a real engine (HTTP steps), with fake upstreams that record
 * every request they get, so "refused" means nothing reached them:
 *
 * - webhooks to 169.254.169.254, 127.0.0.1, 10.x, [::1] or localhost are refused at
 *   registration with a 400 problem;
 * - a webhook whose host name later resolves to loopback (DNS rebinding) is refused at
 *   connect time, and its delivery history reads the same for an open and a closed port;
 * - an HTTP step to a name resolving to 127.0.0.1 is refused at connect time, and the
 *   edge's local API port stays refused even when loopback is allowed;
 * - a secret sent to a host outside its list, or with no list, is refused before anything
 *   is sent, naming the secret and never its value; it is sent when the host is declared.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '../../actors/index.js';
import { registerConfigRoutes } from '../../gateway/config/routes.js';
import { webhookRoutes } from '../../gateway/webhooks/module.js';
import { DESTINATION_REFUSED } from '../../gateway/webhooks/dispatcher.js';
import type { WebhookDispatcher } from '../../gateway/webhooks/dispatcher.js';
import type { DestinationPolicyOptions } from '../../runtime/http/index.js';
import { envSecrets, mapSecrets, type SecretProvider } from '../../runtime/template/index.js';
import { definition, engineFor } from '../support/engine.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CLOUD_DIALECTS, openWithSchema, type TestStore } from '../support/stores.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.js';

const dialect = CLOUD_DIALECTS[0]!;
const TOKEN = 'tok_live_never_leaves_9f8e7d';

/** A fake upstream on loopback that records every request. */
interface Upstream {
  port: number;
  received: { url: string; headers: IncomingHttpHeaders }[];
  close(): Promise<void>;
}

async function startUpstream(): Promise<Upstream> {
  const received: Upstream['received'] = [];
  const server: Server = createServer((request, response) => {
    received.push({ url: request.url ?? '', headers: request.headers });
    request.resume();
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    received,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const httpStep = (url: string, headers = '{}') => `
workflow_type: outbound_call
automate_next: true
steps:
  - name: call
    type: HTTP
    http_config: { method: GET, url: "${url}", headers: ${headers}, retry_policy: { max_attempts: 1, delay_seconds: 1 } }
    output_key: answer
`;

describe('webhook destinations', () => {
  let gw: TestGateway;
  let dispatcher: WebhookDispatcher | undefined;
  const receivers: WebhookReceiver[] = [];
  const asAdmin = (path: string, init: RequestInit = {}) => gw.asUser(gw.adminToken, path, init);

  beforeAll(async () => {
    // no allowance: this gateway's operator keeps every private network closed
    gw = await startTestGateway(dialect, {
      outbound: {},
      routes: [
        registerConfigRoutes,
        webhookRoutes({ manual: true, timeoutMs: 5_000, onDispatcher: (d) => (dispatcher = d) }),
      ],
    });
  });
  afterAll(async () => {
    await gw.close();
    for (const receiver of receivers) await receiver.stop().catch(() => undefined);
  });

  it.each([
    'http://169.254.169.254/latest/meta-data/',
    'http://127.0.0.1:7420/api/v1/workflows',
    'http://10.0.0.7/hooks',
    'http://[::1]:8080/hooks',
    'http://[::ffff:127.0.0.1]/hooks',
    'http://100.64.1.1/hooks',
    'http://localhost:9000/hooks',
  ])('refuses %s at registration with a 400 problem', async (url) => {
    const res = await asAdmin('/api/v1/webhooks', {
      method: 'POST',
      body: JSON.stringify({ url, event_types: ['config.published'] }),
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(await res.json()).toMatchObject({ code: 'WEBHOOK_DESTINATION_REFUSED' });
  });

  it('refuses a host name that resolves to loopback at connect time, the same for open and closed ports', async () => {
    const open = await startWebhookReceiver();
    const closed = await startWebhookReceiver();
    receivers.push(open, closed);
    await closed.stop();
    const ids: string[] = [];
    for (const receiver of [open, closed]) {
      const public_ = receiver.url.replace('127.0.0.1', 'hooks.example.test');
      const res = await asAdmin('/api/v1/webhooks', {
        method: 'POST',
        body: JSON.stringify({ url: public_, event_types: ['config.published'] }),
      });
      expect(res.status).toBe(201);
      const { webhook_id } = (await res.json()) as { webhook_id: string };
      ids.push(webhook_id);
      // the name's DNS answer changes after registration (rebinding): it now points at loopback
      await gw.handle.store.cloud
        .updateTable('webhook_registrations')
        .set({ url: receiver.url.replace('127.0.0.1', 'localhost') })
        .where('webhook_id', '=', webhook_id)
        .execute();
    }
    const publish = await asAdmin('/api/v1/config/device_type/pos', {
      method: 'PUT',
      body: JSON.stringify({ sync_interval_seconds: 60 }),
    });
    expect(publish.status).toBe(200);
    expect(await dispatcher!.tick()).toBe(2);

    const errors: unknown[] = [];
    for (const id of ids) {
      const res = await asAdmin(`/api/v1/webhooks/${id}/deliveries`);
      const { deliveries } = (await res.json()) as {
        deliveries: { attempts: { status_code: number | null; error: string | null }[] }[];
      };
      expect(deliveries).toHaveLength(1);
      errors.push(deliveries[0]!.attempts);
    }
    // nothing reached the open port, and the history cannot tell the two ports apart
    expect(open.received).toHaveLength(0);
    expect(errors[0]).toEqual([{ ...(errors[0] as object[])[0], error: DESTINATION_REFUSED }]);
    const strip = (attempts: unknown) =>
      (attempts as Record<string, unknown>[]).map(({ status_code, error }) => ({
        status_code,
        error,
      }));
    expect(strip(errors[0])).toEqual(strip(errors[1]));
  });
});

describe('HTTP step destinations and secret binding', () => {
  let handle: TestStore;
  let upstream: Upstream;
  const runtimes: Runtime[] = [];
  const engine = (outbound: DestinationPolicyOptions, secrets: SecretProvider = mapSecrets({})) => {
    const runtime = engineFor(handle, { outbound, secrets });
    runtimes.push(runtime);
    return runtime;
  };
  const failure = async (runtime: Runtime, yaml: string) => {
    const wf = await runtime.start(await definition(yaml));
    expect(wf.status).toBe('FAILED');
    const failed = (await runtime.audit(wf.id)).find((e) => e.eventType === 'STEP_FAILED');
    return (failed?.eventData as { error: { code: string; message: string } }).error;
  };

  beforeAll(async () => {
    handle = await openWithSchema(dialect);
    upstream = await startUpstream();
  });
  afterAll(async () => {
    for (const runtime of runtimes) await runtime.close();
    await upstream.close();
    await handle.close();
  });

  it('refuses a host name resolving to 127.0.0.1 at connect time when nothing is allowed', async () => {
    const error = await failure(engine({}), httpStep(`http://localhost:${upstream.port}/internal`));
    expect(error.code).toBe('HTTP_DESTINATION_REFUSED');
    expect(error.message).toContain('loopback');
    expect(upstream.received).toHaveLength(0);
  });

  it('refuses the local API port even when loopback is allowed', async () => {
    const error = await failure(
      engine({ allowedPrivateNetworks: ['loopback'], refusedLocalPorts: [upstream.port] }),
      httpStep(`http://127.0.0.1:${upstream.port}/api/v1/workflows`),
    );
    expect(error.code).toBe('HTTP_DESTINATION_REFUSED');
    expect(upstream.received).toHaveLength(0);
  });

  it('refuses a secret sent to a host outside its list, naming the secret and not its value', async () => {
    const secrets = mapSecrets({ ACQ_KEY: { value: TOKEN, hosts: ['acquirer.example.com'] } });
    const error = await failure(
      engine({ allowedPrivateNetworks: ['loopback'] }, secrets),
      httpStep(
        `http://127.0.0.1:${upstream.port}/steal`,
        '{ Authorization: "Bearer {{ secrets.ACQ_KEY }}" }',
      ),
    );
    expect(error.code).toBe('SECRET_DESTINATION_REFUSED');
    expect(error.message).toContain('ACQ_KEY');
    expect(error.message).toContain(`127.0.0.1:${upstream.port}`);
    expect(JSON.stringify(error)).not.toContain(TOKEN);
    expect(upstream.received).toHaveLength(0);
  });

  it('refuses a secret with no declared hosts and says how to declare them', async () => {
    const error = await failure(
      engine(
        { allowedPrivateNetworks: ['loopback'] },
        envSecrets({ SAFFRON_SECRET_ACQ_KEY: TOKEN }),
      ),
      httpStep(`http://127.0.0.1:${upstream.port}/x?key={{ secrets.ACQ_KEY }}`),
    );
    expect(error.code).toBe('SECRET_DESTINATION_REFUSED');
    expect(error.message).toContain('SAFFRON_SECRET_ACQ_KEY_HOSTS');
    expect(JSON.stringify(error)).not.toContain(TOKEN);
    expect(upstream.received).toHaveLength(0);
  });

  it('sends the secret when the host is declared for it', async () => {
    const secrets = envSecrets({
      SAFFRON_SECRET_ACQ_KEY: TOKEN,
      SAFFRON_SECRET_ACQ_KEY_HOSTS: `acquirer.example.com, 127.0.0.1:${upstream.port}`,
    });
    const runtime = engine({ allowedPrivateNetworks: ['loopback'] }, secrets);
    const wf = await runtime.start(
      await definition(
        httpStep(
          `http://127.0.0.1:${upstream.port}/authorize`,
          '{ Authorization: "Bearer {{ secrets.ACQ_KEY }}" }',
        ),
      ),
    );
    expect(wf.status).toBe('COMPLETED');
    expect(upstream.received.map((r) => r.headers.authorization)).toEqual([`Bearer ${TOKEN}`]);
    expect(JSON.stringify(wf.state)).not.toContain(TOKEN);
  });
});
