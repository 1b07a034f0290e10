/**
 * The chaos run's fleet before it starts paying: the POS example's fraud rules registered
 * (so terminals can fetch the WASM binary), the fleet configuration published, one TCP
 * proxy per device group (the demo's `startTcpProxy`, pointed at the group's gateway), every
 * terminal registered through the API — it gets its own id and secret — and one spec file
 * per agent host listing its terminals.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildFraudRules } from '../../bin/demo/fraudRules.js';
import { startTcpProxy, type TcpProxy } from '../../bin/demo/tcpProxy.js';
import type { AdminApi } from './adminApi.js';
import type { HostDevice, HostSpec } from './hostProtocol.js';

/** The POS example the terminals run. */
export const EXAMPLE_DIR = fileURLToPath(new URL('../../examples/pos/', import.meta.url));

/** A registered terminal. */
export interface ChaosDevice extends HostDevice {
  group: number;
  host: number;
}

/** The fleet, ready for its hosts. */
export interface ChaosFleet {
  devices: ChaosDevice[];
  /** One proxy per group; group `g` talks to gateway `g % gateways`. */
  proxies: TcpProxy[];
  /** Spec file of each host. */
  specFiles: string[];
  close(): Promise<void>;
}

/** What the fleet needs. */
export interface FleetSetup {
  api: AdminApi;
  gatewayUrls: readonly string[];
  dir: string;
  agents: number;
  hosts: number;
  groups: number;
  acquirerUrl: string;
  publicKeyPem: string;
  paymentGapMs: number;
}

/** The fleet configuration layer (version 1: loose offline limits; version 2 tightens them). */
export function fleetConfig(version: 1 | 2): Record<string, unknown> {
  return {
    config_poll_interval_seconds: 20,
    store_and_forward: {
      max_unsent_amount_minor: version === 1 ? 500_000 : 200_000,
      max_records: version === 1 ? 200 : 100,
      max_age_seconds: 86_400,
    },
  };
}

/** Publish a version of the fleet configuration. */
export async function publishFleetConfig(api: AdminApi, version: 1 | 2): Promise<void> {
  // a repeat publishes the same layer as one more version: harmless
  await api.call(
    '/api/v1/config/fleet/*',
    { method: 'PUT', body: fleetConfig(version) },
    { repeat: 'idempotent', deadlineMs: 240_000 },
  );
}

async function registerFraudRules(api: AdminApi): Promise<void> {
  const rules = await buildFraudRules(EXAMPLE_DIR);
  await api.call('/api/v1/wasm-components', {
    method: 'POST',
    body: {
      name: 'pos-fraud-rules',
      version_tag: '1.0.0',
      description: 'fraud rules of the POS example (chaos run)',
      binary_base64: Buffer.from(rules.v1.bytes).toString('base64'),
    },
  });
}

async function registerDevice(api: AdminApi, index: number, group: number) {
  const number = String(index + 1).padStart(4, '0');
  return api.call<{ device_id: string; device_secret: string }>('/api/v1/devices/register', {
    method: 'POST',
    body: {
      device_id: `chaos-${number}`,
      device_name: `Chaos terminal ${number}`,
      device_type: 'POS_TERMINAL',
      location: `group-${group}`,
      firmware_version: '1.0.0',
    },
  });
}

/** Register everything and write the host specs (see the module comment). */
export async function setUpFleet(setup: FleetSetup): Promise<ChaosFleet> {
  await registerFraudRules(setup.api);
  await publishFleetConfig(setup.api, 1);
  const proxies: TcpProxy[] = [];
  const close = async () => {
    await Promise.all(proxies.map((p) => p.close()));
  };
  try {
    for (let g = 0; g < setup.groups; g++) {
      const target = new URL(setup.gatewayUrls[g % setup.gatewayUrls.length]!);
      proxies.push(await startTcpProxy({ host: target.hostname, port: Number(target.port) }));
    }
    const devices: ChaosDevice[] = new Array<ChaosDevice>(setup.agents);
    let next = 0;
    const lane = async () => {
      while (next < setup.agents) {
        const i = next++;
        const group = i % setup.groups;
        const registered = await registerDevice(setup.api, i, group);
        devices[i] = {
          deviceId: registered.device_id,
          deviceSecret: registered.device_secret,
          dbFile: join(setup.dir, 'devices', `${registered.device_id}.db`),
          cardKeyHex: randomBytes(32).toString('hex'),
          cloudUrl: proxies[group]!.url,
          group,
          host: i % setup.hosts,
        };
      }
    };
    await Promise.all(Array.from({ length: 6 }, lane));
    const specFiles = Array.from({ length: setup.hosts }, (_, host) => {
      const spec: HostSpec = {
        host,
        devices: devices
          .filter((d) => d.host === host)
          .map(({ deviceId, deviceSecret, dbFile, cardKeyHex, cloudUrl }) => ({
            deviceId,
            deviceSecret,
            dbFile,
            cardKeyHex,
            cloudUrl,
          })),
        acquirerUrl: setup.acquirerUrl,
        exampleDir: EXAMPLE_DIR,
        publicKeyPem: setup.publicKeyPem,
        paymentGapMs: setup.paymentGapMs,
      };
      const file = join(setup.dir, `host-${host}.json`);
      writeFileSync(file, JSON.stringify(spec), { mode: 0o600 });
      return file;
    });
    return { devices, proxies, specFiles, close };
  } catch (error) {
    await close();
    throw error;
  }
}
