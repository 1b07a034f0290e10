/**
 * The demo's control plane: the same pieces `saffron cloud serve` runs (store with its
 * migrations, engine with a worker loop, gateway with the dashboard), in this process, on
 * embedded PGlite in the demo's folder, with an admin token for the dashboard and the API and
 * an operator token for the rollouts (which the admin then approves: high-risk commands by a
 * non-admin are held for a second person's approval out of the box).
 */
import { createServer } from 'node:net';
import { join } from 'node:path';
import { createRuntime, createWorkflowRegistry } from '../../actors/index.js';
import { createApiToken, createGateway, loadKeyring } from '../../gateway/index.js';
import { envSecrets, type CloudStore } from '../../runtime/index.js';
import { openCloudStore } from '../engineStore.js';
import type { CliIo } from '../io.js';

/** A running demo cloud. */
export interface DemoCloud {
  /** `http://127.0.0.1:<port>` */
  url: string;
  store: CloudStore;
  /** The PEM of the key that signs configuration (provisioned to the simulated devices). */
  publicKeyPem: string;
  /** An admin API token (dashboard sign-in and the demo's own calls). */
  adminToken: string;
  /** fetch `path` as the admin; JSON bodies get their content type. */
  api(path: string, init?: RequestInit): Promise<Response>;
  /** fetch `path` as the operator who asks for the rollouts; JSON bodies get their content type. */
  operatorApi(path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

/** `port` when it is free on 127.0.0.1, else 0 (the system picks one). */
async function freePort(port: number): Promise<number> {
  if (port === 0) return 0;
  const probe = createServer();
  const free = await new Promise<boolean>((resolve) => {
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (free) await new Promise((resolve) => probe.close(resolve));
  return free ? port : 0;
}

/**
 * Start the cloud over `pglite:<dir>/cloud` on `port` (a taken port falls back to a free one,
 * said on stderr), with step modules under `stepsRoot`.
 */
export async function startDemoCloud(
  dir: string,
  port: number,
  stepsRoot: string,
  io: CliIo,
): Promise<DemoCloud> {
  const quiet: CliIo = { ...io, stdout: io.stderr };
  const store = await openCloudStore({ db: `pglite:${join(dir, 'cloud')}` }, quiet);
  try {
    const runtime = createRuntime({
      store,
      stepsRoot,
      registry: createWorkflowRegistry(),
      secrets: envSecrets(io.env),
      runTasks: true,
    });
    const keys = loadKeyring(join(dir, 'keys'), {});
    const gateway = await createGateway({
      store,
      keys,
      runtime,
      stepsRoot,
      wasmStorageDir: join(dir, 'wasm'),
      logger: { level: 'warn' },
    });
    const worker = runtime.serve({});
    const listenPort = await freePort(port);
    const url = await gateway.listen(listenPort, '127.0.0.1');
    if (listenPort !== port) io.stderr.write(`demo: port ${port} is taken, using ${url}\n`);
    const admin = await createApiToken(store, { name: 'demo operator', role: 'admin' });
    const operator = await createApiToken(store, {
      name: 'demo release manager',
      role: 'operator',
    });
    const as =
      (token: string) =>
      (path: string, init: RequestInit = {}) =>
        fetch(`${url}${path}`, {
          ...init,
          headers: {
            ...(typeof init.body === 'string' ? { 'content-type': 'application/json' } : {}),
            ...(init.headers as Record<string, string> | undefined),
            authorization: `Bearer ${token}`,
          },
        });
    return {
      url,
      store,
      publicKeyPem: keys.publicKeyPem,
      adminToken: admin.token,
      api: as(admin.token),
      operatorApi: as(operator.token),
      async close() {
        await gateway.close();
        await worker.stop();
        await runtime.close();
        await store.close();
      },
    };
  } catch (error) {
    await store.close();
    throw error;
  }
}

/** The JSON body of a successful response, or an error naming the call and the problem. */
export async function expectOk<T>(what: string, response: Promise<Response>): Promise<T> {
  const res = await response;
  const text = await res.text();
  if (!res.ok) throw new Error(`demo: ${what} failed with ${res.status}: ${text.slice(0, 500)}`);
  return (text === '' ? {} : JSON.parse(text)) as T;
}
