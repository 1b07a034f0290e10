/**
 * Config polls on the 304 path: devices that already hold their current configuration ask
 * `GET /api/v1/devices/{id}/config` with `If-None-Match`, closed loop with a fixed number in
 * flight, for a fixed time. Every request is device-signed with a fresh nonce — the
 * gateway checks the signature, remembers the nonce (a row in the shared replay cache),
 * reads the device, its layers and assignments, and compares ETags. The baseline is a bare
 * fastify route that compares an ETag and answers 304, polled by the same client doing the
 * same signing work.
 */
import { deviceAuthHeaders } from '../../runtime/crypto/index.js';
import { deviceIdOf, deviceSecretOf } from './fleet.js';
import { keepAlive, send } from './http.js';

/** What a polling run found. */
export interface PollResult {
  perS: number;
  notModified: number;
  other: number;
  firstOther: string | null;
}

const configPath = (deviceId: string) => `/api/v1/devices/${deviceId}/config`;

/** The current ETag of each device's configuration on the gateway at `url`. */
export async function currentEtags(
  url: string,
  benchKey: string,
  devices: readonly number[],
): Promise<Map<string, string>> {
  const agent = keepAlive(8);
  const etags = new Map<string, string>();
  try {
    for (const n of devices) {
      const deviceId = deviceIdOf(n);
      const path = configPath(deviceId);
      const answer = await send(agent, url, path, {
        headers: deviceAuthHeaders(deviceId, deviceSecretOf(benchKey, deviceId), {
          method: 'GET',
          pathWithQuery: path,
          body: '',
        }),
      });
      const etag = answer.headers.etag;
      if (answer.status !== 200 || typeof etag !== 'string')
        throw new Error(`config of ${deviceId}: ${answer.status} ${answer.body.slice(0, 200)}`);
      etags.set(deviceId, etag);
    }
  } finally {
    agent.destroy();
  }
  return etags;
}

/** Poll the server at `url` for `seconds` with `inFlight` requests at a time. */
export async function poll(options: {
  url: string;
  benchKey: string;
  devices: readonly number[];
  etagOf: (deviceId: string) => string;
  seconds: number;
  inFlight: number;
}): Promise<PollResult> {
  const { url, benchKey, devices, etagOf, seconds, inFlight } = options;
  const agent = keepAlive(inFlight);
  const secrets = new Map(
    devices.map((n) => [deviceIdOf(n), deviceSecretOf(benchKey, deviceIdOf(n))]),
  );
  const ids = [...secrets.keys()];
  let notModified = 0;
  let other = 0;
  let firstOther: string | null = null;
  let next = 0;
  const started = performance.now();
  const end = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (performance.now() < end) {
        const deviceId = ids[next++ % ids.length]!;
        const path = configPath(deviceId);
        const answer = await send(agent, url, path, {
          headers: {
            'if-none-match': etagOf(deviceId),
            ...deviceAuthHeaders(deviceId, secrets.get(deviceId)!, {
              method: 'GET',
              pathWithQuery: path,
              body: '',
            }),
          },
        });
        if (answer.status === 304) notModified++;
        else {
          other++;
          firstOther ??= `${answer.status} ${answer.body.slice(0, 200)}`;
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();
  return { perS: notModified / elapsed, notModified, other, firstOther };
}
