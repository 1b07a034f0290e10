/** Migration 0011_default_command_policy: policies may exempt roles from approval, and two shipped default policies hold high-risk commands and configuration pushes by non-admins for a second person's approval. Frozen: never edit a shipped migration; add a new one. */
import type { Migration } from '../runtime/store/migrate/migration.js';

const DEFAULT_POLICY_COLUMNS =
  'policy_id, name, command_type, device_filter, risk_level, required_role, requires_approval, min_approvals, approver_roles, approval_ttl_seconds, exempt_roles, enabled';

export const migration: Migration = {
  id: '0011_default_command_policy',
  description:
    'policies may exempt roles from approval; default policies hold high-risk commands and configuration pushes by non-admins for approval',
  statements: [
    `ALTER TABLE authorization_policies ADD COLUMN exempt_roles JSONB NOT NULL DEFAULT '[]'::jsonb`,
    `INSERT INTO authorization_policies (${DEFAULT_POLICY_COLUMNS}) VALUES ('5affd0f1-0000-4000-8000-000000000001', 'default-high-risk-commands', NULL, '{}'::jsonb, 'HIGH', NULL, true, 1, '["operator"]'::jsonb, 86400, '["admin"]'::jsonb, true) ON CONFLICT (name) DO NOTHING`,
    `INSERT INTO authorization_policies (${DEFAULT_POLICY_COLUMNS}) VALUES ('5affd0f1-0000-4000-8000-000000000002', 'default-configuration-pushes', 'UPDATE_CONFIG', '{}'::jsonb, NULL, NULL, true, 1, '["operator"]'::jsonb, 86400, '["admin"]'::jsonb, true) ON CONFLICT (name) DO NOTHING`,
  ],
};
