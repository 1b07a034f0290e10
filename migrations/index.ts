/**
 * Every cloud migration, in order. Migrations are frozen once shipped: a schema change is a
 * new numbered file here plus the matching change to the schema model in runtime/schema, and
 * the drift test (fresh database + all migrations = the model) proves the two agree.
 */
import type { Migration } from '../runtime/store/migrate/migration.js';
import { migration as m0001 } from './0001_initial.js';
import { migration as m0002 } from './0002_wasm_component_description.js';
import { migration as m0003 } from './0003_workflow_definitions.js';
import { migration as m0004 } from './0004_registration_keys.js';
import { migration as m0005 } from './0005_device_request_nonces.js';
import { migration as m0006 } from './0006_webhook_order_audit_search.js';
import { migration as m0007 } from './0007_command_risk_levels.js';
import { migration as m0008 } from './0008_task_claim_indexes.js';
import { migration as m0009 } from './0009_metrics_name_index.js';
import { migration as m0010 } from './0010_command_type_check.js';
import { migration as m0011 } from './0011_default_command_policy.js';
import { migration as m0012 } from './0012_audit_search_pending_list.js';
import { migration as m0013 } from './0013_open_command_indexes.js';

/** All migrations, oldest first. */
export const migrations: readonly Migration[] = [
  m0001,
  m0002,
  m0003,
  m0004,
  m0005,
  m0006,
  m0007,
  m0008,
  m0009,
  m0010,
  m0011,
  m0012,
  m0013,
];
