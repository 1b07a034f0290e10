/**
 * The chaos run's cloud: two `saffron cloud serve --no-worker` gateway processes and two
 * `saffron worker` processes on one PostgreSQL database, all real children started through
 * the CLI launcher. Gateways listen on fixed ports chosen at the start, so a gateway killed
 * by the fault schedule comes back where its device groups' proxies point. Both gateways
 * share the signing keys and the WASM storage folder, as nodes of one deployment do.
 *
 * Workers beat every second and take over a workflow whose driver has been silent for 8 s:
 * the defaults (30 s / 90 s) are right for production but would make a killed gateway's
 * half-driven workflow wait longer than the whole CI run.
 */
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { managedProcess, type ManagedProcess, type UnplannedExit } from './managedProcess.js';

const LAUNCHER = fileURLToPath(new URL('../../bin/saffron.js', import.meta.url));

/** Where the cloud keeps its files and which database it uses. */
export interface CloudSetup {
  dbUrl: string;
  /** The run's folder: keys, WASM storage and logs go below it. */
  dir: string;
  stepsDir: string;
  workflowsDir: string;
  onUnplannedExit: (exit: UnplannedExit) => void;
}

/** The running cloud processes. */
export interface ChaosCloud {
  gateways: ManagedProcess[];
  workers: ManagedProcess[];
  /** `http://127.0.0.1:<port>` of each gateway (fixed for the run). */
  gatewayUrls: string[];
  /** The gateways' signing keys folder (SAFFRON_KEYS_DIR). */
  keysDir: string;
  /**
   * Start the first gateway (it applies the migrations), then the second gateway, both
   * workers and `alongside` (work that needs the schema) at the same time.
   */
  start<T>(alongside: () => Promise<T>): Promise<T>;
  /** SIGTERM everything. */
  stop(): Promise<void>;
}

/** A port free on 127.0.0.1 right now. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** Create the cloud's processes (not started). */
export async function createChaosCloud(setup: CloudSetup): Promise<ChaosCloud> {
  const keysDir = join(setup.dir, 'keys');
  const env = {
    ...process.env,
    SAFFRON_KEYS_DIR: keysDir,
    WASM_STORAGE_DIR: join(setup.dir, 'wasm'),
    // the run's webhook receiver listens on loopback
    SAFFRON_HTTP_ALLOW_PRIVATE: 'loopback',
  };
  const common = [
    '--db',
    setup.dbUrl,
    '--steps',
    setup.stepsDir,
    '--workflows',
    setup.workflowsDir,
  ];
  const ports = [await freePort(), await freePort()];
  const gateways = ports.map((port, i) =>
    managedProcess({
      name: `gateway-${i}`,
      args: [
        LAUNCHER,
        'cloud',
        'serve',
        ...common,
        '--port',
        String(port),
        '--no-worker',
        '--log-level',
        'warn',
      ],
      env,
      logFile: join(setup.dir, 'logs', `gateway-${i}.log`),
      isReady: (line) => line.startsWith('{"listening"'),
      onUnplannedExit: setup.onUnplannedExit,
    }),
  );
  const workers = [0, 1].map((i) =>
    managedProcess({
      name: `worker-${i}`,
      args: [
        LAUNCHER,
        'worker',
        ...common,
        '--poll-ms',
        '500',
        '--heartbeat-ms',
        '1000',
        '--zombie-after-ms',
        '8000',
      ],
      env,
      logFile: join(setup.dir, 'logs', `worker-${i}.log`),
      isReady: (line) => line.startsWith('worker: serving tasks'),
      onUnplannedExit: setup.onUnplannedExit,
    }),
  );
  const all = [...gateways, ...workers];
  const stop = async () => {
    await Promise.all(all.map((p) => p.stop(20_000)));
  };
  return {
    gateways,
    workers,
    gatewayUrls: ports.map((p) => `http://127.0.0.1:${p}`),
    keysDir,
    async start<T>(alongside: () => Promise<T>): Promise<T> {
      await gateways[0]!.start();
      const [value] = await Promise.all([
        alongside(),
        gateways[1]!.start(),
        ...workers.map((w) => w.start()),
      ]);
      return value;
    },
    stop,
  };
}
