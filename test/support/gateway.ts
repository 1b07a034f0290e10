/**
 * A gateway on loopback for tests: a store of the dialect under test with migrations
 * applied, in-memory keys, an admin token, and `fetch` helpers for operators and devices.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createApiToken,
  createGateway,
  deviceAuthHeaders,
  ephemeralKeyring,
  type Gateway,
  type GatewayOptions,
  type Keyring,
  type UserRole,
} from '../../gateway/index.js';
import type { CloudStore } from '../../runtime/index.js';
import { openWithSchema, type TestDialect, type TestStore } from './stores.js';

/** A running test gateway. */
export interface TestGateway {
  url: string;
  gateway: Gateway;
  handle: TestStore<CloudStore>;
  keys: Keyring;
  adminToken: string;
  /** A token of `role`. */
  token(role: UserRole): Promise<string>;
  /** fetch with `Authorization: Bearer token`. */
  asUser(token: string, path: string, init?: RequestInit): Promise<Response>;
  /** fetch signed as device `deviceId` with `secret`. */
  asDevice(
    deviceId: string,
    secret: string,
    path: string,
    init?: RequestInit & { body?: string },
  ): Promise<Response>;
  /** Insert a device with a fresh secret directly (before the registration API exists). */
  insertDevice(deviceId: string): Promise<string>;
  /** Register a device through the API as the admin (type `pos` unless given); its secret. */
  registerDevice(deviceId: string, deviceType?: string): Promise<string>;
  close(): Promise<void>;
}

/** Start a gateway over a fresh store of `dialect`. */
export async function startTestGateway(
  dialect: TestDialect<CloudStore>,
  options: Partial<GatewayOptions> = {},
): Promise<TestGateway> {
  const handle = await openWithSchema(dialect);
  const keys = ephemeralKeyring();
  const gateway = await createGateway({
    store: handle.store,
    keys,
    wasmStorageDir: mkdtempSync(join(tmpdir(), 'saffron-wasm-')),
    // webhook receivers and fake upstreams of the tests listen on loopback
    outbound: { allowedPrivateNetworks: ['loopback'] },
    ...options,
  });
  const url = await gateway.listen(0);
  const admin = await createApiToken(handle.store, { name: 'test admin', role: 'admin' });
  const asUser = (token: string, path: string, init: RequestInit = {}) =>
    fetch(`${url}${path}`, {
      ...init,
      headers: {
        ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(init.headers as Record<string, string> | undefined),
        authorization: `Bearer ${token}`,
      },
    });
  return {
    url,
    gateway,
    handle,
    keys,
    adminToken: admin.token,
    token: async (role) =>
      (await createApiToken(handle.store, { name: `test ${role}`, role })).token,
    asUser,
    asDevice(deviceId, secret, path, init = {}) {
      const body = init.body ?? '';
      return fetch(`${url}${path}`, {
        ...init,
        headers: {
          ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...(init.headers as Record<string, string> | undefined),
          ...deviceAuthHeaders(deviceId, secret, {
            method: init.method ?? 'GET',
            pathWithQuery: path,
            body,
          }),
        },
      });
    },
    async insertDevice(deviceId) {
      const secret = randomBytes(32).toString('base64url');
      await handle.store.cloud
        .insertInto('edge_devices')
        .values({ device_id: deviceId, secret_ciphertext: keys.seal(secret) })
        .execute();
      return secret;
    },
    async registerDevice(deviceId, deviceType = 'pos') {
      const res = await asUser(admin.token, '/api/v1/devices/register', {
        method: 'POST',
        body: JSON.stringify({
          device_id: deviceId,
          device_name: deviceId,
          device_type: deviceType,
          location: 'lab',
        }),
      });
      if (res.status !== 201)
        throw new Error(`registering ${deviceId}: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { device_secret: string }).device_secret;
    },
    async close() {
      await gateway.close();
      await handle.close();
    },
  };
}
