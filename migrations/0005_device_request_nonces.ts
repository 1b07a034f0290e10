/** Migration 0005_device_request_nonces: shared replay cache of device request nonces. Frozen: never edit a shipped migration; add a new one. */
import type { Migration } from '../runtime/store/migrate/migration.js';

export const migration: Migration = {
  id: '0005_device_request_nonces',
  description: 'shared replay cache of device request nonces',
  statements: [
    `CREATE TABLE device_request_nonces (
  device_id VARCHAR(100) NOT NULL,
  nonce VARCHAR(128) NOT NULL,
  expires_at TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (device_id, nonce)
)`,
    `CREATE INDEX idx_device_request_nonces_expires ON device_request_nonces (expires_at)`,
  ],
};
