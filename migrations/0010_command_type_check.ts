/** Migration 0010_command_type_check: device_commands.command_type is a closed set (the spec types and their lower-case edge aliases), checked like the other closed sets. Frozen: never edit a shipped migration; add a new one. */
import type { Migration } from '../runtime/store/migrate/migration.js';

export const migration: Migration = {
  id: '0010_command_type_check',
  description:
    'device_commands.command_type is a closed set (the spec types and their lower-case edge aliases), checked like the other closed sets',
  statements: [
    `ALTER TABLE device_commands ADD CONSTRAINT device_commands_command_type_check CHECK (command_type IN ('UPDATE_CONFIG', 'SYNC_TRANSACTIONS', 'UPDATE_WORKFLOW', 'REBOOT', 'DIAGNOSTIC', 'SYNC_WASM', 'update_workflow', 'sync_wasm'))`,
  ],
};
