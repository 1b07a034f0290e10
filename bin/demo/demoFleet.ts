/**
 * The demo's simulated terminals: each is registered with the cloud through the API (it gets
 * its own id and secret), runs a real edge agent over its own SQLite file, and reaches the
 * cloud through the TCP proxy of its group, so cutting a group's proxy takes those terminals
 * offline the way a dead uplink would.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createEdgeAgent, type EdgeAgent } from '../../edge/index.js';
import {
  mapSecrets,
  type BoundSecret,
  type DestinationPolicyOptions,
} from '../../runtime/index.js';
import { expectOk, type DemoCloud } from './demoCloud.js';
import { startTcpProxy, type TcpProxy } from './tcpProxy.js';

/** One simulated terminal. */
export interface DemoDevice {
  deviceId: string;
  group: number;
  dbFile: string;
  agent: EdgeAgent;
}

/** The simulated fleet. */
export interface DemoFleet {
  devices: DemoDevice[];
  /** One proxy per group of devices. */
  groups: TcpProxy[];
  /** Stop every agent, then every proxy. */
  stop(): Promise<void>;
}

/** How the fleet is set up. */
export interface DemoFleetOptions {
  count: number;
  groups: number;
  /** Folder of the agents' SQLite files. */
  dir: string;
  /** Installed workflows and their step modules. */
  workflowDir: string;
  /** Secrets of the workflows (`{{ secrets.NAME }}`). */
  secrets: Record<string, string | BoundSecret>;
  /** Where the terminals' HTTP steps may connect (the demo's acquirer is on loopback). */
  outbound?: DestinationPolicyOptions;
  /** Told about each device that is up (for progress). */
  onStarted?: (done: number) => void;
  /** Where the agents' warnings and errors go. */
  log?: (line: string) => void;
}

/** Register and start `options.count` terminals. */
export async function startDemoFleet(
  cloud: DemoCloud,
  options: DemoFleetOptions,
): Promise<DemoFleet> {
  const target = new URL(cloud.url);
  const groups: TcpProxy[] = [];
  const devices: DemoDevice[] = [];
  const stop = async () => {
    await Promise.all(devices.map((d) => d.agent.stop()));
    await Promise.all(groups.map((g) => g.close()));
  };
  try {
    for (let g = 0; g < options.groups; g++)
      groups.push(await startTcpProxy({ host: target.hostname, port: Number(target.port) }));
    for (let i = 0; i < options.count; i++) {
      const group = i % options.groups;
      const number = String(i + 1).padStart(3, '0');
      const registered = await expectOk<{ device_id: string; device_secret: string }>(
        `registering terminal ${number}`,
        cloud.api('/api/v1/devices/register', {
          method: 'POST',
          body: JSON.stringify({
            device_id: `pos-${number}`,
            device_name: `Terminal ${number}`,
            device_type: 'POS_TERMINAL',
            location: `store-${String.fromCharCode(65 + group)}`,
            firmware_version: '1.0.0',
          }),
        }),
      );
      const dbFile = join(options.dir, `${registered.device_id}.db`);
      const agent = createEdgeAgent({
        deviceId: registered.device_id,
        deviceSecret: registered.device_secret,
        cloudUrl: groups[group]!.url,
        dbPath: dbFile,
        cardKey: randomBytes(32),
        stepsRoot: options.workflowDir,
        workflowDirs: [options.workflowDir],
        cloudPublicKeyPem: cloud.publicKeyPem,
        secrets: mapSecrets(options.secrets),
        ...(options.outbound ? { outbound: options.outbound } : {}),
        // a demo minute should show what a terminal does over hours
        maxBackoffMs: 3_000,
        syncJitterMs: 1_500,
        metricsIntervalMs: 5_000,
        commandPollIntervalMs: 2_000,
        log: (entry) => {
          if (entry.level === 'error')
            options.log?.(`${registered.device_id}: ${entry.event}: ${entry.msg}`);
        },
      });
      devices.push({ deviceId: registered.device_id, group, dbFile, agent });
      await agent.start();
      options.onStarted?.(devices.length);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { devices, groups, stop };
}
