/** Migration 0007_command_risk_levels: risk levels of command versions and of the authorization policies that match them. Frozen: never edit a shipped migration; add a new one. */
import type { Migration } from '../runtime/store/migrate/migration.js';

export const migration: Migration = {
  id: '0007_command_risk_levels',
  description: 'risk levels of command versions and of the authorization policies that match them',
  statements: [
    `ALTER TABLE authorization_policies ADD COLUMN risk_level VARCHAR(20) CONSTRAINT authorization_policies_risk_level_check CHECK (risk_level IN ('LOW', 'MEDIUM', 'HIGH', 'CRITICAL'))`,
    `ALTER TABLE command_versions ADD COLUMN risk_level VARCHAR(20) CONSTRAINT command_versions_risk_level_check CHECK (risk_level IN ('LOW', 'MEDIUM', 'HIGH', 'CRITICAL'))`,
  ],
};
