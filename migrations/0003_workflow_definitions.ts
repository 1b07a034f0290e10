/** Migration 0003_workflow_definitions: workflow definitions registered through the API. Frozen: never edit a shipped migration; add a new one. */
import type { Migration } from '../runtime/store/migrate/migration.js';

export const migration: Migration = {
  id: '0003_workflow_definitions',
  description: 'workflow definitions registered through the API',
  statements: [
    `CREATE TABLE workflow_definitions (
  id UUID PRIMARY KEY,
  workflow_type VARCHAR(200) NOT NULL,
  workflow_version VARCHAR(50),
  definition_hash VARCHAR(64) NOT NULL,
  source_yaml TEXT NOT NULL,
  created_by VARCHAR(200),
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  UNIQUE (workflow_type, definition_hash)
)`,
    `CREATE INDEX idx_workflow_definitions_type ON workflow_definitions (workflow_type, created_at DESC)`,
  ],
};
