/**
 * What an agent host (agentHost.ts) and the chaos run say to each other: the host's spec
 * file (its devices, with the secrets registration returned, and where the cloud is), the
 * JSON lines it prints on stdout, and the lines it reads on stdin. One module, so both
 * sides parse the same shapes.
 */
import type { PaymentCounts } from '../../bin/demo/demoStats.js';

/** One device a host runs. */
export interface HostDevice {
  deviceId: string;
  deviceSecret: string;
  /** Its SQLite file (kept across host restarts). */
  dbFile: string;
  /** AES-256-GCM key of its card payloads, hex (kept across restarts too). */
  cardKeyHex: string;
  /** Its group's proxy. */
  cloudUrl: string;
}

/** The spec file a host is started with. */
export interface HostSpec {
  host: number;
  devices: HostDevice[];
  acquirerUrl: string;
  /** The POS example folder (workflows and step modules). */
  exampleDir: string;
  /** The cloud's config-signing public key, provisioned like a real terminal's. */
  publicKeyPem: string;
  paymentGapMs: number;
}

/** Lines a host prints (one JSON object per line). */
export type HostMessage =
  | { t: 'ready'; host: number; agents: number; startMs: number }
  | { t: 'counts'; host: number; counts: PaymentCounts }
  | {
      t: 'status';
      host: number;
      agents: number;
      online: number;
      /** SAF records still pending on the host's devices. */
      pending: number;
    }
  | {
      t: 'command';
      host: number;
      deviceId: string;
      commandId: string;
      commandType: string;
      status: string;
    }
  | { t: 'agent_error'; host: number; deviceId: string; event: string; msg: string }
  | { t: 'stopped'; host: number; counts: PaymentCounts };

/** Lines a host reads on stdin. */
export type HostCommand = { cmd: 'stop_payments' };

/** Parse a line the host printed; undefined for anything that is not a message. */
export function parseHostMessage(line: string): HostMessage | undefined {
  if (!line.startsWith('{"t":')) return undefined;
  try {
    return JSON.parse(line) as HostMessage;
  } catch {
    return undefined;
  }
}
