/**
 * The agent's signed channel to the cloud (docs/architecture.md#security): every request carries
 * `Authorization: Device id:sig`, a fresh timestamp and nonce, signed over method, path with
 * query, timestamp, nonce and the body's SHA-256. The clock is injected so a test can move
 * it; the fetch is injected so a test can cut the network without touching the agent.
 * The socket's upgrade is signed without a nonce, and the client answers the gateway's
 * challenge on it with a proof (runtime/crypto/socketProof.ts), so the secret stays here.
 */
import WebSocket from 'ws';
import { deviceAuthHeaders, deviceUpgradeHeaders, signSocketProof } from '../../runtime/index.js';

/** Who the agent is and where its cloud lives. */
export interface CloudClientOptions {
  /** Base URL of the cloud, e.g. `http://127.0.0.1:8080` (no trailing `/api/v1`). */
  baseUrl: string;
  deviceId: string;
  /** The device secret returned once at registration. */
  secret: string;
  /** Defaults to the global fetch. */
  fetch?: typeof fetch;
  /** Defaults to the wall clock. */
  now?: () => Date;
}

/** A request the client signs. */
export interface CloudRequest {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path with query, starting with `/api/v1/`. */
  path: string;
  /** JSON-serialisable body (sent as `application/json`). */
  json?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** Signed HTTP and WebSocket access to the cloud for one device. */
export interface CloudClient {
  readonly deviceId: string;
  readonly baseUrl: string;
  /** Send a signed request; network failures reject, HTTP errors resolve. */
  request(request: CloudRequest): Promise<Response>;
  /**
   * Open the device's command socket with a signed upgrade without a nonce (not yet
   * connected); the gateway's first frame is a challenge to answer with {@link proveSocket}.
   */
  openSocket(): WebSocket;
  /** The proof for a socket's `challenge`, sent in the `hello`. */
  proveSocket(challenge: string): string;
}

/** A {@link CloudClient} for `options.deviceId`. */
export function createCloudClient(options: CloudClientOptions): CloudClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const doFetch = options.fetch ?? fetch;
  const now = options.now ?? (() => new Date());
  const sign = (method: string, pathWithQuery: string, body: string) =>
    deviceAuthHeaders(options.deviceId, options.secret, {
      method,
      pathWithQuery,
      body,
      timestamp: now().toISOString(),
    });
  return {
    deviceId: options.deviceId,
    baseUrl,
    request({ method = 'GET', path, json, headers = {}, signal }) {
      const body = json === undefined ? '' : JSON.stringify(json);
      return doFetch(`${baseUrl}${path}`, {
        method,
        ...(json === undefined ? {} : { body }),
        ...(signal ? { signal } : {}),
        headers: {
          ...(json === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
          ...sign(method, path, body),
        },
      });
    },
    openSocket() {
      const path = `/api/v1/devices/${encodeURIComponent(options.deviceId)}/ws`;
      return new WebSocket(`${baseUrl.replace(/^http/, 'ws')}${path}`, {
        headers: deviceUpgradeHeaders(options.deviceId, options.secret, {
          pathWithQuery: path,
          timestamp: now().toISOString(),
        }),
      });
    },
    proveSocket: (challenge) => signSocketProof(options.secret, options.deviceId, challenge),
  };
}
