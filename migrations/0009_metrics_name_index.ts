/** Migration 0009_metrics_name_index: drop the workflow_metrics index no query reads. Frozen: never edit a shipped migration; add a new one. */
import type { Migration } from '../runtime/store/migrate/migration.js';

export const migration: Migration = {
  id: '0009_metrics_name_index',
  description:
    'drop idx_workflow_metrics_name (metric_name, recorded_at): no query reads workflow_metrics by name, and every step commit paid for the index entry of each metric row',
  statements: [`DROP INDEX idx_workflow_metrics_name`],
};
