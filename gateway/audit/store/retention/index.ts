/** Audit retention policies and their purge (cloud tier). */
export {
  EVENT_TYPED_RETENTION_TABLES,
  RETENTION_TABLES,
  retentionCutoff,
  type RetentionPolicyRecord,
  type RetentionTable,
} from './retentionPolicy.js';
export { insertRetentionPolicy, type NewRetentionPolicy } from './insertRetentionPolicy.js';
export { getRetentionPolicy } from './getRetentionPolicy.js';
export { listRetentionPolicies } from './listRetentionPolicies.js';
export { updateRetentionPolicy, type RetentionPolicyChanges } from './updateRetentionPolicy.js';
export { deleteRetentionPolicy } from './deleteRetentionPolicy.js';
export { enforceRetentionPolicy, type RetentionPurge } from './enforceRetentionPolicy.js';
