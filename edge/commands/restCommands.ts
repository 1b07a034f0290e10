/**
 * The REST side of the command channel, for while the socket is down (spec: "Edge devices
 * push transactions and pull commands"): `GET /api/v1/devices/{id}/commands` hands out the
 * device's due commands (and marks them DELIVERED), `POST …/commands/{command_id}/ack`
 * reports one.
 */
import type { CloudClient } from '../cloud/cloudClient.js';
import type { CommandAck } from './commandLedger.js';
import type { AckReply } from './socketLink.js';

/** Statuses of an ack request that mean the cloud will never take it. */
const FINAL_STATUSES = new Set([404, 409, 422]);

const devicePath = (cloud: CloudClient) =>
  `/api/v1/devices/${encodeURIComponent(cloud.deviceId)}/commands`;

/** Take the device's due commands (raw; the caller parses each). Rejects on any failure. */
export async function pollCommands(
  cloud: CloudClient,
  options: { limit?: number; signal?: AbortSignal } = {},
): Promise<unknown[]> {
  const response = await cloud.request({
    path: `${devicePath(cloud)}?limit=${options.limit ?? 50}`,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const text = await response.text();
  if (!response.ok)
    throw new Error(`the cloud answered ${response.status} to the poll: ${text.slice(0, 300)}`);
  const body = JSON.parse(text) as { commands?: unknown };
  if (!Array.isArray(body.commands)) throw new Error('the poll answer has no commands list');
  return body.commands as unknown[];
}

/** Send `ack` over REST. Resolves with the cloud's verdict; rejects when it cannot be had. */
export async function ackOverRest(
  cloud: CloudClient,
  ack: CommandAck,
  options: { signal?: AbortSignal } = {},
): Promise<AckReply> {
  const response = await cloud.request({
    method: 'POST',
    path: `${devicePath(cloud)}/${encodeURIComponent(ack.commandId)}/ack`,
    json: {
      status: ack.status,
      ...(ack.result !== undefined ? { result: ack.result } : {}),
      ...(ack.error !== undefined ? { error: ack.error } : {}),
    },
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const text = await response.text();
  if (response.ok) return { kind: 'acked', repeated: false };
  if (FINAL_STATUSES.has(response.status)) {
    let code = `HTTP_${response.status}`;
    try {
      const problem = JSON.parse(text) as { code?: unknown };
      if (typeof problem.code === 'string') code = problem.code;
    } catch {
      // not a problem document
    }
    return { kind: 'refused', code, message: text.slice(0, 500) };
  }
  throw new Error(`the cloud answered ${response.status} to the ack: ${text.slice(0, 300)}`);
}
