/** Migration 0004_registration_keys: device registration keys. Frozen: never edit a shipped migration; add a new one. */
import type { Migration } from '../runtime/store/migrate/migration.js';

export const migration: Migration = {
  id: '0004_registration_keys',
  description: 'device registration keys',
  statements: [
    `CREATE TABLE registration_keys (
  key_id UUID PRIMARY KEY,
  name VARCHAR(200) NOT NULL,
  key_hash VARCHAR(64) NOT NULL UNIQUE,
  key_prefix VARCHAR(16),
  device_type VARCHAR(50),
  max_uses INTEGER,
  use_count INTEGER NOT NULL DEFAULT 0,
  created_by VARCHAR(200),
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  last_used_at TIMESTAMPTZ,
  expires_at TIMESTAMPTZ,
  revoked_at TIMESTAMPTZ
)`,
  ],
};
