/**
 * The cloud the device parts of the system benchmark talk to: a fresh schema, migrated, with
 * `devices` registered in bulk (secrets derived from a per-run key and sealed under the
 * gateway's master key, as registration stores them), and one gateway process
 * (bench/gateway/server.ts: `createGateway` over PostgreSQL) serving it. Registration is
 * set-up, not measured, so it goes straight to the table.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadKeyring } from '../../gateway/index.js';
import { migrations } from '../../migrations/index.js';
import { asCloud, migrate, openStore } from '../../runtime/store/index.js';
import { startChild, type Child } from '../gateway/child.js';
import { deviceIdOf, deviceSecretOf } from '../gateway/fleet.js';
import type { Schemas } from '../queue/schemas.js';
import type { ServerSpec } from '../gateway/server.js';

const SERVER = fileURLToPath(new URL('../gateway/server.ts', import.meta.url));
/** Devices inserted per statement. */
const REGISTER_CHUNK = 1000;

/** A running cloud. */
export interface Cloud {
  schema: string;
  /** The gateway's base URL (http://127.0.0.1:port). */
  url: string;
  gateway: Child;
  /** The key device secrets derive from (bench/gateway/fleet.ts). */
  benchKey: string;
  /** Stop the gateway and drop the schema. */
  stop(): Promise<void>;
}

/** Start a cloud with devices 0…`devices`-1 registered and a gateway pool of `poolSize`. */
export async function startCloud(options: {
  url: string;
  schemas: Schemas;
  devices: number;
  poolSize: number;
  live: Set<() => void>;
}): Promise<Cloud> {
  const { url, schemas, devices, poolSize, live } = options;
  const schema = await schemas.create();
  const keyDir = mkdtempSync(join(tmpdir(), 'saffron-bench-system-keys-'));
  const signingKeyPem = generateKeyPairSync('ed25519')
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString();
  const masterKeyHex = randomBytes(32).toString('hex');
  const keys = loadKeyring(keyDir, {
    SAFFRON_SIGNING_KEY: signingKeyPem,
    SAFFRON_MASTER_KEY: masterKeyHex,
  });
  const benchKey = randomBytes(32).toString('base64url');
  let gateway: Child | undefined;
  const kill = () => gateway?.kill();
  live.add(kill);
  const stop = async () => {
    kill();
    live.delete(kill);
    rmSync(keyDir, { recursive: true, force: true });
    await schemas.drop(schema);
  };
  try {
    const store = asCloud(await openStore(url, { postgres: { schema, maxConnections: 2 } }));
    try {
      await migrate(store, migrations);
      for (let from = 0; from < devices; from += REGISTER_CHUNK) {
        const rows = Array.from({ length: Math.min(REGISTER_CHUNK, devices - from) }, (_, i) => {
          const deviceId = deviceIdOf(from + i);
          return {
            device_id: deviceId,
            device_name: `Bench terminal ${from + i}`,
            device_type: 'POS',
            location: `store-${(from + i) % 97}`,
            secret_ciphertext: keys.seal(deviceSecretOf(benchKey, deviceId)),
          };
        });
        await store.cloud.insertInto('edge_devices').values(rows).execute();
      }
    } finally {
      await store.close();
    }
    const spec: ServerSpec = {
      kind: 'saffron',
      databaseUrl: url,
      schema,
      signingKeyPem,
      masterKeyHex,
      poolSize,
    };
    gateway = await startChild(SERVER, spec);
    return { schema, url: gateway.ready.url as string, gateway, benchKey, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
